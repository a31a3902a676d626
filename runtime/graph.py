"""``sycl_ext_oneapi_graph``: command graphs, built explicitly or recorded from queues.

A modifiable ``command_graph`` holds nodes (a command each) and edges.  The
explicit API adds nodes with ``add`` and ``make_edge``.  Record & replay
(``begin_recording``) turns a queue's submissions into nodes instead of running
them: edges come from event dependencies and from the implicit chain of an
in-order queue.

``finalize`` makes an ``executable_command_graph``: a snapshot of the nodes in
topological order, with each kernel resolved to its native launcher and its
arguments packed once.  Runs of small kernels are handed to one native entry
point (``native.run_plan``) that calls their launchers back to back, so
replaying them costs no Python per node.  Large kernels still spread over
the cores, and host tasks and copies run in between in plan order.  Submissions
of one executable graph are serialised.

Errors are the spec's, with DPC++'s messages, as
``exception(errc.invalid)``; what a device cannot do is ``feature_not_supported``.
Where the English text and its newer Japanese revision differ, the newer one is
followed for what it adds (memory pools, ``get_required_mem_size`` on the
executable graph, host-task update, ``feature_not_supported`` at finalize).
Every refused operation leaves the graph, its queues and memory as they were.
"""
from __future__ import annotations

import contextlib
import ctypes
import enum
import itertools
import threading
import weakref

import numpy as np

from ..device_configs.aspects import Aspect
from . import memory
from .commands import Command, DynamicValue, KernelCommand, check_memory
from .device import context as Context, default_context, default_device
from .errors import errc, exception
from .validate import (described, require_bool, require_callable, require_device, require_instance, require_names,
                       require_path, require_queue)
from .events import event
from .handler import handler
from .memory_pool import memory_pool
from .native import PlanEntry, run_plan
from . import assertions
from .reductions import has_reductions
from .queue import queue
from .ranges import as_range, nd_range

__all__ = ["node_type", "node", "command_graph", "executable_command_graph", "dynamic_parameter",
           "dynamic_command_group", "async_malloc", "async_malloc_from_pool", "async_free", "graph_state",
           "GRAPH_PROPERTIES"]

#: the graph properties (``property::graph::*``), by name: what ``begin_recording`` accepts
GRAPH_PROPERTIES = ("no_cycle_check", "assume_buffer_outlives_graph", "assume_data_outlives_buffer", "updatable",
                    "enable_profiling")


def async_malloc(q: queue, size: int, kind: str = "device", dtype=None):
    """``async_malloc(queue, alloc kind, size)``: in a recording queue, an allocation node."""
    require_queue(q, "async_malloc queue")
    box = []
    q.submit(lambda h: box.append(h.async_malloc(size, kind, np.uint8 if dtype is None else dtype)))
    return box[0]


def async_malloc_from_pool(q: queue, size: int, pool: memory_pool, dtype=None):
    """``async_malloc_from_pool(queue, size, pool)``: in a recording queue, an allocation node."""
    require_queue(q, "async_malloc_from_pool queue")
    box = []
    q.submit(lambda h: box.append(h.async_malloc_from_pool(size, pool, np.uint8 if dtype is None else dtype)))
    return box[0]


def async_free(q: queue, ptr) -> None:
    require_queue(q, "async_free queue")
    q.submit(lambda h: h.async_free(ptr))


class graph_state(enum.Enum):  # noqa: N801
    """``graph_state``: a ``command_graph`` is modifiable, an ``executable_command_graph`` executable."""
    modifiable = 0
    executable = 1


class node_type(enum.Enum):  # noqa: N801
    empty = 0
    subgraph = 1
    kernel = 2
    memcpy = 3
    memset = 4
    memfill = 5
    prefetch = 6
    memadvise = 7
    ext_oneapi_barrier = 8
    host_task = 9
    native_command = 10
    async_malloc = 11
    async_free = 12


_UPDATABLE = (node_type.kernel, node_type.host_task, node_type.ext_oneapi_barrier, node_type.empty)
#: what whole-graph update takes: the update table of the newer revision (host tasks included)
_WHOLE_UPDATABLE = _UPDATABLE
_NOT_KERNEL_PARAMETER = ("dynamic_parameters cannot be registered with graph nodes which do not represent kernel "
                         "executions")
_DOT_TYPE = {node_type.empty: "None", node_type.kernel: "CGExecKernel", node_type.memcpy: "CGCopyUSM",
             node_type.memset: "CGFillUSM", node_type.memfill: "CGFillUSM", node_type.prefetch: "CGPrefetchUSM",
             node_type.memadvise: "CGAdviseUSM", node_type.host_task: "CGHostTask",
             node_type.ext_oneapi_barrier: "CGBarrier", node_type.subgraph: "CGExecCommandBuffer"}


