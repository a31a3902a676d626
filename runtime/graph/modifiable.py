"""``command_graph``: a modifiable graph for one (context, device), built explicitly.

The explicit API adds nodes (``add``: a command-group function, a
``dynamic_command_group`` or nothing) and edges (``make_edge``, refused when
it would close a cycle); record & replay is its ``Recorder`` half
(``recording.py``).  ``finalize`` makes an ``executable_command_graph``."""
from __future__ import annotations

import threading
import weakref

from ...device_configs.aspects import Aspect
from ..commands import Command, KernelCommand
from ..device import context as Context, default_context, default_device
from ..errors import errc, exception
from ..events import event
from ..queue import queue
from ..validate import register_kind, require_bool, require_device, require_instance
from .allocations import allocate, zero_blocks
from .dot import write_dot
from .dynamic import NOT_KERNEL_PARAMETER, dynamic_command_group
from .executable import executable_command_graph
from .nodes import graph_state, invalid, node, node_type, as_nodes, topological
from .recording import Recorder

__all__ = ["command_graph"]


class command_graph(Recorder):  # noqa: N801
    """A modifiable command graph for one (context, device)."""

    state = graph_state.modifiable

    def __init__(self, context_or_queue=None, device=None, *, no_cycle_check: bool = False,
                 assume_buffer_outlives_graph: bool = False):
        if isinstance(context_or_queue, queue):
            self.device, self.context = context_or_queue.device, context_or_queue.context
        elif isinstance(context_or_queue, Context):
            require_device(device, "command_graph device", optional=True)
            self.context = context_or_queue
            self.device = default_device(device) if device is not None else self.context.devices[0]
            if self.device not in self.context.devices:
                raise invalid(f"the device {self.device.name} is not associated with the graph's context "
                              f"({self.context!r})")
        elif context_or_queue is None:
            self.device = default_device(require_device(device, "command_graph device", optional=True))
            self.context = default_context(self.device)
        else:
            raise invalid(f"command_graph takes a queue or a context (and a device), got "
                          f"{type(context_or_queue).__name__}")
        no_cycle_check = require_bool(no_cycle_check, "command_graph no_cycle_check")
        assume_buffer_outlives_graph = require_bool(assume_buffer_outlives_graph,
                                                    "command_graph assume_buffer_outlives_graph")
        if not (self.device.has(Aspect.ext_oneapi_graph) or self.device.has(Aspect.ext_oneapi_limited_graph)):
            raise invalid(f"device {self.device.name} does not support command graphs (it reports neither "
                          f"aspect::ext_oneapi_graph nor aspect::ext_oneapi_limited_graph)")
        self.no_cycle_check = no_cycle_check
        self.assume_buffer_outlives_graph = assume_buffer_outlives_graph
        self.nodes: list[node] = []
        self._queue = queue(self.device, context=self.context)
        self._pool: list = []                 # graph-owned blocks (async_malloc)
        self._zero_init: set[int] = set()     # ids of the blocks zeroed at each finalize
        self._live_exec = None
        self._init_recording()
        self._lock = threading.RLock()

    # -- building -------------------------------------------------------------------

    def _evaluate(self, cgf):
        """Run ``cgf`` on a handler of this graph: ``(command, handler)``.  Nothing is
        registered yet (``_register``), so a refused node leaves no trace."""
        if cgf is not None and not callable(cgf):
            raise invalid(f"a command-group function must be callable, got {type(cgf).__name__}")
        h = self._queue._handler_class(self._queue, self)
        if cgf is not None:
            cgf(h)
        cmd = h.command
        if h.registrations and not isinstance(cmd, KernelCommand):
            raise invalid(NOT_KERNEL_PARAMETER)
        h.close(self)
        return cmd, h

    def _register(self, cmd, h) -> None:
        """Register the dynamic parameters of a command that joins the graph (any
        graph: the newer revision ties a dynamic parameter to none)."""
        for index, param in h.registrations:
            param._register(cmd, index)

    def add(self, cgf=None, depends_on=(), depends_on_all_leaves: bool = False) -> node:
        """Add a node: a command group function, a ``dynamic_command_group``, or nothing (an empty node).
        ``depends_on``: a node or a list of nodes (a single node is taken as SYCL's
        ``property::node::depends_on(node)`` takes one)."""
        depends_on = as_nodes(depends_on, "add depends_on")
        depends_on_all_leaves = require_bool(depends_on_all_leaves, "add depends_on_all_leaves")
        with self._lock:
            self._check_not_recording('Explicit API "Add()" function cannot be called when a queue is currently '
                                      'recording commands to a graph.')
            if isinstance(cgf, dynamic_command_group):
                if cgf.graph is not self:
                    raise invalid("Graph does not match the graph associated with dynamic command-group.")
                commands, deps = cgf._evaluate()
                cmd, h = commands[cgf.active], None
                deps = list(deps)
            else:
                cmd, h = self._evaluate(cgf)
                if cmd is not None and cmd.kind == "ext_oneapi_barrier":
                    raise invalid("The sycl_ext_oneapi_enqueue_barrier feature is not available with SYCL Graph "
                                  "Explicit API. Please use empty nodes instead.")
                deps = [self._node_of(d) for d in h.deps]
            deps += list(depends_on)
            if depends_on_all_leaves:
                deps += [n for n in self.nodes if not n.succs]
            n = self._new_node(cmd, deps)
            if isinstance(cgf, dynamic_command_group):
                cgf.nodes.append(n)
            else:
                self._register(cmd, h)
            return n

    def _node_of(self, e: event) -> node:
        n = getattr(e, "_node", None)
        if n is None or n.graph is not self:
            raise invalid("Event dependency from handler::depends_on does not correspond to a node within the graph")
        return n

    def _new_node(self, cmd: Command | None, deps) -> node:
        kind = node_type[cmd.kind] if cmd is not None else node_type.empty
        deps = list(dict.fromkeys(deps))
        for d in deps:
            if not isinstance(d, node) or d.graph is not self:
                raise invalid("a dependency must be a node of the same graph")
        n = node(self, kind, cmd)
        if kind == node_type.async_malloc:
            cmd.allocation = allocate(self, cmd.request, deps)
        self.nodes.append(n)
        for d in deps:
            d.succs.append(n)
            n.preds.append(d)
        return n

    def make_edge(self, src: node, dest: node) -> None:
        require_instance(src, node, "make_edge src")
        require_instance(dest, node, "make_edge dest")
        with self._lock:
            self._check_not_recording("make_edge() cannot be called when a queue is currently recording commands "
                                      "to a graph.")
            if src is dest:
                raise invalid("make_edge() cannot be called when Src and Dest are the same.")
            if src.graph is not self:
                raise invalid("Src must be a node inside the graph.")
            if dest.graph is not self:
                raise invalid("Dest must be a node inside the graph.")
            if dest in src.succs:
                return
            src.succs.append(dest)
            dest.preds.append(src)
            if not self.no_cycle_check and topological(self.nodes) is None:
                src.succs.remove(dest)
                dest.preds.remove(src)
                raise invalid("Command graphs cannot contain cycles.")

    # -- queries and output ---------------------------------------------------------

    def get_nodes(self) -> list[node]:
        return list(self.nodes)

    def get_root_nodes(self) -> list[node]:
        return [n for n in self.nodes if not n.preds]

    def print_graph(self, path: str, verbose: bool = False) -> None:
        """Write the graph as Graphviz DOT (the path must end in ``.dot``)."""
        write_dot(self.nodes, path, verbose)

    def finalize(self, *, updatable: bool = False, enable_profiling: bool = False) -> executable_command_graph:
        updatable = require_bool(updatable, "finalize updatable")
        enable_profiling = require_bool(enable_profiling, "finalize enable_profiling")
        if self._pool and self._live_exec is not None and self._live_exec() is not None:
            raise invalid("Graphs containing allocations can only have a single executable graph alive at any "
                          "one time.")
        if updatable and not self.device.has(Aspect.ext_oneapi_graph):
            raise exception(errc.feature_not_supported, f"Device does not support Command Graph update "
                                                        f"({self.device.name} lacks aspect::ext_oneapi_graph)")
        ex = executable_command_graph(self, updatable, enable_profiling)
        zero_blocks(self)
        if self._pool:
            self._live_exec = weakref.ref(ex)
        return ex

    def __del__(self):
        self._close_recordings()


register_kind("command_graph", command_graph)
