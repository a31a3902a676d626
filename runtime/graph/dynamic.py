"""Executable graph update's inputs: dynamic parameters and dynamic command groups.

A ``dynamic_parameter`` is a kernel argument whose value an executable graph
takes again on ``update(node)``; a ``dynamic_command_group`` is several command
groups for one node, of which ``set_active_index`` picks the one that runs."""
from __future__ import annotations

from ..commands import DynamicValue, KernelCommand
from ..errors import exception
from ..validate import KINDS, described, require_callable, require_instance
from .nodes import invalid, node

__all__ = ["dynamic_parameter", "dynamic_command_group", "NOT_KERNEL_PARAMETER"]

NOT_KERNEL_PARAMETER = ("dynamic_parameters cannot be registered with graph nodes which do not represent kernel "
                        "executions")


class dynamic_parameter(DynamicValue):  # noqa: N801
    """A kernel argument that an executable graph can update without a rebuild.

    ``dynamic_parameter(value)``, or the deprecated ``dynamic_parameter(graph,
    value)``: as the newer revision says, neither ties it to a graph, so it can
    be used in nodes of any graph.  It is registered with each kernel argument it
    is given for (``handler.set_arg`` or a kernel argument of a node added with
    ``command_graph.add``); one argument may be registered with several dynamic
    parameters, and an ``update`` of any of them sets it."""

    graph_only = True

    def __init__(self, *args):
        if len(args) == 2:
            graph, value = args
            require_instance(graph, KINDS["command_graph"], "dynamic_parameter graph")
        elif len(args) == 1:
            graph, value = None, args[0]
        else:
            raise invalid(f"dynamic_parameter takes an initial value (or, deprecated, a command_graph and an initial "
                          f"value), got {len(args)} arguments")
        self.graph, self.value = graph, value
        self._uses: list[tuple[KernelCommand, int]] = []    # (command, argument index) registered with it
        self._commands: dict[KernelCommand, list[int]] = {}  # ... by command: its argument indexes

    def _register(self, cmd: KernelCommand, index: int) -> None:
        self._uses.append((cmd, index))
        indexes = self._commands.setdefault(cmd, [])
        if index not in indexes:
            indexes.append(index)

    def resolve(self):
        return self.value

    def update(self, value) -> None:
        """New value for every argument registered with it (each takes it, whatever
        other dynamic parameters it is also registered with); executable graphs see
        it after ``update(node)``.  Only those arguments are packed again
        (``KernelCommand.repacked``), every command's before any takes them: a
        value a kernel refuses changes nothing."""
        uses = self._uses
        if len(uses) == 1:                      # the common case: one argument, which it holds
            cmd, i = uses[0]
            if cmd.args[i] is self:
                slots = cmd.repacked(uses[0][1:], value)       # (a refusal raises: nothing changed)
                self.value = value
                cmd.slots = slots
                return
        old, moved = self.value, None
        self.value = value
        for cmd, i in self._uses:
            if cmd.args[i] is not self:         # (registered with another one too, updated last)
                if moved is None:
                    moved = []
                moved.append((cmd, i, cmd.args[i]))
                cmd.args[i] = self
        try:
            repacked = [(cmd, cmd.repacked(indexes, value)) for cmd, indexes in self._commands.items()]
        except exception:
            self.value = old
            for cmd, i, arg in moved or ():
                cmd.args[i] = arg
            raise
        for cmd, slots in repacked:
            cmd.slots = slots


class dynamic_command_group:  # noqa: N801
    """Several command groups for one node; ``set_active_index`` picks the one that runs.

    The command-group functions run when the group is made, once, in index
    order: the constructor refuses functions that are not kernels or host tasks,
    or not all of one type, as both revisions' constructor says (their section
    on command-group function limitations says "when added"; the constructor's
    list of errors is the detailed statement, and it needs the functions' types).
    Their dependencies are resolved and compared, and their dynamic parameters
    registered, when the group is first added; later nodes sharing the group
    share those commands."""

    def __init__(self, graph, cgfs):
        require_instance(graph, KINDS["command_graph"], "dynamic_command_group graph")
        if not isinstance(cgfs, (list, tuple)):
            raise invalid(f"dynamic_command_group takes a list of command-group functions, got {described(cgfs)}")
        cgfs = [require_callable(f, f"dynamic_command_group cgfs[{i}]") for i, f in enumerate(cgfs)]
        if not cgfs:
            raise invalid("Dynamic command-group cannot be created with an empty CGF list.")
        results = [graph._evaluate(cgf) for cgf in cgfs]
        kinds = {cmd.kind if cmd is not None else "empty" for cmd, _ in results}
        if not kinds <= {"kernel", "host_task"}:
            raise invalid("The only types of command-groups that can be used in dynamic command-groups are "
                          "kernels and host-tasks.")
        if len(kinds) > 1:
            raise invalid("Command-groups in a dynamic command-group must all be the same type.")
        self.graph = graph
        self._cgfs = cgfs
        self.commands: list = [cmd for cmd, _ in results]
        self._handlers = [h for _, h in results]
        self._deps: list[node] | None = None       # resolved by the first add
        self.active = 0
        self.nodes: list[node] = []

    def _evaluate(self) -> tuple[list, list]:
        """(commands, dependency nodes) of the group; the first time, its dependencies
        are resolved and compared, and its dynamic parameters registered."""
        if self._deps is not None:
            return self.commands, self._deps
        deps = [[self.graph._node_of(e) for e in h.deps] for h in self._handlers]
        if any(set(d) != set(deps[0]) for d in deps[1:]):
            raise invalid("The command-group functions of a dynamic command-group must have the same dependencies: "
                          "choosing another one would change the graph's topology.")
        for cmd, h in zip(self.commands, self._handlers):
            self.graph._register(cmd, h)
        self._deps = list(dict.fromkeys(deps[0]))
        return self.commands, self._deps

    def get_active_index(self) -> int:
        return self.active

    def set_active_index(self, index: int) -> None:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(self._cgfs):
            raise invalid("Index is out of range.")
        self.active = index
        for n in self.nodes:
            n.command = self.commands[index]