def _invalid(message: str) -> exception:
    return exception(errc.invalid, message)


class node:  # noqa: N801
    _ids = itertools.count()

    def __init__(self, graph: "command_graph", kind: node_type, command: Command | None = None):
        self.graph, self.kind, self.command = graph, kind, command
        self.id = next(node._ids)
        self.preds: list[node] = []
        self.succs: list[node] = []

    def get_type(self) -> node_type:
        return self.kind

    def get_predecessors(self) -> list["node"]:
        return list(self.preds)

    def get_successors(self) -> list["node"]:
        return list(self.succs)

    @staticmethod
    def get_node_from_event(e: event) -> "node":
        if getattr(e, "_node", None) is None:
            raise _invalid("the event is not associated with a command graph node")
        return e._node

    def _kernel_command(self, what: str) -> KernelCommand:
        if self.kind != node_type.kernel or not isinstance(self.command, KernelCommand):
            raise _invalid(f"Cannot update {what} of nodes which are not kernel nodes")
        return self.command

    def update_range(self, r) -> None:
        cmd = self._kernel_command("execution range")
        new = as_range(r)
        if isinstance(cmd.range, nd_range) or isinstance(new, nd_range):
            raise _invalid("Cannot update the nd_range of a node with a range, or a range with an nd_range "
                           "(update_nd_range)")
        old = cmd.range if cmd.range is not None else None
        if old is not None and len(as_range(old)) != len(new):
            raise _invalid("Cannot update execution range of a node with an execution range of different dimensions")
        cmd.set_range(new)

    def update_nd_range(self, r) -> None:
        cmd = self._kernel_command("execution range")
        if not isinstance(cmd.range, nd_range) or not isinstance(r, nd_range):
            raise _invalid("Cannot update the range of a node with an nd_range, or an nd_range with a range")
        if len(cmd.range.global_range) != len(r.global_range):
            raise _invalid("Cannot update execution range of a node with an execution range of different dimensions")
        cmd.set_range(r)

    def __repr__(self):
        return f"<node {self.id} {self.kind.name}>"


class dynamic_parameter(DynamicValue):  # noqa: N801
    """A kernel argument that an executable graph can update without a rebuild."""

    graph_only = True

    def __init__(self, graph: "command_graph", value):
        require_instance(graph, command_graph, "dynamic_parameter graph")
        self.graph, self.value = graph, value
        self._commands: list[KernelCommand] = []

    def _register(self, cmd: KernelCommand, graph) -> None:
        if graph is not self.graph:
            raise _invalid("a dynamic_parameter can only be used in nodes of the graph it was created for")
        self._commands.append(cmd)

    def resolve(self):
        return self.value

    def update(self, value) -> None:
        """New value for every node using it; executable graphs see it after ``update(node)``."""
        old = self.value
        self.value = value
        try:
            for cmd in self._commands:
                cmd.slots = cmd.pack()
        except exception:
            self.value = old
            for cmd in self._commands:
                cmd.slots = cmd.pack()
            raise


class dynamic_command_group:  # noqa: N801
    """Several command groups for one node; ``set_active_index`` picks the one that runs.

    The command-group functions run when the group is added to its graph
    (``command_graph.add``), once, in index order, as the spec says; later nodes
    sharing the group share those commands.  They must all be kernels or all host
    tasks, and declare the same dependencies."""

    def __init__(self, graph: "command_graph", cgfs):
        require_instance(graph, command_graph, "dynamic_command_group graph")
        if not isinstance(cgfs, (list, tuple)):
            raise _invalid(f"dynamic_command_group takes a list of command-group functions, got {described(cgfs)}")
        cgfs = [require_callable(f, f"dynamic_command_group cgfs[{i}]") for i, f in enumerate(cgfs)]
        if not cgfs:
            raise _invalid("Dynamic command-group cannot be created with an empty CGF list.")
        self.graph = graph
        self._cgfs = cgfs
        self.commands: list | None = None       # evaluated by the first add
        self._deps: list[node] = []
        self.active = 0
        self.nodes: list[node] = []

    def _evaluate(self) -> tuple[list, list]:
        """(commands, dependency nodes) of the group, evaluating its functions the first time."""
        if self.commands is not None:
            return self.commands, self._deps
        results = [self.graph._evaluate(cgf) for cgf in self._cgfs]
        commands = [cmd for cmd, _ in results]
        kinds = {c.kind if c is not None else "empty" for c in commands}
        if not kinds <= {"kernel", "host_task"}:
            raise _invalid("The only types of command-groups that can be used in dynamic command-groups are "
                           "kernels and host-tasks.")
        if len(kinds) > 1:
            raise _invalid("Command-groups in a dynamic command-group must all be the same type.")
        deps = [[self.graph._node_of(e) for e in h.deps] for _, h in results]
        if any(set(d) != set(deps[0]) for d in deps[1:]):
            raise _invalid("The command-group functions of a dynamic command-group must have the same dependencies: "
                           "choosing another one would change the graph's topology.")
        for cmd, h in results:
            self.graph._register(cmd, h)
        self.commands, self._deps = commands, list(dict.fromkeys(deps[0]))
        return self.commands, self._deps

    def get_active_index(self) -> int:
        return self.active

    def set_active_index(self, index: int) -> None:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(self._cgfs):
            raise _invalid("Index is out of range.")
        self.active = index
        for n in self.nodes:
            n.command = self.commands[index]


