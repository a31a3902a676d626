"""Unified shared memory: ``malloc_device/malloc_shared/malloc_host/free``.

Every device runs on this CPU, so all three kinds are host memory; the kinds
are kept so programs read like SYCL.  An allocation is a NumPy array view (no
copy: ``numpy.asarray(buf)``), with ``.ptr`` the address kernels receive.
Freed allocations are remembered so that passing one to a kernel or a copy is
a clear ``errc::invalid`` instead of a crash.
"""
from __future__ import annotations

import threading

import numpy as np

from .errors import errc, exception

__all__ = ["usm_allocation", "malloc_device", "malloc_shared", "malloc_host", "free"]

_ALIGN = 64
#: address -> allocation: USM memory lives until ``free``, as in SYCL, even where
#: only its address is kept
_live: dict[int, "usm_allocation"] = {}
_lock = threading.Lock()


class usm_allocation:  # noqa: N801 - SYCL-style name
    """``count`` elements of ``dtype``; usable wherever SYCL takes a USM pointer."""

    def __init__(self, count: int, dtype, kind: str, queue=None):
        if not isinstance(count, (int, np.integer)) or count < 0:
            raise exception(errc.invalid, f"allocation size must be a non-negative integer, got {count!r}")
        self.dtype = np.dtype(dtype)
        self.count = int(count)
        self.kind = kind
        self.device = getattr(queue, "device", None)
        nbytes = max(self.count * self.dtype.itemsize, 1)
        raw = np.zeros(nbytes + _ALIGN, dtype=np.uint8)
        offset = (-raw.ctypes.data) % _ALIGN
        self._raw = raw
        self._bytes = raw[offset:offset + nbytes]
        self.ptr = self._bytes.ctypes.data
        self.freed = False
        with _lock:
            _live[self.ptr] = self

    @property
    def nbytes(self) -> int:
        return self.count * self.dtype.itemsize

    def check(self, what: str = "memory") -> None:
        if self.freed:
            raise exception(errc.invalid, f"{what} uses a USM allocation that was freed (address {self.ptr:#x})")

    @property
    def array(self) -> np.ndarray:
        """The allocation as a NumPy array (a view, not a copy)."""
        self.check()
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


def malloc_device(count: int, dtype=np.uint8, queue=None) -> usm_allocation:
    return usm_allocation(count, dtype, "device", queue)


def malloc_shared(count: int, dtype=np.uint8, queue=None) -> usm_allocation:
    return usm_allocation(count, dtype, "shared", queue)


def malloc_host(count: int, dtype=np.uint8, queue=None) -> usm_allocation:
    return usm_allocation(count, dtype, "host", queue)


def free(allocation: usm_allocation, queue=None) -> None:
    if not isinstance(allocation, usm_allocation):
        raise exception(errc.invalid, f"free() expects a USM allocation, got {type(allocation).__name__}")
    allocation.check("free()")
    allocation.freed = True
    with _lock:
        _live.pop(allocation.ptr, None)
    allocation._raw = allocation._bytes = None
