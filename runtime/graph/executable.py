"""``executable_command_graph``: a finalized graph and its replay.

``finalize`` snapshots the nodes in topological order, each with its own copy
of its command (arguments packed once), and checks that the device can run
every kernel.  A replay runs the device's own form of the graph when it has
one (a CUDA graph, ``backend.device_graph``), else the host plan
(``plan.py``); submissions of one executable graph are serialised.  Before a
replay, the commands' memory is checked (freed USM is refused)."""
from __future__ import annotations

import threading

from .. import memory
from ..commands import Command, KernelCommand, check_memory
from ..errors import errc, exception
from ..queue import queue
from . import backend
from .nodes import graph_state, invalid, node, node_type, topological
from .plan import Plan
from .update import Updater, snapshot

__all__ = ["executable_command_graph"]


class executable_command_graph(Updater):  # noqa: N801
    """A finalized graph: a plan of steps run in topological order."""

    state = graph_state.executable

    def __init__(self, graph, updatable: bool, enable_profiling: bool):
        order = topological(graph.nodes)
        if order is None:
            raise invalid("Command graphs cannot contain cycles.")
        self.graph, self.updatable, self.profiling = graph, updatable, enable_profiling
        self.device, self.context = graph.device, graph.context
        self._queue = queue(self.device, context=self.context)
        self._lock = threading.Lock()
        self.order = order
        # the topology as finalized (the modifiable graph may grow afterwards)
        self._nodes = list(graph.nodes)
        self._preds = {n: tuple(n.preds) for n in self._nodes}
        self._required_mem = sum(a.nbytes for a in graph._pool)
        #: whether it contains graph-owned allocations, as finalized (not as its modifiable graph is now)
        self.owns_memory = any(n.kind == node_type.async_malloc for n in self._nodes)
        self._commands: dict[node, Command | None] = {n: snapshot(n.command) for n in order}
        for cmd in self._commands.values():
            self._check_supported(cmd)
        self._memory_checked = None          # memory.frees() when no command used freed memory
        self._unchecked: set[node] = set()   # nodes updated since then: only their memory needs a look
        # a GPU queue runs every kernel itself (``cuda/queue.py``): no native plan entries
        self._plan = Plan(self.device, self.context, 0 if backend.runs_steps(self._queue) else Plan.SMALL)
        self._plan.build(self.order, self._commands)
        self._device_graph = backend.device_graph(self)
        #: how a replay runs off the host plan, chosen once: the device's graph, or the steps on a GPU queue
        if self._device_graph is not None:
            self._replay = self._device_graph.launch
        elif backend.runs_steps(self._queue):
            self._replay = lambda q: q.run_graph_steps(self._plan.steps)
        else:
            self._replay = None

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
        """One replay on ``q`` (of the graph's device and context: ``check_graph_submission``)."""
        lock = self._lock                    # one execution of this graph at a time
        lock.acquire()                       # (not ``with``: a replay's hot path, and half the cost)
        try:
            if self._unchecked or self._memory_checked != memory.frees():
                self._check_memory()
            if self._replay is None:
                self._plan.run(self._queue)
            else:
                self._replay(q)
        finally:
            lock.release()


class _NodeName:
    """A node's name in a refusal, spelled only when one is raised (a replay's check
    of memory formats nothing when all is well)."""

    __slots__ = ("node",)

    def __init__(self, n: node):
        self.node = n

    def __str__(self):
        return f"node {self.node.id} ({self.node.kind.name})"
