"""USM on an NVIDIA GPU: ``malloc_device`` is ``cuMemAlloc`` (not host-readable),
``malloc_host`` ``cuMemAllocHost`` (pinned) and ``malloc_shared``
``cuMemAllocManaged``, both NumPy views.  A managed allocation larger than the
card's free memory is refused (``errc::memory_allocation``): oversubscribing
managed memory can hang the GPU.  ``free`` returns the memory to the driver.
A view kept after ``free`` must not be used (the driver owns that memory)."""
from __future__ import annotations

import ctypes

import numpy as np

from ..backend import checked_shape, errc, exception, register, usm_allocation
from . import driver

__all__ = ["cuda_allocation"]

_CU_MEM_ATTACH_GLOBAL = 1


class cuda_allocation(usm_allocation):  # noqa: N801 - SYCL-style name
    """``count`` elements of ``dtype`` in GPU memory of kind ``kind``."""

    def __init__(self, count: int, dtype, kind: str, queue):
        (self.count, self.dtype), self.kind = checked_shape(count, dtype), kind
        self.device = queue.device
        nbytes = max(self.count * self.dtype.itemsize, 1)
        dev = self.device
        dev.activate()
        what = f"malloc_{kind} of {nbytes} bytes on {dev.name}"
        if kind == "device":
            p = ctypes.c_uint64()
            driver.call("cuMemAlloc_v2", ctypes.byref(p), nbytes, what=what)
            self.ptr = p.value
        elif kind == "host":
            p = ctypes.c_void_p()
            driver.call("cuMemAllocHost_v2", ctypes.byref(p), nbytes, what=what)
            self.ptr = p.value
        else:
            free = dev.free_memory()
            if nbytes > free:
                raise exception(errc.memory_allocation, f"{what} refused: the card has {free} bytes free "
                                                        f"(oversubscribed managed memory can hang the GPU)")
            p = ctypes.c_uint64()
            driver.call("cuMemAllocManaged", ctypes.byref(p), nbytes, _CU_MEM_ATTACH_GLOBAL, what=what)
            self.ptr = p.value
        self._raw = self._bytes = None
        self._nbytes_alloc = nbytes
        self.freed = False
        register(self)

    @property
    def host_accessible(self) -> bool:
        """Pinned host and managed memory: yes; ``malloc_device`` memory: no."""
        return self.kind != "device"

    @property
    def array(self) -> np.ndarray:
        """A NumPy view of host and shared allocations (device memory is not host-readable)."""
        self.check()
        if self.kind == "device":
            raise exception(errc.invalid, f"a malloc_device allocation on {self.device.name} cannot be read or "
                                          f"written by the host: copy it with queue.memcpy / queue.copy")
        buf = (ctypes.c_uint8 * self._nbytes_alloc).from_address(self.ptr)
        return np.frombuffer(buf, dtype=np.uint8)[:self.nbytes].view(self.dtype)

    def _release(self) -> None:
        self.device.activate()
        if self.kind == "host":
            driver.call("cuMemFreeHost", ctypes.c_void_p(self.ptr), what="free()")
        else:
            driver.call("cuMemFree_v2", self.ptr, what="free()")
