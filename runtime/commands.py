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

from .arguments import repack_slots
from .errors import errc, exception
from .memory import _allocate, allocation_at, free, frees, usm_allocation
from .program import kernel as Kernel
from .ranges import as_range, nd_range
from .reductions import reduction
from .work_groups import check_local_size

__all__ = ["PLAIN", "foreign", "DynamicValue", "Command", "KernelCommand", "SubgraphCommand", "AsyncMalloc", "AsyncFree",
           "GraphPointer", "check_kernel",
           "check_launch", "launch_geometry", "check_memory"]


class DynamicValue:
    """A kernel argument resolved when the command's arguments are packed."""

    #: only command-graph nodes accept it (``dynamic_parameter``)
    graph_only = False

    def resolve(self):
        raise NotImplementedError


#: argument types that are never another library's memory (the launch fast paths test this first)
PLAIN = frozenset({int, float, bool, type(None), np.float16, np.float32, np.float64, np.int8, np.int16, np.int32,
                    np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_, usm_allocation})


def foreign(value) -> bool:
    """Whether ``value`` is memory of another library that ``adopt`` would take."""
    if type(value) in PLAIN or isinstance(value, (usm_allocation, DynamicValue)):
        return False
    return (hasattr(value, "__dlpack__") or hasattr(value, "__cuda_array_interface__")
            or hasattr(value, "__array_interface__") or isinstance(value, (memoryview, bytearray)))


class Command:
    """One recorded command: what it is (a graph ``node_type`` name) and how to run it.

    ``details``: (name, value) pairs that ``print_graph(verbose=True)`` shows
    (addresses, sizes, values); ``not_in_graph``: why it cannot be a command-graph
    node (``None``: it can)."""

    not_in_graph: str | None = None

    def __init__(self, kind: str, run=None, label: str = "", uses=(), details=()):
        self.kind, self._run, self.label = kind, run, label
        self.uses = uses    # USM allocations (None: other memory; an executable graph: a sub-graph) it touches
        self.details = details

    def bind(self, graph, q) -> None:
        """Its command group's destination is known (``handler.close``): ``graph``,
        or ``None`` when ``q`` runs it now.  What depends on the destination is
        decided here and nowhere else, so the order of a command group's calls
        cannot change it; a refusal changes nothing."""
        if graph is not None and self.not_in_graph:
            raise exception(errc.invalid, self.not_in_graph)

    def run(self, q) -> None:
        if self._run is not None:
            self._run()

    def describe(self) -> str:
        return " ".join(f"{name}: {value}" for name, value in self.details) if self.details else self.label

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


def check_launch(k: Kernel, geometry, device) -> None:
    """The kernel properties of a launch of ``k`` with ``geometry`` on ``device``:
    ``reqd_work_group_size`` (``work_groups.check_local_size``, ``errc::nd_range``),
    the check an eager launch makes.  A kernel ``device`` has no image for is left
    to ``finalize`` (``feature_not_supported``)."""
    if k.item is None or not k.item.startswith("nd_item"):
        return
    try:
        k.required_work_group_size(device)
    except exception as err:
        if err.code() == errc.kernel_not_supported:
            return
        raise
    check_local_size(k, geometry, device)


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
        self.repack()

    def pack(self):
        """Slots for the current values of the arguments."""
        return self.kernel.pack([a.resolve() if isinstance(a, DynamicValue) else a for a in self.args])

    def repack(self) -> None:
        """``slots`` for the current values of the arguments; ``packed_at`` says when
        (``memory.frees()`` before the packing): while no allocation has been freed
        since, the slots point to live memory (``fresh_slots``)."""
        packed_at = frees()
        self.slots = self.pack()
        self.packed_at = packed_at

    def repacked(self, indexes, value):
        """New slots with ``value`` (resolved) packed for the arguments at ``indexes``,
        the others kept (a dynamic parameter's update: its caller sets ``slots``,
        whose ``packed_at`` stays that of the oldest); nothing changes here.  Slots
        are never written in place (``snapshot`` shares them)."""
        k = self.kernel
        return repack_slots(k.params, indexes, value, self.slots, k._where, k.handler, k.packing)

    def fresh_slots(self):
        """Its slots, packed again only if an allocation was freed since they were
        (the packing refuses freed memory)."""
        return self.slots if self.packed_at == frees() else self.pack()

    def set_range(self, r, device=None) -> None:
        """A new range; with ``device`` (a graph node's), checked against the kernel's
        properties first (``check_launch``): a refusal keeps the old one."""
        total, geometry = launch_geometry(self.kernel, r)
        if device is not None:
            check_launch(self.kernel, geometry, device)
        self.range, self.total, self.geometry = r, total, geometry

    def bind(self, graph, q) -> None:
        """In a graph, the kernel's launch properties hold when the node is made,
        as an eager launch checks them when it is submitted."""
        if graph is not None:
            check_launch(self.kernel, self.geometry, graph.device)

    def run(self, q) -> None:
        if self.kernel.reduces:     # initialize_to_identity (reductions.py); a GPU queue does it on its stream
            q.prepare_reductions(self.args)
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


