"""Unified shared memory: ``malloc_device/malloc_shared/malloc_host/free``.

Every device runs on this CPU, so all three kinds are host memory; the kinds
are kept so programs read like SYCL.  An allocation is a NumPy array view (no
copy: ``numpy.asarray(buf)``), with ``.ptr`` the address kernels receive.
Freed allocations are remembered so that passing one to a kernel or a copy is
a clear ``errc::invalid`` instead of a crash.

Each allocation is its own anonymous mapping whose data ends (rounded up to
the 64-byte alignment) where an inaccessible region begins, as
electric-fence-style allocators do, but larger than their one page: as large
as the allocation and at least 4 GiB (address space only: it takes no memory).
A kernel launched over a range larger than its allocation splits the range over
several threads, and a thread's piece can start far past the end; with the
large region it still faults inside its fault guard (``errc::runtime``) instead
of writing into whatever is mapped there.  The mapping lives as long as the
allocation or any NumPy view of it, so a view kept after ``free`` never reads
unmapped memory.  ``bench/bench_usm.py`` times this against plain ``malloc``.  Where ``mmap`` cannot be called (not Linux or macOS), allocations
are NumPy buffers without a guard.
"""
from __future__ import annotations

import bisect
import ctypes
import mmap
import os
import sys
import threading

import numpy as np

from . import dlpack, host_access
from .errors import errc, exception
from .validate import require_dtype, require_queue

__all__ = ["usm_allocation", "malloc_device", "malloc_shared", "malloc_host", "free", "allocation_at",
           "allocation_starting_at", "frees"]

_ALIGN = 64
_PROT_NONE = 0
_MAP_NORESERVE = 0x4000             # Linux: a reservation that takes no memory or swap
_MAP_FIXED = 0x10
#: the inaccessible region after each allocation: at least 4 GiB and as large as the
#: allocation (address space only), so that a kernel running far past its allocation
#: on any worker thread, not only next to the end, faults instead of writing into
#: whatever is mapped there.  Address space is not the limit it seems: the kernel's
#: map count (about 65,000 areas, two per allocation) allows ~32,000 allocations,
#: and 32,000 x 4 GiB is within x86-64's 128 TiB.
_GUARD_MIN = 4 << 30
_MADV_HUGEPAGE = 14                 # Linux: back with transparent huge pages (fewer TLB misses and faults)
_HUGE = 4 << 20
#: address -> allocation: USM memory lives until ``free``, as in SYCL, even where
#: only its address is kept
_live: dict[int, "usm_allocation"] = {}
_starts: list[int] = []             # the keys of ``_live``, sorted (``allocation_at``)
_frees = 0                          # how many ``free`` calls there have been (``frees``)
_lock = threading.Lock()


