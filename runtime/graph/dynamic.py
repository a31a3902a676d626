"""Executable graph update's inputs: dynamic parameters and dynamic command groups.

A ``dynamic_parameter`` is a kernel argument whose value an executable graph
takes again on ``update(node)``; a ``dynamic_command_group`` is several command
groups for one node, of which ``set_active_index`` picks the one that runs."""
from __future__ import annotations

from ..commands import DynamicValue, KernelCommand
from ..errors import exception
from ..validate import KINDS, described, require_callable, require_instance
from .nodes import invalid, node

__all__ = ["dynamic_parameter", "dynamic_command_group", "dynamic_arguments", "NOT_KERNEL_PARAMETER"]

NOT_KERNEL_PARAMETER = ("dynamic_parameters cannot be registered with graph nodes which do not represent kernel "
                        "executions")


class dynamic_parameter(DynamicValue):  # noqa: N801
    """A kernel argument that an executable graph can update without a rebuild."""

    graph_only = True

    def __init__(self, graph, value):
        require_instance(graph, KINDS["command_graph"], "dynamic_parameter graph")
        self.graph, self.value = graph, value
        self._commands: list[KernelCommand] = []

    def _register(self, cmd: KernelCommand, graph) -> None:
        if graph is not self.graph:
            raise invalid("a dynamic_parameter can only be used in nodes of the graph it was created for")
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

    def __init__(self, graph, cgfs):
        require_instance(graph, KINDS["command_graph"], "dynamic_command_group graph")
        if not isinstance(cgfs, (list, tuple)):
            raise invalid(f"dynamic_command_group takes a list of command-group functions, got {described(cgfs)}")
        cgfs = [require_callable(f, f"dynamic_command_group cgfs[{i}]") for i, f in enumerate(cgfs)]
        if not cgfs:
            raise invalid("Dynamic command-group cannot be created with an empty CGF list.")
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
            raise invalid("The only types of command-groups that can be used in dynamic command-groups are "
                          "kernels and host-tasks.")
        if len(kinds) > 1:
            raise invalid("Command-groups in a dynamic command-group must all be the same type.")
        deps = [[self.graph._node_of(e) for e in h.deps] for _, h in results]
        if any(set(d) != set(deps[0]) for d in deps[1:]):
            raise invalid("The command-group functions of a dynamic command-group must have the same dependencies: "
                          "choosing another one would change the graph's topology.")
        for cmd, h in results:
            self.graph._register(cmd, h)
        self.commands, self._deps = commands, list(dict.fromkeys(deps[0]))
        return self.commands, self._deps

    def get_active_index(self) -> int:
        return self.active

    def set_active_index(self, index: int) -> None:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(self._cgfs):
            raise invalid("Index is out of range.")
        self.active = index
        for n in self.nodes:
            n.command = self.commands[index]


def dynamic_arguments(cmd, h):
    """The ``dynamic_parameter``s a command group uses (kernel arguments and ``set_arg``)."""
    values = list(h._set_args.values()) if h is not None else []
    if isinstance(cmd, KernelCommand):
        values += cmd.args
    return [a for a in dict.fromkeys(v for v in values if isinstance(v, dynamic_parameter))]
