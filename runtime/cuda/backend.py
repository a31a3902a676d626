"""The CUDA back end of one GPU: the runtime's ``Backend`` interface (``runtime/backend.py``).

* queues   — ``cuda_queue`` (``queue.py``): one stream per queue.
* memory   — ``cuda_allocation`` (``memory.py``); ``copy_now`` for a CPU
  device's queue copying this GPU's device memory (``cuMemcpy``, which stages
  pageable host memory itself); peer access between GPUs is the driver's
  (``cuDeviceGetP2PAttribute``, ``cuCtxEnablePeerAccess`` /
  ``cuCtxDisablePeerAccess`` on the primary contexts), and only once it is
  enabled may a kernel take another GPU's ``malloc_device`` memory.
* programs — ``codegen.build_program`` (PTX, one driver module per device and
  context: ``whole_program``); shared device globals live in this GPU's
  memory, one allocation per (context, unique id), initialised from the
  bundle's bytes on first use.
* graphs   — ``graph.cuda_graph`` (an executable graph as one CUDA graph).
"""
from __future__ import annotations

import ctypes
import threading

from ..backend import Backend, apply_relocations, check_one_definition, dlpack, errc, exception
from . import driver

__all__ = ["CudaBackend"]

#: ``CUdevice_P2PAttribute`` values
_P2P_ACCESS_SUPPORTED = 2
_P2P_NATIVE_ATOMIC_SUPPORTED = 3
#: ``cuCtxEnablePeerAccess`` / ``cuCtxDisablePeerAccess`` results that mean "already so"
_ALREADY_ENABLED = 704
_NOT_ENABLED = 705


