"""Executable graph update: new commands for some nodes, or for all of them from
another modifiable graph of the same topology.

A node update takes each node's command as its modifiable graph now has it
(``snapshot``: the executable graph's own copy, arguments packed again).  The
device's own form of the graph (``backend.device_graph``) is updated first,
so that a refusal there changes nothing; then the host plan.  The common
update, one kernel node after a dynamic parameter's new value, takes the new
slots into the graph's copy in place (``_update_in_place``): no copy made, no
plan entry looked up again."""
from __future__ import annotations

from ..commands import Command, KernelCommand
from ..memory import frees
from ..validate import KINDS
from .nodes import UPDATABLE, WHOLE_UPDATABLE, as_nodes, invalid, node, node_type

__all__ = ["Updater", "snapshot"]


def snapshot(cmd: Command | None) -> Command | None:
    """An executable graph's own copy of a command (later edits need ``update``)."""
    if isinstance(cmd, KernelCommand):
        copy = KernelCommand.__new__(KernelCommand)
        copy.__dict__.update(cmd.__dict__)
        copy.args = list(cmd.args)
        copy.slots = cmd.fresh_slots()      # (slots are never written in place: sharing them is safe)
        return copy
    return cmd


class Updater:
    """The update half of ``executable_command_graph`` (a mixin: the graph's
    ``_commands``, ``_plan``, ``_device_graph``, ``_lock`` are its own)."""

    def update(self, target) -> None:
        if not self.updatable:
            raise invalid("update() cannot be called on a executable graph which was not created with "
                          "property::updatable")
        if type(target) is node:
            if self._update_in_place(target):
                return
            nodes = (target,)
        elif isinstance(target, KINDS["command_graph"]):
            self._memory_checked = None      # new commands everywhere: check them all at the next run
            self._update_whole(target)
            return
        elif target is None:
            raise invalid("update expects a node, a list of nodes or a command_graph, got None")
        else:
            nodes = as_nodes(target, "update")
        mine = self._commands
        for n in nodes:
            if n not in mine:
                raise invalid("Node passed to update() is not part of the graph.")
            if n.kind not in UPDATABLE:
                raise invalid(f"node_type::{n.kind.name} nodes are not supported for update. Only kernel, "
                              f"host_task, barrier and empty nodes are supported.")
        commands = {n: snapshot(n.command) for n in nodes}
        for n, cmd in commands.items():
            before = mine[n]
            if not (isinstance(before, KernelCommand) and isinstance(cmd, KernelCommand) and
                    before.kernel is cmd.kernel):       # a kernel already checked needs no second look
                self._check_supported(cmd)
        with self._lock:
            if self._device_graph is not None:        # the driver's update first: a refusal changes nothing
                self._device_graph.update_nodes(commands, {n: mine[n] for n in commands},
                                                lambda: {**mine, **commands})
            rebuild = False
            for n, cmd in commands.items():
                before, mine[n] = mine[n], cmd
                if not isinstance(cmd, KernelCommand):
                    self._unchecked.add(n)   # its memory is looked at by the next run
                # (a kernel command's memory was checked by its packing, with no free since
                # (snapshot); a free after it moves memory.frees(), and the next run looks at every node)
                rebuild = rebuild or not self._plan.replace(n, cmd, before)
            if rebuild:
                self._plan.build(self.order, mine)

    def _update_in_place(self, n) -> bool:
        """The common update, a dynamic parameter's new value, without a new snapshot:
        a kernel node whose command still has the kernel and range of this graph's
        copy (the same geometry: ``set_range`` makes a new one) takes its arguments
        and slots into the copy, and the host plan runs the new slots; a device's
        own graph first takes the slots into the node's parameters
        (``update_slots``: a refusal there changes nothing).  ``False`` (nothing
        done): the general way, ``update``."""
        own, cmd = self._commands.get(n), n.command
        if (type(own) is not KernelCommand or type(cmd) is not KernelCommand or
                own.kernel is not cmd.kernel or own.geometry is not cmd.geometry):
            return False
        # (``cmd.fresh_slots()``, less a call; a refusal here changes nothing)
        slots = cmd.slots if cmd.packed_at == frees() else cmd.pack()
        args = list(cmd.args)
        lock = self._lock
        lock.acquire()                      # (not ``with``: an update's hot path, and half the cost)
        try:
            device_graph = self._device_graph
            if device_graph is not None and not device_graph.update_slots(n, cmd.kernel, slots):
                return False
            own.args, own.slots, own.packed_at = args, slots, cmd.packed_at
            if device_graph is None:        # (a device graph's host plan has no native entries)
                self._plan.repoint(n, own)
        finally:
            lock.release()
        return True

    def _update_whole(self, other) -> None:
        """Take the commands of ``other``, node by node in insertion order.  Refused
        (the graph unchanged) unless ``other`` is topologically identical: as many
        nodes, each of an updatable type and of its counterpart's type (kernels: the
        same kernel), and every edge between corresponding nodes.  The spec leaves
        a mismatched topology undefined; here it is ``errc::invalid``."""
        if self.owns_memory or any(n.kind in (node_type.async_malloc, node_type.async_free) for n in other.nodes):
            raise invalid("Graphs with graph-owned allocations cannot be updated as a whole.")
        if other.device != self.device:
            raise invalid("Cannot update using a graph created with a different device.")
        if other.context is not self.context:
            raise invalid("Cannot update using a graph created with a different context.")
        mine, theirs = self._nodes, list(other.nodes)
        for n in theirs:
            if n.kind not in WHOLE_UPDATABLE:
                raise invalid(f"Cannot update using a graph with a node_type::{n.kind.name} node: whole-graph update "
                              f"takes only kernel, host_task, barrier and empty nodes.")
        if len(mine) != len(theirs):
            raise invalid("Cannot update using a graph with a different topology. Mismatch found in the number "
                          "of nodes.")
        self._check_topology(mine, theirs)
        commands = {a: snapshot(b.command) for a, b in zip(mine, theirs) if a in self._commands}
        for cmd in commands.values():
            self._check_supported(cmd)
        with self._lock:
            if self._device_graph is not None:        # cuGraphExecUpdate_v2 first: a refusal changes nothing
                self._device_graph.update_whole({**self._commands, **commands})
            self._commands.update(commands)
            self._plan.build(self.order, self._commands)

    def _check_topology(self, mine: list, theirs: list) -> None:
        """Corresponding nodes of the same type (kernels: the same kernel) and edges."""
        my_index = {n: i for i, n in enumerate(mine)}
        their_index = {n: i for i, n in enumerate(theirs)}
        for i, (a, b) in enumerate(zip(mine, theirs)):
            if a.kind != b.kind:
                raise invalid("Cannot update using a graph with mismatched node types. Each pair of nodes must "
                              "have the same type.")
            if a.kind == node_type.kernel and a.command.kernel.name != b.command.kernel.name:
                raise invalid(f"Cannot update using a graph with mismatched kernel types. Source node type "
                              f"{b.command.kernel.name}, target node type {a.command.kernel.name}")
            my_preds = sorted(my_index[p] for p in self._preds[a])
            their_preds = sorted(their_index[p] for p in b.preds)
            if len(my_preds) != len(their_preds):
                raise invalid("Cannot update using a graph with a different topology. Mismatch found in the "
                              "number of edges.")
            if my_preds != their_preds:
                raise invalid(f"Cannot update using a graph with a different topology. Node {i} depends on nodes "
                              f"{their_preds} in the source graph but on nodes {my_preds} in this graph.")
