"""USM on an NVIDIA GPU: ``malloc_device`` is ``cuMemAlloc`` (not host-readable),
``malloc_host`` ``cuMemAllocHost`` (pinned) and ``malloc_shared``
``cuMemAllocManaged``, both NumPy views.  A managed allocation larger than the
card's free memory is refused (``errc::memory_allocation``): oversubscribing
managed memory can hang the GPU.  ``free`` returns the memory to the driver.
A view kept after ``free`` must not be used (the driver owns that memory).

Other libraries take the memory without a copy: ``__cuda_array_interface__``
(version 3, its ``stream`` the allocating queue's stream, so a consumer
orders its work after ours) and ``__dlpack__`` (``kDLCUDA``, ``kDLCUDAHost``
or ``kDLCUDAManaged`` by kind; the consumer's stream waits for an event
recorded on the allocating queue's stream).  Memory exported through DLPack
outlives ``free``: the driver gets it back when the last consumer releases
its view."""
from __future__ import annotations

import ctypes
import weakref

import numpy as np

from ..backend import checked_shape, dlpack, errc, exception, register, usm_allocation
from . import driver

__all__ = ["cuda_allocation"]

_CU_MEM_ATTACH_GLOBAL = 1


class cuda_allocation(usm_allocation):  # noqa: N801 - SYCL-style name
    """``count`` elements of ``dtype`` in GPU memory of kind ``kind``."""

    def __init__(self, count: int, dtype, kind: str, queue):
        (self.count, self.dtype), self.kind = checked_shape(count, dtype), kind
        self.device = queue.device
        self._queue = weakref.ref(queue)        # whose stream orders other libraries' use (interop)
        self._exports, self._release_pending = 0, False
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

    # -- interop ------------------------------------------------------------------------

    def __dlpack_device__(self) -> tuple[int, int]:
        kind = {"device": dlpack.CUDA, "host": dlpack.CUDA_HOST, "shared": dlpack.CUDA_MANAGED}[self.kind]
        return (kind, self.device.ordinal if kind == dlpack.CUDA else 0)

    def native_stream(self) -> int | None:
        """The handle of the stream of the queue this memory was allocated with, while it lives."""
        q = self._queue()
        return q.native_stream() if q is not None else None

    @property
    def __cuda_array_interface__(self) -> dict:
        """CUDA's array interface, version 3 (CuPy, numba, torch read it)."""
        self.check("__cuda_array_interface__")
        return {"shape": (self.count,), "typestr": self.dtype.str, "descr": self.dtype.descr, "strides": None,
                "data": (self.ptr, False), "version": 3, "stream": self.native_stream()}

    def _dlpack_sync(self, stream) -> None:
        """The consumer's stream (DLPack: ``None`` or 1 the legacy default stream, 2 the
        per-thread one, -1 none) waits for what the allocating queue has enqueued:
        an event recorded on the queue's stream, unless every command submitted
        to it is known finished (``_done``: a wait covered them), when there is
        nothing to wait for (the usual case: a consumer takes memory after a
        ``wait``), and the export costs no driver call."""
        if stream == -1:
            return
        if stream is not None and (isinstance(stream, bool) or not isinstance(stream, int) or stream < 0):
            raise exception(errc.invalid, f"__dlpack__(stream={stream!r}): a stream is a CUDA stream handle "
                                          f"(an integer), None, 1, 2 or -1")
        q = self._queue()
        if q is None or not hasattr(q, "_record_now"):
            return
        with q._lock:
            if q._done >= q._seq:
                return
            self.device.activate()
            ev = q._record_now()
            driver.call("cuStreamWaitEvent", 1 if stream is None else stream, ev, 0,
                        what="ordering a DLPack consumer's stream after the queue")
            q._recycle(ev)

    def _dlpack_keep(self):
        self._exports += 1
        return self

    def _dlpack_released(self) -> None:
        self._exports -= 1
        if not self._exports and self._release_pending:
            self._release_pending = False
            self._free_now()

    def _release(self) -> None:
        if self._exports:                   # a consumer still holds it: freed when the last lets go
            self._release_pending = True
            return
        self._free_now()

    def _free_now(self) -> None:
        # (borrowed: the last consumer of a DLPack export lets go in its deleter, a finalizer)
        with self.device.borrowed() as live:
            if not live:
                return
            if self.kind == "host":
                driver.call("cuMemFreeHost", ctypes.c_void_p(self.ptr), what="free()")
            else:
                driver.call("cuMemFree_v2", self.ptr, what="free()")