class CudaBackend(Backend):
    """The back end of GPU ``dev`` (a ``cuda_device``)."""

    name = "cuda"
    whole_program = True

    def pointer_place(self, address: int):
        """Where the CUDA driver says ``address`` is: DLPack ``(type, id)``; ``None`` when
        it does not know the address (pageable host memory)."""
        lib = driver.load()
        if lib is None or not address:
            return None
        value = ctypes.c_int()
        for attribute in (8, 2):        # CU_POINTER_ATTRIBUTE_IS_MANAGED, _MEMORY_TYPE
            if driver.query("cuPointerGetAttribute", ctypes.byref(value), attribute, address):
                return None
            if attribute == 8 and value.value:
                return (dlpack.CUDA_MANAGED, 0)
        if value.value == 1:            # CU_MEMORYTYPE_HOST: pinned
            return (dlpack.CUDA_HOST, 0)
        if driver.query("cuPointerGetAttribute", ctypes.byref(value), 9, address):      # _DEVICE_ORDINAL
            return None
        return (dlpack.CUDA, value.value)

    def wait_for_stream(self, theirs: int, mine: int) -> None:
        """``mine`` waits for the work enqueued so far on another library's stream ``theirs``."""
        ev = ctypes.c_void_p()
        driver.call("cuEventCreate", ctypes.byref(ev), 2, what="an event ordering another library's stream")
        try:
            driver.call("cuEventRecord", ev, theirs)
            driver.call("cuStreamWaitEvent", mine, ev, 0)
        finally:
            driver.query("cuEventDestroy_v2", ev)

    def __init__(self, dev):
        self.device = dev
        self._lock = threading.Lock()
        self._globals: dict = {}            # (context id, device-global id) -> device address
        self._global_sizes: dict = {}       # the same keys -> the size the first program gave it
        self._relocations: dict = {}        # same key -> relocations not yet written
        self._peers: set = set()            # names of the GPUs whose memory this one's kernels may use

    def device_name(self) -> str:
        return self.device.name

    def describe(self) -> str:
        """``NVIDIA H100 80GB HBM3, sm_90, 79.1 GiB``: what ``minisycl devices`` prints."""
        d = self.device
        return f"{d.gpu_name}, {d.sm}, {d.total_memory / 2 ** 30:.1f} GiB"

    # -- queues, memory ---------------------------------------------------------------

    @property
    def queue_class(self) -> type:
        from .queue import cuda_queue
        return cuda_queue

    def malloc(self, count, dtype, kind: str, queue):
        from .memory import cuda_allocation
        return cuda_allocation(count, dtype, kind, queue)

    def copy_now(self, dst: int, src: int, nbytes: int) -> None:
        if nbytes:
            self.device.activate()
            driver.copy_now(dst, src, nbytes, what=f"a copy of {nbytes} bytes with {self.device.name}'s memory")

    def can_access_peer(self, peer, atomics: bool = False) -> bool:
        if peer.impl is self:
            return True
        if not isinstance(peer.impl, CudaBackend):
            return False                # a CPU device's memory is pageable host memory
        v = ctypes.c_int()
        driver.call("cuDeviceGetP2PAttribute", ctypes.byref(v),
                    _P2P_NATIVE_ATOMIC_SUPPORTED if atomics else _P2P_ACCESS_SUPPORTED,
                    self.device.handle, peer.handle,
                    what=f"asking whether {self.device.name} can access {peer.name}")
        return bool(v.value)

    def enable_peer_access(self, peer) -> None:
        if peer.impl is self:
            return
        super().enable_peer_access(peer)        # errc::feature_not_supported where it cannot
        with self._lock:
            self.device.activate()
            rc = driver.query("cuCtxEnablePeerAccess", peer.primary_context(), 0)
            if rc not in (0, _ALREADY_ENABLED):
                driver.raise_for(rc, f"enabling peer access from {self.device.name} to {peer.name}")
            self._peers.add(peer.name)

    def disable_peer_access(self, peer) -> None:
        if peer.impl is self:
            return
        with self._lock:
            if peer.name not in self._peers:
                raise exception(errc.invalid, f"peer access from {self.device.name} to {peer.name} is not enabled")
            self.device.activate()
            rc = driver.query("cuCtxDisablePeerAccess", peer.primary_context())
            if rc not in (0, _NOT_ENABLED):
                driver.raise_for(rc, f"disabling peer access from {self.device.name} to {peer.name}")
            self._peers.discard(peer.name)

    def peer_enabled(self, peer) -> bool:
        return peer.impl is self or peer.name in self._peers

    # -- programs ---------------------------------------------------------------------

    def link_images(self, images, kernels, names, signatures, spec, sub_group_size):
        from .codegen import build_program
        return build_program(self.device, images, kernels, names, signatures, spec)

    def bind_globals(self, prog, linked, ctx) -> None:
        linked.bind_globals(prog, ctx)

    def global_storage(self, dg, ctx) -> int:
        return self.storage(dg.uid, dg.info, ctx)

    def storage(self, uid: str, info: dict, ctx) -> int:
        """The device address of a shared device global's value in ``ctx`` on this GPU
        (allocated and initialised from the bundle's initial value on first use)."""
        key = (ctx.id, uid)
        with self._lock:
            addr = self._globals.get(key)
            if addr is not None:
                check_one_definition(info["name"], self._global_sizes[key], int(info["size"]))
            else:
                self.device.activate()
                size = max(int(info["size"]), 1)
                self._global_sizes[key] = int(info["size"])
                p = ctypes.c_uint64()
                driver.call("cuMemAlloc_v2", ctypes.byref(p), size, what=f"device_global '{info['name']}'")
                init = (bytes.fromhex(info.get("init") or "") or bytes(size))[:size]
                init += bytes(size - len(init))
                buf = ctypes.create_string_buffer(init, size)
                driver.copy_now(p.value, ctypes.addressof(buf), size, what=f"device_global '{info['name']}'")
                addr = self._globals[key] = p.value
                if info.get("relocations"):
                    self._relocations[key] = list(info["relocations"])
            return addr

    def relocate_global(self, uid: str, ctx, resolve) -> None:
        """Write the vtable (or other symbol) pointers of a shared device
        global's initial value that ``resolve`` (a program's ``global_address``)
        can find; the others wait for a later program."""
        key = (ctx.id, uid)
        with self._lock:
            pending = self._relocations.get(key)
            if not pending:
                return
            base = self._globals[key]

            def write(offset, value):
                word = ctypes.c_uint64(value)
                self.device.activate()
                driver.copy_now(base + offset, ctypes.addressof(word), 8, what="device_global relocation")
            self._relocations[key] = apply_relocations(pending, resolve, write)

    # -- graphs -----------------------------------------------------------------------

    def graph_executor(self, ex):
        from .graph import cuda_graph
        return cuda_graph(ex)
