"""Commands: what a command group records and how it runs, for queues and command graphs alike.

A ``Command`` is one recorded command: its kind (a graph ``node_type`` name)
and how to run it.  A ``KernelCommand`` is a kernel launch with its range and
arguments packed into 8-byte slots.

An argument may be a ``DynamicValue`` instead of a value: it is resolved
(``resolve()``) every time the command packs its arguments.  Two kinds exist:
the graph extension's ``dynamic_parameter`` (``graph/dynamic.py``), which only
command-graph nodes accept (``graph_only``), and the ``GraphPointer`` an
``async_malloc`` node returns, whose memory is chosen when the node joins its
graph.  ``queue.py`` and ``graph/`` both build on this module; it imports
neither.

A command lists the USM allocations it uses (``uses``; a kernel's are its
arguments) so that an executable graph can refuse to replay one whose memory
was freed, before anything runs (``check_memory``).
"""
from __future__ import annotations

import ctypes
import struct

import numpy as np

from .errors import errc, exception
from .memory import allocation_at, usm_allocation
from .program import kernel as Kernel
from .ranges import as_range, nd_range
from .reductions import prepare as prepare_reductions, reduction

__all__ = ["DynamicValue", "Command", "KernelCommand", "GraphPointer", "check_kernel", "launch_geometry", "check_memory"]


class DynamicValue:
    """A kernel argument resolved when the command's arguments are packed."""

    #: only command-graph nodes accept it (``dynamic_parameter``)
    graph_only = False

    def resolve(self):
        raise NotImplementedError


class Command:
    """One recorded command: what it is (a graph ``node_type`` name) and how to run it."""

    def __init__(self, kind: str, run=None, label: str = "", uses=()):
        self.kind, self._run, self.label = kind, run, label
        self.uses = uses    # USM allocations (None: other memory; an executable graph: a sub-graph) it touches

    def run(self, q) -> None:
        if self._run is not None:
            self._run()

    def describe(self) -> str:
        return self.label

    @property
    def memory(self):
        """The memory it touches (``check_memory``)."""
        return self.uses


def check_kernel(k) -> None:
    """``errc::invalid`` unless ``k`` is a kernel."""
    if not isinstance(k, Kernel):
        raise exception(errc.invalid, f"expected a kernel (program.kernel(name)), got {type(k).__name__}")


def launch_geometry(k: Kernel, r):
    """(work-item count, geometry array) of a launch of ``k`` over ``r``, checked."""
    if r is None:
        if k.item is not None:
            raise exception(errc.invalid, f"kernel '{k.name}' takes {k.item}: launch it with parallel_for")
        return 1, _GEOMETRY()
    geometry = _GEOMETRY()              # (filled by pack_into: a ctypes array built from values costs ~4x more)
    if type(r) is int and 0 <= r <= _MAX_ITEMS and k.item == "id<1>":        # the common cases, directly
        _SIX.pack_into(geometry, 0, r, 0, 0, 1, 1, 1)
        return r, geometry
    if type(r) is nd_range and k.item == "nd_item<1>" and len(r.local_range.dims) == 1:
        g, l = r.global_range.dims[0], r.local_range.dims[0]
        _SIX.pack_into(geometry, 0, g, 0, 0, l, 1, 1)
        return g, geometry
    r = as_range(r)
    if k.item is None:
        raise exception(errc.invalid, f"kernel '{k.name}' takes no work-item index: launch it with single_task")
    is_nd = isinstance(r, nd_range)
    if k.item.startswith("nd_item") != is_nd:
        want = "an nd_range" if k.item.startswith("nd_item") else "a range"
        raise exception(errc.nd_range, f"kernel '{k.name}' takes {k.item}: launch it over {want}")
    glob = r.global_range if is_nd else r
    n = len(glob.dims)
    if n != k.dims:
        raise exception(errc.nd_range, f"kernel '{k.name}' takes {k.item} but the range has {n} dimensions")
    _SIX.pack_into(geometry, 0, *glob.dims, *_PAD[n], *(r.local_range.dims if is_nd else (1,) * n), *_ONES[n])
    return glob.size(), geometry