class _Recording:
    """One queue's recording into a graph, from ``begin_recording`` (or a transitive
    start) to ``end_recording``.  Events recorded in it carry it (``event._scope``):
    once it is closed they cannot be used by other queues' commands, and the
    queues they come from are never put back into recording through them."""

    __slots__ = ("_graph", "properties", "_open")

    def __init__(self, graph: "command_graph", properties: dict):
        self._graph = weakref.ref(graph)
        self.properties = dict(properties)
        self._open = True

    @property
    def graph(self):
        return self._graph()

    @property
    def open(self) -> bool:
        return self._open and self._graph() is not None

    def close(self) -> None:
        self._open = False


def _nodes(value, what: str) -> list:
    """A node or a list or tuple of nodes (``None``: none), as a list."""
    if value is None:
        return []
    if isinstance(value, node):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(n, node) for n in value):
        return list(value)
    raise _invalid(f"{what} must be a node or a list of nodes, got {described(value)}")


def _queues(value, what: str) -> list:
    """A queue or a list or tuple of queues, as a list."""
    if isinstance(value, (list, tuple)):
        return [require_queue(q, f"{what}[{i}]") for i, q in enumerate(value)]
    return [require_queue(value, what)]


def _property_names(property_list, properties: dict) -> dict:
    """Graph properties given as names, a name -> value mapping and keywords, checked."""
    given = dict(properties)
    if isinstance(property_list, dict):
        given.update(property_list)
    else:
        for name in require_names(property_list, "graph property list"):
            given[name] = True
    for name in given:
        if name not in GRAPH_PROPERTIES:
            raise _invalid(f"{name!r:.60} is not a command-graph property ({', '.join(GRAPH_PROPERTIES)})")
        given[name] = require_bool(given[name], f"graph property {name}")
    return given


