"""Nodes and edges: what every part of the graph extension shares.

``node_type`` and ``graph_state`` as the spec names them, the ``node`` class
(a command and its edges), the node types each kind of update takes, and
Kahn's topological order, which both cycle checks and finalize use."""
from __future__ import annotations

import enum
import itertools

from ..commands import Command, KernelCommand
from ..errors import errc, exception
from ..events import event
from ..ranges import as_range, nd_range
from ..validate import described

__all__ = ["graph_state", "node_type", "node", "invalid", "as_nodes", "topological", "UPDATABLE",
           "WHOLE_UPDATABLE"]


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


#: what a node update takes
UPDATABLE = (node_type.kernel, node_type.host_task, node_type.ext_oneapi_barrier, node_type.empty)
#: what whole-graph update takes: the update table of the newer revision (host tasks included)
WHOLE_UPDATABLE = UPDATABLE


def invalid(message: str) -> exception:
    return exception(errc.invalid, message)


class node:  # noqa: N801
    _ids = itertools.count()

    def __init__(self, graph, kind: node_type, command: Command | None = None):
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
            raise invalid("the event is not associated with a command graph node")
        return e._node

    def _kernel_command(self, what: str) -> KernelCommand:
        if self.kind != node_type.kernel or not isinstance(self.command, KernelCommand):
            raise invalid(f"Cannot update {what} of nodes which are not kernel nodes")
        return self.command

    def update_range(self, r) -> None:
        cmd = self._kernel_command("execution range")
        new = as_range(r)
        if isinstance(cmd.range, nd_range) or isinstance(new, nd_range):
            raise invalid("Cannot update the nd_range of a node with a range, or a range with an nd_range "
                          "(update_nd_range)")
        old = cmd.range if cmd.range is not None else None
        if old is not None and len(as_range(old)) != len(new):
            raise invalid("Cannot update execution range of a node with an execution range of different dimensions")
        cmd.set_range(new, self.graph.device)

    def update_nd_range(self, r) -> None:
        cmd = self._kernel_command("execution range")
        if not isinstance(cmd.range, nd_range) or not isinstance(r, nd_range):
            raise invalid("Cannot update the range of a node with an nd_range, or an nd_range with a range")
        if len(cmd.range.global_range) != len(r.global_range):
            raise invalid("Cannot update execution range of a node with an execution range of different dimensions")
        cmd.set_range(r, self.graph.device)       # the kernel's properties hold (reqd_work_group_size)

    def __repr__(self):
        return f"<node {self.id} {self.kind.name}>"


def as_nodes(value, what: str) -> list:
    """A node or a list or tuple of nodes (``None``: none), as a list."""
    if value is None:
        return []
    if isinstance(value, node):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(n, node) for n in value):
        return list(value)
    raise invalid(f"{what} must be a node or a list of nodes, got {described(value)}")


def topological(nodes: list[node]) -> list[node] | None:
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