_MAX_ITEMS = (1 << 63) - 1          # a launch counts work-items in 64-bit signed integers (ranges.py)
_GEOMETRY = ctypes.c_int64 * 6
_SIX = struct.Struct("6q")
#: padding of a range of n dimensions to 3: global extents 0, local extents 1
_PAD, _ONES = {n: (0,) * (3 - n) for n in (1, 2, 3)}, {n: (1,) * (3 - n) for n in (1, 2, 3)}


class KernelCommand(Command):
    """A kernel launch: the kernel, its range and arguments (dynamic values
    resolved when the arguments are packed)."""

    def __init__(self, k: Kernel, r, args):
        check_kernel(k)
        super().__init__("kernel", label=k.name)
        self.kernel, self.range, self.args = k, r, list(args)
        self.total, self.geometry = launch_geometry(k, r)
        self.slots = self.pack()

    def pack(self):
        """Slots for the current values of the arguments."""
        return self.kernel.pack([a.resolve() if isinstance(a, DynamicValue) else a for a in self.args])

    def set_range(self, r) -> None:
        self.range = r
        self.total, self.geometry = launch_geometry(self.kernel, r)

    def run(self, q) -> None:
        if self.kernel.reduces:     # initialize_to_identity (reductions.py); a GPU queue does it on its stream
            getattr(q, "prepare_reductions", prepare_reductions)(self.args)
        q._launch(self.kernel, self.slots, self.total, self.geometry)

    def describe(self) -> str:
        return ", ".join(f"{i}) {ty} = {a!r}" for i, (ty, a) in enumerate(zip(self.kernel.params, self.args)))

    @property
    def memory(self):
        """Its arguments; an integer address for a pointer as the live allocation
        holding it, or its ``FreedAddress``; a reduction as its result's allocation."""
        out = []
        for ty, a in zip(self.kernel.params, self.args):
            if isinstance(a, DynamicValue) and not isinstance(a, GraphPointer):
                a = a.resolve()
            if isinstance(a, reduction):          # a reducer writes its result there
                a = a.ptr
            if ty.endswith("*") and isinstance(a, (int, np.integer)) and a:
                a = allocation_at(int(a)) or FreedAddress(int(a))
            out.append(a)
        return out


class FreedAddress:
    """An address no live allocation holds any more."""

    def __init__(self, address: int):
        self.address = address

    def check(self, what: str) -> None:
        raise exception(errc.invalid, f"{what} uses address {self.address:#x}, which is not inside a live "
                                      f"USM allocation (freed?)")


def check_memory(commands, what: str) -> None:
    """``errc::invalid`` if any of ``commands`` (pairs of a name and a command) uses a
    freed USM allocation; an executable graph among the memory (a sub-graph) is
    checked through its own commands."""
    for name, cmd in commands:
        for m in (cmd.memory if cmd is not None else ()):
            if isinstance(m, DynamicValue) and not isinstance(m, GraphPointer):
                m = m.resolve()
            if isinstance(m, FreedAddress) or (isinstance(m, usm_allocation) and m.freed):
                m.check(f"{what}: {name}")      # (the message spelled only for a refusal)
            elif hasattr(m, "memory_in_use"):
                check_memory(m.memory_in_use(), f"{what}: {name}")


class GraphPointer(usm_allocation, DynamicValue):
    """The pointer an ``async_malloc`` node returns; its memory is assigned when the
    node joins the graph (before any later node can use it).

    It is a USM allocation wherever one is taken (``memcpy``, ``memset``, ``fill``,
    ``copy``, kernel arguments, host tasks): every attribute an allocation has is
    read from the graph-owned block (``resolve()``), so the checks and views of
    ``usm_allocation`` apply to the block unchanged.  It cannot be changed or
    freed itself (``async_free`` releases it, inside its graph)."""

    def __init__(self, cmd: Command):
        object.__setattr__(self, "_cmd", cmd)

    def resolve(self) -> usm_allocation:
        if self._cmd.allocation is None:
            raise exception(errc.invalid, "graph-owned memory is used before its async_malloc node was added")
        return self._cmd.allocation

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.resolve(), name)

    def __setattr__(self, name, value):
        raise exception(errc.invalid, "graph-owned memory (async_malloc) cannot be freed or changed outside its "
                                      "graph: free it with an async_free node")

    def __repr__(self):
        block = self._cmd.allocation
        return f"<graph-owned {block!r}>" if block is not None else "<graph-owned memory, not yet allocated>"