class command_graph:  # noqa: N801
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
                raise _invalid(f"the device {self.device.name} is not associated with the graph's context "
                               f"({self.context!r})")
        elif context_or_queue is None:
            self.device = default_device(require_device(device, "command_graph device", optional=True))
            self.context = default_context(self.device)
        else:
            raise _invalid(f"command_graph takes a queue or a context (and a device), got "
                           f"{type(context_or_queue).__name__}")
        no_cycle_check = require_bool(no_cycle_check, "command_graph no_cycle_check")
        assume_buffer_outlives_graph = require_bool(assume_buffer_outlives_graph,
                                                    "command_graph assume_buffer_outlives_graph")
        if not (self.device.has(Aspect.ext_oneapi_graph) or self.device.has(Aspect.ext_oneapi_limited_graph)):
            raise _invalid(f"device {self.device.name} does not support command graphs (it reports neither "
                           f"aspect::ext_oneapi_graph nor aspect::ext_oneapi_limited_graph)")
        self.no_cycle_check = no_cycle_check
        self.assume_buffer_outlives_graph = assume_buffer_outlives_graph
        self.nodes: list[node] = []
        self._queue = queue(self.device, context=self.context)
        self._pool: list = []                 # graph-owned blocks (async_malloc)
        self._zero_init: set[int] = set()     # ids of the blocks zeroed at each finalize
        self._live_exec = None
        self._recording_queues: weakref.WeakSet = weakref.WeakSet()
        self._sessions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._last_on_queue: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._barrier_on_queue: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.RLock()

    # -- building -------------------------------------------------------------------

    def _check_not_recording(self, what: str) -> None:
        if any(q._recording is self for q in self._recording_queues):
            raise _invalid(what)

    def _evaluate(self, cgf):
        """Run ``cgf`` on a handler of this graph: ``(command, handler)``.  Nothing is
        registered yet (``_register``), so a refused node leaves no trace."""
        if cgf is not None and not callable(cgf):
            raise _invalid(f"a command-group function must be callable, got {type(cgf).__name__}")
        h = self._queue._handler_class(self._queue, self)
        if cgf is not None:
            cgf(h)
        cmd = h.command
        dynamic = [a for a in _dynamic_arguments(cmd, h)]
        if dynamic and not isinstance(cmd, KernelCommand):
            raise _invalid(_NOT_KERNEL_PARAMETER)
        for a in dynamic:
            if a.graph is not self:
                raise _invalid("a dynamic_parameter can only be used in nodes of the graph it was created for")
        return cmd, h

    def _register(self, cmd, h) -> None:
        """Register the dynamic parameters of a command that joins the graph."""
        for a in _dynamic_arguments(cmd, h):
            a._register(cmd, self)

    def add(self, cgf=None, depends_on=(), depends_on_all_leaves: bool = False) -> node:
        """Add a node: a command group function, a ``dynamic_command_group``, or nothing (an empty node).
        ``depends_on``: a node or a list of nodes (a single node is taken as SYCL's
        ``property::node::depends_on(node)`` takes one)."""
        depends_on = _nodes(depends_on, "add depends_on")
        depends_on_all_leaves = require_bool(depends_on_all_leaves, "add depends_on_all_leaves")
        with self._lock:
            self._check_not_recording('Explicit API "Add()" function cannot be called when a queue is currently '
                                      'recording commands to a graph.')
            if isinstance(cgf, dynamic_command_group):
                if cgf.graph is not self:
                    raise _invalid("Graph does not match the graph associated with dynamic command-group.")
                commands, deps = cgf._evaluate()
                cmd, h = commands[cgf.active], None
                deps = list(deps)
            else:
                cmd, h = self._evaluate(cgf)
                if cmd is not None and cmd.kind == "ext_oneapi_barrier":
                    raise _invalid("The sycl_ext_oneapi_enqueue_barrier feature is not available with SYCL Graph "
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
            raise _invalid("Event dependency from handler::depends_on does not correspond to a node within the graph")
        return n

    def _new_node(self, cmd: Command | None, deps) -> node:
        kind = node_type[cmd.kind] if cmd is not None else node_type.empty
        deps = list(dict.fromkeys(deps))
        for d in deps:
            if not isinstance(d, node) or d.graph is not self:
                raise _invalid("a dependency must be a node of the same graph")
        n = node(self, kind, cmd)
        if kind == node_type.async_malloc:
            cmd.allocation = self._allocate(cmd.request, deps)
        self.nodes.append(n)
        for d in deps:
            d.succs.append(n)
            n.preds.append(d)
        return n

    def _allocate(self, request, deps):
        """Reuse the block of an ``async_free`` node the new node depends on (same
        size, type and read-only flag), else reserve a new one in the graph's pool."""
        size, dtype, zero_init, read_only = request
        seen, work = set(), list(deps)
        alloc = None
        while work and alloc is None:
            d = work.pop()
            if d in seen:
                continue
            seen.add(d)
            if d.kind == node_type.async_free:
                block = getattr(d.command.frees, "_cmd", None)
                old = block.allocation if block is not None else None
                if old is not None and old.count == size and old.dtype == dtype and \
                        block.request[3] == read_only and not getattr(d, "_reused", False):
                    d._reused = True
                    alloc = old
            work.extend(d.preds)
        if alloc is None:
            alloc = memory._allocate(size, dtype, "device", self._queue)    # the device's own memory, if any
            self._pool.append(alloc)
        if zero_init:
            self._zero_init.add(id(alloc))
        return alloc

    def make_edge(self, src: node, dest: node) -> None:
        require_instance(src, node, "make_edge src")
        require_instance(dest, node, "make_edge dest")
        with self._lock:
            self._check_not_recording("make_edge() cannot be called when a queue is currently recording commands "
                                      "to a graph.")
            if src is dest:
                raise _invalid("make_edge() cannot be called when Src and Dest are the same.")
            if src.graph is not self:
                raise _invalid("Src must be a node inside the graph.")
            if dest.graph is not self:
                raise _invalid("Dest must be a node inside the graph.")
            if dest in src.succs:
                return
            src.succs.append(dest)
            dest.preds.append(src)
            if not self.no_cycle_check and _topological(self.nodes) is None:
                src.succs.remove(dest)
                dest.preds.remove(src)
                raise _invalid("Command graphs cannot contain cycles.")

    # -- record & replay ------------------------------------------------------------

    def begin_recording(self, queues, property_list=(), **properties) -> None:
        """Start recording ``queues`` (one or a list) into this graph; the properties
        (graph property names, as a list, a mapping or keywords) hold for what they
        record and pass on to queues they put into recording transitively.  All
        queues are checked before any starts."""
        targets = _queues(queues, "begin_recording queues")
        props = _property_names(property_list, properties)
        seen = set()
        for q in targets:
            if q._recording is not None or id(q) in seen:
                raise _invalid("begin_recording cannot be called for a queue which is already in the recording state.")
            seen.add(id(q))
            if q.context is not self.context:
                raise _invalid("begin_recording cannot be called for a queue whose context differs from the graph "
                               "context.")
            if q.device != self.device:
                raise _invalid("begin_recording cannot be called for a queue whose device differs from the graph "
                               "device.")
        for q in targets:
            self._start(q, props)

    def _start(self, q: queue, props: dict) -> None:
        q._recording_ref = weakref.ref(self)
        self._recording_queues.add(q)
        self._sessions[q] = _Recording(self, props)

    def _begin_transitive(self, q: queue, scope: _Recording) -> None:
        """``q`` depends on an event of ``scope``: it records into this graph as if
        ``begin_recording`` had been called with ``scope``'s properties."""
        if q.context is not self.context or q.device != self.device:
            raise _invalid("a queue of another device or context cannot depend on an event recorded into this graph")
        self._start(q, scope.properties)

    def end_recording(self, queues=None) -> None:
        targets = list(self._recording_queues) if queues is None else _queues(queues, "end_recording queues")
        for q in targets:
            if q._recording is not None and q._recording is not self:
                raise _invalid("end_recording called for a queue which is recording to a different graph.")
        for q in targets:
            if q._recording is not self:
                continue
            q._recording_ref = None
            self._recording_queues.discard(q)
            session = self._sessions.pop(q, None)
            if session is not None:
                session.close()
            self._last_on_queue.pop(q, None)
            self._barrier_on_queue.pop(q, None)

    @contextlib.contextmanager
    def recording(self, queues, property_list=(), **properties):
        """``with graph.recording(q): ...`` records the block's submissions."""
        self.begin_recording(queues, property_list, **properties)
        try:
            yield self
        finally:
            self.end_recording(queues)

    def _record(self, q: queue, h: handler) -> event:
        with self._lock:
            deps = [self._node_of(e) for e in h.deps]
            cmd = h.command
            if list(_dynamic_arguments(cmd, h)):
                raise _invalid("dynamic_parameters cannot be used in commands recorded from a queue (record & "
                               "replay): add the node with command_graph.add")
            last = self._last_on_queue.get(q)
            if q.in_order and last is not None:
                deps.append(last)
            barrier = self._barrier_on_queue.get(q)
            if barrier is not None:
                deps.append(barrier)            # commands after a barrier wait for it
            is_barrier = cmd is not None and cmd.kind == "ext_oneapi_barrier"
            if is_barrier and not q.in_order and not cmd.wait_list:
                # a barrier without a wait list waits for this queue's leaves; one with
                # a wait list only for those events
                deps += [n for n in self.nodes if not n.succs and getattr(n, "_queue", None) is q]
            n = self._new_node(cmd, deps)
            n._queue = q
            self._last_on_queue[q] = n
            if is_barrier:
                self._barrier_on_queue[q] = n
            session = self._sessions.get(q)
        e = event(0, 0, 0, False)
        e._node = n
        e._scope = session
        return e

    # -- queries and output ---------------------------------------------------------

    def get_nodes(self) -> list[node]:
        return list(self.nodes)

    def get_root_nodes(self) -> list[node]:
        return [n for n in self.nodes if not n.preds]

    def print_graph(self, path: str, verbose: bool = False) -> None:
        """Write the graph as Graphviz DOT (the path must end in ``.dot``)."""
        path = require_path(path, "print_graph path")
        verbose = require_bool(verbose, "print_graph verbose")
        if not path.endswith(".dot"):
            raise _invalid("DOT graph is the only format supported at the moment.")
        lines = ["digraph dot {"]
        for n in self.nodes:
            label = f"ID = {n.id}\\nTYPE = {_DOT_TYPE.get(n.kind, 'Other')} \\n"
            if n.kind == node_type.kernel:
                label += f"NAME = {n.command.kernel.name}\\n"
            if verbose and n.command is not None:
                label += f"ARGS = {n.command.describe()}\\n"
            lines.append(f'"{n.id}" [style=bold, label="{label}"];')
            lines += [f'  "{p.id}" -> "{n.id}"' for p in n.preds]
        lines.append("}")
        try:
            with open(path, "w") as fh:
                fh.write("\n".join(lines) + "\n")
        except OSError as err:
            raise _invalid(f"print_graph cannot write '{path}': {err.strerror or err}") from None

    def finalize(self, *, updatable: bool = False, enable_profiling: bool = False) -> "executable_command_graph":
        updatable = require_bool(updatable, "finalize updatable")
        enable_profiling = require_bool(enable_profiling, "finalize enable_profiling")
        if self._pool and self._live_exec is not None and self._live_exec() is not None:
            raise _invalid("Graphs containing allocations can only have a single executable graph alive at any "
                           "one time.")
        if updatable and not self.device.has(Aspect.ext_oneapi_graph):
            raise exception(errc.feature_not_supported, f"Device does not support Command Graph update "
                                                        f"({self.device.name} lacks aspect::ext_oneapi_graph)")
        ex = executable_command_graph(self, updatable, enable_profiling)
        for block in self._pool:                # zero_init: zeroed at each finalize, not at each run
            if id(block) in self._zero_init:
                if self.device.impl.runs_on_host:
                    ctypes.memset(block.ptr, 0, block.nbytes)
                else:
                    self._queue.memset(block, 0, block.nbytes).wait()     # the device's memory, on its queue
        if self._pool:
            self._live_exec = weakref.ref(ex)
        return ex

    def __del__(self):
        for session in list(getattr(self, "_sessions", {}).values()):
            session.close()
        for q in list(getattr(self, "_recording_queues", ())):
            if q._recording is self or q._recording is None:
                q._recording_ref = None


def _dynamic_arguments(cmd, h):
    """The ``dynamic_parameter``s a command group uses (kernel arguments and ``set_arg``)."""
    values = list(h._set_args.values()) if h is not None else []
    if isinstance(cmd, KernelCommand):
        values += cmd.args
    return [a for a in dict.fromkeys(v for v in values if isinstance(v, dynamic_parameter))]


def _topological(nodes: list[node]) -> list[node] | None:
    """Kahn's algorithm in insertion order; ``None`` when there is a cycle."""
    indegree = {n: len(n.preds) for n in nodes}
    ready = [n for n in nodes if indegree[n] == 0]
    order = []
    while ready:
        n = ready.pop(0)
        order.append(n)
        for s in n.succs:
            indegree[s] -= 1
            if indegree[s] == 0:
                ready.append(s)
    return order if len(order) == len(nodes) else None


# --- execution -----------------------------------------------------------------------

class executable_command_graph:  # noqa: N801
    """A finalized graph: a plan of steps run in topological order."""

    SMALL = 16384       # kernels with fewer work-items run inside the native plan runner
    state = graph_state.executable

    def __init__(self, graph: command_graph, updatable: bool, enable_profiling: bool):
        order = _topological(graph.nodes)
        if order is None:
            raise _invalid("Command graphs cannot contain cycles.")
        self.graph, self.updatable, self.profiling = graph, updatable, enable_profiling
        self.device, self.context = graph.device, graph.context
        self._queue = queue(self.device, context=self.context)
        if not self.device.impl.runs_on_host:
            self.SMALL = 0          # a device off the host runs every kernel on its queue (``cuda/queue.py``)
        self._lock = threading.Lock()
        self.order = order
        # the topology as finalized (the modifiable graph may grow afterwards)
        self._nodes = list(graph.nodes)
        self._preds = {n: tuple(n.preds) for n in self._nodes}
        self._required_mem = sum(a.nbytes for a in graph._pool)
        self._commands: dict[node, Command | None] = {n: _snapshot(n.command) for n in order}
        for cmd in self._commands.values():
            self._check_supported(cmd)
        self._memory_checked = None          # memory.frees() when no command used freed memory
        self._unchecked: set[node] = set()   # nodes updated since then: only their memory needs a look
        self._build_plan()
        # a device that runs graphs itself (an NVIDIA GPU: one CUDA graph, ``cuda/graph.py``)
        self._device_graph = self.device.impl.graph_executor(self)

    def _check_supported(self, cmd) -> None:
        """A kernel the device cannot run is refused here, whatever its range
        (``feature_not_supported``, as the newer revision says), not at replay."""
        if not isinstance(cmd, KernelCommand):
            return
        try:
            cmd.kernel.program.linked_for(cmd.kernel.name, self.device, self.context)
        except exception as err:
            if err.code() != errc.kernel_not_supported:
                raise
            raise exception(errc.feature_not_supported, f"the graph holds kernel '{cmd.kernel.name}', which device "
                                                        f"{self.device.name} cannot run: {err}") from None

    def get_required_mem_size(self) -> int:
        """Bytes of graph-owned memory (``async_malloc`` nodes) this graph needs."""
        return self._required_mem

    def _build_plan(self) -> None:
        """Steps: ["native", entries array, count, {index: keep-alive}] or ["python", command];
        ``self._where[node]`` says where each node's command sits, for updates."""
        steps, batch, keep, batch_nodes = [], [], [], []
        self._where: dict[node, tuple] = {}

        def flush():
            if batch:
                arr = (PlanEntry * len(batch))(*batch)
                for i, n in enumerate(batch_nodes):
                    self._where[n] = ("native", len(steps), i)
                steps.append(["native", arr, len(batch), dict(enumerate(keep)),
                              [self._commands[n].kernel.name for n in batch_nodes]])
                batch.clear()
                keep.clear()
                batch_nodes.clear()

        for n in self.order:
            cmd = self._commands[n]
            if cmd is None or n.kind in (node_type.empty, node_type.ext_oneapi_barrier, node_type.prefetch,
                                         node_type.memadvise, node_type.async_malloc, node_type.async_free):
                continue
            if self._native(cmd):
                entry, alive = self._entry(cmd)
                batch.append(entry)
                keep.append(alive)              # what the entry points to must stay alive
                batch_nodes.append(n)
                continue
            flush()
            self._where[n] = ("python", len(steps))
            steps.append(["python", cmd])
        flush()
        self._steps = steps

    def _native(self, cmd) -> bool:
        """Whether ``cmd`` runs inside the native plan: small kernels, but not work-group
        kernels, which launch through ``work_groups.launch`` (its checks and errors)."""
        if not isinstance(cmd, KernelCommand) or cmd.total >= self.SMALL or has_reductions(cmd.args):
            return False                    # (a reduction may reset its result first: KernelCommand.run)
        linked, _ = cmd.kernel.program.linked_for(cmd.kernel.name, self.device, self.context)
        return cmd.kernel.name not in linked.groups

    def _entry(self, cmd: KernelCommand):
        linked, _ = cmd.kernel.program.linked_for(cmd.kernel.name, self.device, self.context)
        launcher = linked.launcher(cmd.kernel.name)
        entry = PlanEntry(launcher, ctypes.cast(cmd.slots, ctypes.c_void_p), cmd.total,
                          ctypes.cast(cmd.geometry, ctypes.c_void_p))
        return entry, [cmd.slots, cmd.geometry, linked]

    def _replace(self, n: node, cmd, before=None) -> bool:
        """Put ``n``'s new command in place; ``False`` when the plan must be rebuilt.
        A kernel node of the native plan whose kernel and size class stay (``before``:
        its command until now) only has its entry's slots and geometry repointed."""
        where = self._where.get(n)
        if (where is not None and where[0] == "native" and isinstance(cmd, KernelCommand) and
                isinstance(before, KernelCommand) and cmd.kernel is before.kernel and cmd.total < self.SMALL and
                not has_reductions(cmd.args)):
            step = self._steps[where[1]]
            entry = step[1][where[2]]
            entry.args, entry.total, entry.geom = ctypes.addressof(cmd.slots), cmd.total, \
                ctypes.addressof(cmd.geometry)
            step[3][where[2]] = [cmd.slots, cmd.geometry, step[3][where[2]][2]]
            return True
        if where is None:
            return cmd is None or n.kind in (node_type.empty, node_type.ext_oneapi_barrier)
        if where[0] == "python":
            if self._native(cmd):
                return False
            self._steps[where[1]][1] = cmd
            return True
        if not self._native(cmd):
            return False
        step = self._steps[where[1]]
        entry, alive = self._entry(cmd)
        step[1][where[2]] = entry
        step[3][where[2]] = alive
        step[4][where[2]] = cmd.kernel.name
        return True

    def memory_in_use(self, nodes=None) -> list:
        """(node, command) pairs for ``commands.check_memory``: of ``nodes``, or of every node."""
        return [(_NodeName(n), self._commands[n]) for n in (self._commands if nodes is None else nodes)]

    def _check_memory(self) -> None:
        """Refuse to run if a command uses freed memory.  Every command is looked at
        after a free (``memory.frees()`` moved); otherwise only those of the nodes
        updated since the last look, but for kernel nodes, whose packing checked
        their memory when they were updated: an update costs no look at the
        whole graph."""
        frees = memory.frees()
        if self._memory_checked != frees:
            check_memory(self.memory_in_use(), "the executable graph cannot run")
            self._memory_checked = frees
        elif self._unchecked:
            check_memory(self.memory_in_use(self._unchecked), "the executable graph cannot run")
        self._unchecked.clear()             # (kept when refused: the next run refuses again)

    def _execute(self, q: queue) -> None:
        with self._lock:                     # one execution of this graph at a time
            self._check_memory()
            if self._device_graph is not None:         # one CUDA graph launch on the queue's stream
                self._device_graph.launch(q)
                return
            if not self.device.impl.runs_on_host:   # (a GPU queue: command by command on its stream)
                q.run_graph_steps(self._steps)
                return
            for kind, *rest in self._steps:
                if kind == "native":
                    run_plan(rest[0], rest[1], rest[3])
                    assertions.check()      # a failed assert in one of its kernels (assertions.py)
                else:
                    rest[0].run(self._queue)

    # -- update -----------------------------------------------------------------------

    def update(self, target) -> None:
        if not self.updatable:
            raise _invalid("update() cannot be called on a executable graph which was not created with "
                           "property::updatable")
        if isinstance(target, command_graph):
            self._memory_checked = None      # new commands everywhere: check them all at the next run
            self._update_whole(target)
            return
        if target is None:
            raise _invalid("update expects a node, a list of nodes or a command_graph, got None")
        nodes = _nodes(target, "update")
        for n in nodes:
            if n not in self._commands:
                raise _invalid("Node passed to update() is not part of the graph.")
            if n.kind not in _UPDATABLE:
                raise _invalid(f"node_type::{n.kind.name} nodes are not supported for update. Only kernel, "
                               f"host_task, barrier and empty nodes are supported.")
        commands = {n: _snapshot(n.command) for n in nodes}
        for n, cmd in commands.items():
            before = self._commands[n]
            if not (isinstance(before, KernelCommand) and isinstance(cmd, KernelCommand) and
                    before.kernel is cmd.kernel):       # a kernel already checked needs no second look
                self._check_supported(cmd)
        with self._lock:
            if self._device_graph is not None:        # the driver's update first: a refusal changes nothing
                self._device_graph.update_nodes(commands, {n: self._commands[n] for n in commands},
                                                lambda: {**self._commands, **commands})
            rebuild = False
            for n, cmd in commands.items():
                before, self._commands[n] = self._commands[n], cmd
                if not isinstance(cmd, KernelCommand):
                    self._unchecked.add(n)   # its memory is looked at by the next run
                # (a kernel command's memory was checked by its packing, in _snapshot just now;
                # a free after it moves memory.frees(), and the next run looks at every node)
                rebuild = rebuild or not self._replace(n, cmd, before)
            if rebuild:
                self._build_plan()

    def _update_whole(self, other: command_graph) -> None:
        """Take the commands of ``other``, node by node in insertion order.  Refused
        (the graph unchanged) unless ``other`` is topologically identical: as many
        nodes, each of an updatable type and of its counterpart's type (kernels: the
        same kernel), and every edge between corresponding nodes.  The spec leaves
        a mismatched topology undefined; here it is ``errc::invalid``."""
        if self.graph._pool or other._pool:
            raise _invalid("Graphs with graph-owned allocations cannot be updated as a whole.")
        if other.device != self.device:
            raise _invalid("Cannot update using a graph created with a different device.")
        if other.context is not self.context:
            raise _invalid("Cannot update using a graph created with a different context.")
        mine, theirs = self._nodes, list(other.nodes)
        for n in theirs:
            if n.kind not in _WHOLE_UPDATABLE:
                raise _invalid(f"Cannot update using a graph with a node_type::{n.kind.name} node: whole-graph update "
                               f"takes only kernel, host_task, barrier and empty nodes.")
        if len(mine) != len(theirs):
            raise _invalid("Cannot update using a graph with a different topology. Mismatch found in the number "
                           "of nodes.")
        my_index = {n: i for i, n in enumerate(mine)}
        their_index = {n: i for i, n in enumerate(theirs)}
        for i, (a, b) in enumerate(zip(mine, theirs)):
            if a.kind != b.kind:
                raise _invalid("Cannot update using a graph with mismatched node types. Each pair of nodes must "
                               "have the same type.")
            if a.kind == node_type.kernel and a.command.kernel.name != b.command.kernel.name:
                raise _invalid(f"Cannot update using a graph with mismatched kernel types. Source node type "
                               f"{b.command.kernel.name}, target node type {a.command.kernel.name}")
            my_preds = sorted(my_index[p] for p in self._preds[a])
            their_preds = sorted(their_index[p] for p in b.preds)
            if len(my_preds) != len(their_preds):
                raise _invalid("Cannot update using a graph with a different topology. Mismatch found in the "
                               "number of edges.")
            if my_preds != their_preds:
                raise _invalid(f"Cannot update using a graph with a different topology. Node {i} depends on nodes "
                               f"{their_preds} in the source graph but on nodes {my_preds} in this graph.")
        commands = {a: _snapshot(b.command) for a, b in zip(mine, theirs) if a in self._commands}
        for cmd in commands.values():
            self._check_supported(cmd)
        with self._lock:
            if self._device_graph is not None:        # cuGraphExecUpdate_v2 first: a refusal changes nothing
                self._device_graph.update_whole({**self._commands, **commands})
            self._commands.update(commands)
            self._build_plan()


class _NodeName:
    """A node's name in a refusal, spelled only when one is raised (a replay's check
    of memory formats nothing when all is well)."""

    __slots__ = ("node",)

    def __init__(self, n: node):
        self.node = n

    def __str__(self):
        return f"node {self.node.id} ({self.node.kind.name})"


def _snapshot(cmd: Command | None) -> Command | None:
    """An executable graph's own copy of a command (later edits need ``update``)."""
    if isinstance(cmd, KernelCommand):
        copy = KernelCommand.__new__(KernelCommand)
        copy.__dict__.update(cmd.__dict__)
        copy.args = list(cmd.args)
        copy.slots = cmd.pack()
        return copy
    return cmd
