"""The host's way of running an executable graph: a plan of steps.

Runs of small kernels are handed to one native entry point
(``native.PlanRun``: ``msycl_run_plan``) that calls their launchers back to
back, so replaying them costs no Python per node and one ctypes call per run.
Large kernels, work-group kernels, host tasks and copies are steps of their
own, run in between in plan order.  An update of a kernel node whose kernel
and size class stay only repoints its entry, in place: the next replay runs
it with no plan rebuilt and nothing looked up again."""
from __future__ import annotations

import ctypes

from .. import assertions
from ..commands import KernelCommand
from ..native import PlanEntry, PlanRun
from .nodes import node_type

__all__ = ["Plan"]

#: nodes with nothing to run on the host
_NOTHING_TO_RUN = (node_type.empty, node_type.ext_oneapi_barrier, node_type.prefetch, node_type.memadvise,
                   node_type.async_malloc, node_type.async_free)


class Plan:
    """Steps: ["native", ``PlanRun``, [keep-alive of each entry]] or ["python", command];
    ``where[node]`` says where each node's command sits, for updates:
    ("native", step, index, the entry itself, its keep-alive) or ("python", step)."""

    SMALL = 16384       # kernels with fewer work-items run inside the native plan runner

    def __init__(self, device, context, small: int = SMALL):
        self.device, self.context, self.small = device, context, small
        self.steps: list = []
        self.where: dict = {}

    def build(self, order, commands: dict) -> None:
        steps, batch, keep, batch_nodes = [], [], [], []
        self.where = where = {}

        def flush():
            if batch:
                arr = (PlanEntry * len(batch))(*batch)
                for i, n in enumerate(batch_nodes):
                    where[n] = ("native", len(steps), i, arr[i], keep[i])
                steps.append(["native", PlanRun(arr, len(batch), [commands[n].kernel.name for n in batch_nodes]),
                              list(keep)])
                batch.clear()
                keep.clear()
                batch_nodes.clear()

        for n in order:
            cmd = commands[n]
            if cmd is None or n.kind in _NOTHING_TO_RUN:
                continue
            if self._native(cmd):
                entry, alive = self._entry(cmd)
                batch.append(entry)
                keep.append(alive)              # what the entry points to must stay alive
                batch_nodes.append(n)
                continue
            flush()
            where[n] = ("python", len(steps))
            steps.append(["python", cmd])
        flush()
        self.steps = steps

    def _native(self, cmd) -> bool:
        """Whether ``cmd`` runs inside the native plan: small kernels, but not work-group
        kernels, which launch through ``work_groups.launch`` (its checks and errors)."""
        if not isinstance(cmd, KernelCommand) or cmd.total >= self.small or cmd.kernel.reduces:
            return False                    # (a reduction may reset its result first: KernelCommand.run)
        linked, _ = cmd.kernel.program.linked_for(cmd.kernel.name, self.device, self.context)
        return cmd.kernel.name not in linked.groups

    def _entry(self, cmd: KernelCommand):
        linked, _ = cmd.kernel.program.linked_for(cmd.kernel.name, self.device, self.context)
        launcher = linked.launcher(cmd.kernel.name)
        entry = PlanEntry(launcher, ctypes.addressof(cmd.slots), cmd.total, ctypes.addressof(cmd.geometry))
        return entry, [cmd.slots, cmd.geometry, linked]

    def replace(self, n, cmd, before=None) -> bool:
        """Put ``n``'s new command in place; ``False`` when the plan must be rebuilt.
        A kernel node of the native plan whose kernel and size class stay (``before``:
        its command until now) only has its entry's slots and geometry repointed."""
        where = self.where.get(n)
        if (where is not None and where[0] == "native" and isinstance(cmd, KernelCommand) and
                isinstance(before, KernelCommand) and cmd.kernel is before.kernel and cmd.total < self.small and
                not cmd.kernel.reduces):
            entry, alive = where[3], where[4]
            entry.args = ctypes.addressof(cmd.slots)
            if cmd.geometry is not before.geometry or cmd.total != before.total:
                entry.total, entry.geom = cmd.total, ctypes.addressof(cmd.geometry)
            alive[0], alive[1] = cmd.slots, cmd.geometry      # (alive[2], the linked program, stays)
            return True
        if where is None:
            return cmd is None or n.kind in (node_type.empty, node_type.ext_oneapi_barrier)
        if where[0] == "python":
            if self._native(cmd):
                return False
            self.steps[where[1]][1] = cmd
            return True
        if not self._native(cmd):
            return False
        step = self.steps[where[1]]
        entry, alive = self._entry(cmd)
        step[1].entries[where[2]] = entry
        where[4][:] = alive
        step[1].kernels[where[2]] = cmd.kernel.name
        return True

    def repoint(self, n, cmd) -> None:
        """``n``'s command, changed in place to new slots (its kernel and range kept),
        runs from them (a step of its own runs the command itself: nothing to do)."""
        where = self.where.get(n)
        if where is not None and where[0] == "native":
            where[3].args = ctypes.addressof(cmd.slots)
            where[4][0] = cmd.slots

    def run(self, q) -> None:
        """Run the steps on the host (``q``: the queue the Python steps run on)."""
        for step in self.steps:
            if step[0] == "native":
                step[1]()
                assertions.check()      # a failed assert in one of its kernels (assertions.py)
            else:
                step[1].run(q)