class SubgraphCommand(Command):
    """A sub-graph node (``handler.ext_oneapi_graph``): the executable graph runs on
    the queue that runs this command (a parent graph's replay queue, or the queue
    it was submitted to), never on the queue of the handler that made it.  An
    explicit graph's handler has the graph's own queue: on a GPU that is
    another stream, unordered with the parent's commands and not waited for
    by the parent's wait (issue 31: ``test_scenarios_both_ways[explicit]``)."""

    def __init__(self, graph):
        super().__init__("subgraph", None, "graph", uses=(graph,))
        self.graph = graph

    def run(self, q) -> None:
        self.graph._execute(q)


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


class AsyncMalloc(Command):
    """``async_malloc``: ``size`` elements of ``dtype`` of USM ``kind``, with a pool's
    ``zero_init`` and ``read_only``.  Its pointer (``GraphPointer``) is handed out
    at once; its memory is chosen by the destination (``bind``): allocated now
    for a queue that runs it, a block of the graph's pool when its node joins a
    graph, where only device memory is allowed."""

    def __init__(self, size: int, dtype, kind: str, zero_init: bool = False, read_only: bool = False):
        super().__init__("async_malloc", None, f"async_malloc {size}",
                         details=(("Size", size * np.dtype(dtype).itemsize), ("Kind", kind)))
        self.request = (int(size), np.dtype(dtype), bool(zero_init), bool(read_only))
        self.usm_kind = kind
        self.allocation = None
        self.in_graph = None            # known once bound
        self.pointer = GraphPointer(self)

    def bind(self, graph, q) -> None:
        if graph is not None and self.usm_kind != "device":
            raise exception(errc.invalid, f"graph allocation nodes take only device memory (usm::alloc::device), "
                                          f"not usm::alloc::{self.usm_kind}")
        if graph is None:
            self.allocation = _allocate(self.request[0], self.request[1], self.usm_kind, q)
        self.in_graph = graph is not None


class AsyncFree(Command):
    """``async_free(ptr)``: in a graph, a node whose block a later ``async_malloc``
    depending on it may reuse; on a queue, the memory is freed when it runs."""

    def __init__(self, ptr):
        try:
            where = f"{ptr.ptr:#x}"
        except (exception, AttributeError, TypeError):      # (not memory, or not allocated yet)
            where = repr(ptr)
        super().__init__("async_free", None, "async_free", details=(("Ptr", where),))
        self.frees = ptr

    def bind(self, graph, q) -> None:
        ptr = self.frees
        if graph is None and isinstance(ptr, usm_allocation):
            self._run = lambda: None if ptr.freed else free(ptr)


class GraphPointer(usm_allocation, DynamicValue):
    """The pointer an ``async_malloc`` returns; its memory is chosen when its command
    group's destination is known (``AsyncMalloc.bind``): at submission for a
    queue that runs it, when the node joins its graph (before any later node can
    use it) for a graph.

    It is a USM allocation wherever one is taken (``memcpy``, ``memset``, ``fill``,
    ``copy``, kernel arguments, host tasks): every attribute an allocation has is
    read from its block (``resolve()``), so the checks and views of
    ``usm_allocation`` apply to the block unchanged.  Memory a queue allocated
    is the user's (``free`` and ``async_free`` release it); graph-owned memory
    cannot be changed or freed itself (an ``async_free`` node releases it, inside
    its graph)."""

    def __init__(self, cmd: AsyncMalloc):
        object.__setattr__(self, "_cmd", cmd)

    def resolve(self) -> usm_allocation:
        block = object.__getattribute__(self, "_cmd").allocation
        if block is None:
            raise exception(errc.invalid, "async_malloc memory is used before its command group was submitted "
                                          "(or, in a graph, before its node was added)")
        return block

    def __getattribute__(self, name):
        """Every attribute but the pointer's own is the block's, looked up on the
        block: the block's class decides (a GPU's ``cuda_allocation`` has its own
        ``array``, ``host_accessible``, ``_release``, DLPack and CUDA array
        interfaces), never ``usm_allocation``'s defaults that this class inherits
        (issue 31: ``numpy.asarray`` of GPU memory from ``async_malloc`` read the
        host block that GPU memory has not)."""
        if name in _POINTER_OWN:
            return object.__getattribute__(self, name)
        return getattr(GraphPointer.resolve(self), name)

    def __setattr__(self, name, value):
        if self._cmd.in_graph is False:         # a queue's allocation: the user's to free
            setattr(self.resolve(), name, value)
            return
        raise _graph_owned()

    def _release(self) -> None:
        """``free``: the block's own release for a queue's allocation; graph-owned
        memory is refused before anything is released."""
        if self._cmd.in_graph is not False:
            raise _graph_owned()
        self.resolve()._release()

    def __repr__(self):
        block = self._cmd.allocation
        if self._cmd.in_graph is False:
            return repr(block)
        return f"<graph-owned {block!r}>" if block is not None else "<graph-owned memory, not yet allocated>"


def _graph_owned() -> exception:
    return exception(errc.invalid, "graph-owned memory (async_malloc) cannot be freed or changed outside its "
                                   "graph: free it with an async_free node")


#: what a ``GraphPointer`` answers itself (everything else is its block's)
_POINTER_OWN = frozenset({"_cmd", "resolve", "_release", "graph_only", "__class__", "__dict__", "__setattr__", "__repr__",
                          "__getattribute__", "__init__", "__reduce__", "__reduce_ex__", "__eq__", "__ne__",
                          "__hash__"})