class _GuardedMapping:
    """``size`` zeroed bytes ending where a ``PROT_NONE`` region begins; unmapped when the
    last reference goes (every NumPy view of it holds one).

    Small mappings are kept for reuse (``_SPARE``, zeroed again when reused):
    a map, a protect and an unmap cost tens of microseconds, ten times a
    ``memset`` of 64 KiB."""

    __slots__ = ("base", "length", "start", "size", "data")

    def __init__(self, size: int):
        self.size, self.base = size, 0      # no mapping yet (``__del__`` if mapping fails)
        page = mmap.PAGESIZE
        data = -(-max(size, 1) // page) * page
        self.data, self.length = data, data + max(data, _GUARD_MIN)
        spare = _SPARE.get(self.length)
        self.base = spare.pop() if spare else self._map(size, data)
        self.start = self.base + data - (-(-max(size, 1) // _ALIGN) * _ALIGN)

    @property
    def __array_interface__(self):
        """NumPy views of the data: each holds this mapping."""
        return {"data": (self.start, False), "shape": (self.size,), "typestr": "|u1", "version": 3}

    def _map(self, size: int, data: int) -> int:
        # the whole reservation inaccessible and unbacked, then the data mapped over
        # its start as ordinary memory (counted by the kernel's overcommit rules, so
        # an allocation the machine cannot back fails here, not at first touch)
        _HEADROOM.claim(size, self.length)
        base = _libc.mmap(None, self.length, _PROT_NONE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE, -1, 0)
        if base in (None, ctypes.c_void_p(-1).value):
            _HEADROOM.release(self.length)
            err = ctypes.get_errno()
            raise exception(errc.memory_allocation, f"cannot allocate {size} bytes of USM: {os.strerror(err)}")
        got = _libc.mmap(ctypes.c_void_p(base), data, mmap.PROT_READ | mmap.PROT_WRITE,
                         mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_FIXED, -1, 0)
        if got != base:
            err = ctypes.get_errno()
            _libc.munmap(ctypes.c_void_p(base), self.length)
            _HEADROOM.release(self.length)
            raise exception(errc.memory_allocation, f"cannot allocate {size} bytes of USM: {os.strerror(err)}")
        if data >= _HUGE and hasattr(_libc, "madvise"):     # as NumPy does for its large arrays
            _libc.madvise(ctypes.c_void_p(base), data, _MADV_HUGEPAGE)
        return base

    def __del__(self):
        if _libc is None or not self.base:
            return
        spare = _SPARE.setdefault(self.length, []) if self.data <= _SPARE_LIMIT else None
        if spare is not None and len(spare) < _SPARE_COUNT:
            ctypes.memset(self.base, 0, self.data)
            spare.append(self.base)
        else:
            _libc.munmap(ctypes.c_void_p(self.base), self.length)
            _HEADROOM.release(self.length)
        self.base = 0


class _Headroom:
    """USM never takes the process's last memory maps or address space.

    Each allocation is two of the kernel's memory maps (``vm.max_map_count``,
    65,530 by default) and at least 4 GiB of address space (x86-64 has 128
    TiB).  Were USM to take them all, the next thing that maps memory would
    fail - Python's allocator, and LLVM, which aborts the process when it
    cannot map a JIT-compiled program (``Unable to allocate section memory``).
    So allocations stop, with ``errc::memory_allocation``, where a reserve of
    both remains: an eighth of each limit, and at least 8,192 maps, beyond what
    the process used when its first allocation was made."""

    def __init__(self):
        self.maps = self.space = None       # what USM may still take (measured at first use)
        self.lock = threading.RLock()       # reentrant: a mapping's ``__del__`` may run inside ``claim``

    def _measure(self) -> None:
        limit, used, top = 65530, 0, 1 << 47
        try:
            with open("/proc/sys/vm/max_map_count") as fh:
                limit = int(fh.read())
            with open("/proc/self/maps") as fh:
                ends = [int(line.split("-", 1)[1].split(None, 1)[0], 16) for line in fh]
            used = len(ends)
            top = 1 << max(e for e in ends if e < 1 << 62).bit_length()    # the user address space
        except (OSError, ValueError):
            pass
        try:
            import resource
            soft = resource.getrlimit(resource.RLIMIT_AS)[0]
            if 0 < soft < top:
                top = soft
        except (ImportError, OSError, ValueError):
            pass
        self.maps = limit - used - max(8192, limit // 8)
        self.space = top - top // 8 - _vsize()

    def claim(self, size: int, length: int) -> None:
        with self.lock:
            self._claim(size, length)

    def _claim(self, size: int, length: int) -> None:
        if self.maps is None:
            self._measure()
        if self.maps < 2 or self.space < length:
            why = "memory maps" if self.maps < 2 else "address space"
            raise exception(errc.memory_allocation, f"cannot allocate {size} bytes of USM: the process's {why} "
                                                    f"would run out (the runtime keeps a reserve for compiling "
                                                    f"and running kernels)")
        self.maps -= 2
        self.space -= length

    def release(self, length: int) -> None:
        with self.lock:
            self.maps += 2
            self.space += length


def _vsize() -> int:
    """The process's address space in use now (bytes; 0 where unknown)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * mmap.PAGESIZE
    except (OSError, ValueError, IndexError):
        return 0


_HEADROOM = _Headroom()


#: mapping length -> bases of unused mappings of that length (zeroed)
_SPARE: dict[int, list[int]] = {}
_SPARE_LIMIT = 64 * 1024           # mappings of this much data or less are kept
_SPARE_COUNT = 64                   # of each length


def _load_libc():
    if not (sys.platform.startswith("linux") or sys.platform == "darwin"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return libc


_libc = _load_libc()


def _raw_bytes(nbytes: int) -> tuple[object, np.ndarray, int]:
    """(owner, a 64-byte aligned uint8 array of ``nbytes``, its address) for one allocation."""
    if _libc is not None:
        owner = _GuardedMapping(nbytes)
        return owner, np.asarray(owner), owner.start
    try:
        raw = np.zeros(nbytes + _ALIGN, dtype=np.uint8)
    except MemoryError:
        raise exception(errc.memory_allocation, f"cannot allocate {nbytes} bytes of USM") from None
    offset = (-raw.ctypes.data) % _ALIGN
    return raw, raw[offset:offset + nbytes], raw.ctypes.data + offset


def checked_shape(count, dtype) -> tuple[int, np.dtype]:
    """``(count, dtype)`` of an allocation, or ``errc::invalid`` saying what is wrong."""
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
        raise exception(errc.invalid, f"allocation size must be a non-negative integer, got {count!r}")
    return int(count), require_dtype(dtype, "element type")


class usm_allocation:  # noqa: N801 - SYCL-style name
    """``count`` elements of ``dtype``; usable wherever SYCL takes a USM pointer."""

    def __init__(self, count: int, dtype, kind: str, queue=None):
        self.count, self.dtype = checked_shape(count, dtype)
        self.kind = kind
        self.device = queue.device if queue is not None else None     # (None: host memory of no queue)
        nbytes = max(self.count * self.dtype.itemsize, 1)
        if nbytes >= 1 << 62:
            raise exception(errc.memory_allocation, f"cannot allocate {nbytes} bytes of USM")
        self._raw, self._bytes, self.ptr = _raw_bytes(nbytes)
        self.freed = False
        register(self)

    @property
    def nbytes(self) -> int:
        return self.count * self.dtype.itemsize

    #: whether the host can read and write it at its address (a GPU's ``malloc_device``
    #: memory cannot: copies of it go through its device's back end, ``Backend.copy_now``)
    host_accessible = True

    def _release(self) -> None:
        """Give the memory back to whoever made it (``free``): host memory is unmapped
        when its last view goes, so nothing here; a back end's allocation class frees
        its driver's memory."""

    def check(self, what: str = "memory") -> None:
        if self.freed:
            raise exception(errc.invalid, self.freed_text(what))

    def freed_text(self, what: str) -> str:
        return f"{what} uses a USM allocation that was freed (address {self.ptr:#x})"

    @property
    def array(self) -> np.ndarray:
        """The allocation as a NumPy array (a view, not a copy): every host access
        passes here (``host_access.check`` where that check is on)."""
        self.check()
        if host_access.ENABLED:
            host_access.check(self)
        return self._bytes[:self.nbytes].view(self.dtype)

    def __array__(self, dtype=None, copy=None):
        a = self.array
        return a if dtype is None else a.astype(dtype, copy=False)

    def __len__(self):
        return self.count

    def __getitem__(self, i):
        return self.array[i]

    def __setitem__(self, i, value):
        self.array[i] = value

    def __repr__(self):
        state = "freed" if self.freed else f"{self.ptr:#x}"
        return f"<usm {self.kind} {self.count} x {self.dtype} at {state}>"

    # -- DLPack (``dlpack.py``): other libraries take the memory without a copy

    def __dlpack_device__(self) -> tuple[int, int]:
        """``(kDLCPU, 0)``: the devices of this class run on this CPU, in host memory."""
        return (dlpack.CPU, 0)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of this memory (one dimension of ``count`` elements).
        The consumer's deleter call releases what keeps the memory mapped, so a
        consumer's view stays valid after ``free``; ``stream`` must be ``None`` or
        -1 for host memory; ``copy=True`` is refused (zero-copy only)."""
        if self.freed:
            self.check("__dlpack__")
        device = self.__dlpack_device__()
        if dl_device is not None and tuple(dl_device) != device:
            if tuple(dl_device) == (dlpack.CPU, 0) and device[0] in (dlpack.CUDA_HOST, dlpack.CUDA_MANAGED):
                device = (dlpack.CPU, 0)        # pinned and managed memory are host memory too
            else:
                raise exception(errc.invalid, f"__dlpack__ cannot export {dlpack.device_text(*device)} memory to "
                                              f"{dlpack.device_text(*tuple(dl_device))}: copy it with queue.memcpy")
        if copy:
            raise exception(errc.invalid, "__dlpack__(copy=True): USM memory is exported without a copy only")
        self._dlpack_sync(stream)
        return dlpack.export(self.ptr, self.count, self.dtype, device, self._dlpack_keep(),
                             versioned=max_version is not None and max_version[0] >= 1,
                             on_release=self._dlpack_released)

    def _dlpack_sync(self, stream) -> None:
        """Order the consumer's ``stream`` after this memory's writes (host memory: nothing to order)."""
        if stream not in (None, -1):
            raise exception(errc.invalid, f"__dlpack__(stream={stream!r}): host memory takes no stream (None)")

    def _dlpack_keep(self):
        """What keeps the memory valid while a consumer holds it: the mapping."""
        return self._raw

    #: a consumer released its view (a device's allocation may free its memory now: ``cuda/memory.py``)
    _dlpack_released = None


def _allocate(count, dtype, kind: str, queue) -> usm_allocation:
    """An allocation of ``kind`` for ``queue``'s device: a device with its own
    memory (an NVIDIA GPU: ``cuda/memory.py``) allocates it, others use host memory."""
    require_queue(queue, f"malloc_{kind} queue", optional=True)
    if queue is None:
        return usm_allocation(count, dtype, kind, None)
    return queue.device.impl.malloc(count, dtype, kind, queue)


def malloc_device(count: int, dtype=np.uint8, queue=None) -> usm_allocation:
    return _allocate(count, dtype, "device", queue)


def malloc_shared(count: int, dtype=np.uint8, queue=None) -> usm_allocation:
    return _allocate(count, dtype, "shared", queue)


def malloc_host(count: int, dtype=np.uint8, queue=None) -> usm_allocation:
    return _allocate(count, dtype, "host", queue)


def free(allocation: usm_allocation, queue=None) -> None:
    if not isinstance(allocation, usm_allocation):
        raise exception(errc.invalid, f"free() expects a USM allocation, got {type(allocation).__name__}")
    require_queue(queue, "free queue", optional=True)
    allocation.check("free()")
    allocation._release()           # memory a device's driver owns goes back to it
    global _frees
    allocation.freed = True
    with _lock:
        if _live.pop(allocation.ptr, None) is not None:
            del _starts[bisect.bisect_left(_starts, allocation.ptr)]
        _frees += 1
    allocation._raw = allocation._bytes = None


def register(allocation: usm_allocation) -> None:
    """Make ``allocation`` live (found by its address), whoever made its memory."""
    with _lock:
        if _live.get(allocation.ptr) is None:      # (an address a driver hands out again: one entry)
            bisect.insort(_starts, allocation.ptr)
        _live[allocation.ptr] = allocation


def allocation_starting_at(address: int) -> "usm_allocation | None":
    """The live allocation that starts at ``address``, if any (one dictionary look-up)."""
    return _live.get(address)


def allocation_at(address: int) -> "usm_allocation | None":
    """The live allocation whose bytes hold ``address`` (its start or inside it), if any."""
    with _lock:
        i = bisect.bisect_right(_starts, address) - 1
        a = _live.get(_starts[i]) if i >= 0 else None
    return a if a is not None and address < a.ptr + max(a.nbytes, 1) else None


def frees() -> int:
    """How many allocations have been freed so far: a cheap "has anything been
    freed since" test for those who cache a check (executable graphs)."""
    return _frees
