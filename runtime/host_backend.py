"""The CPU JIT back end: every device of a device config runs here (``backend.py``).

Kernels are linked and JIT-compiled by LLVM (``jit.py``) and run on this
CPU's worker threads (``native.py``), launched by the runtime's own ``queue``;
USM of every kind is host memory (``memory.py``); a shared device global is
one host allocation per (device, context) (``device_global.py``); an
executable graph runs as a native plan (``graph.py``).  Every CPU device
reaches every other CPU device's memory (one address space), so peer access
among them is always on; memory of a device the host cannot address (a GPU's
``malloc_device``) is copied by that device's back end (``copy_now``).
"""
from __future__ import annotations

from .backend import Backend
from .device import register_config_backend
from .device_global import bind_host_program, shared_storage
from .errors import errc, exception
from .jit import link_and_jit
from .memory import usm_allocation
from .queue import queue

__all__ = ["HostBackend"]


class HostBackend(Backend):
    """The CPU JIT back end of one device (``dev``)."""

    name = "native_cpu"
    runs_on_host = True

    def __init__(self, dev):
        self.device = dev

    def device_name(self) -> str:
        return self.device.name

    @property
    def queue_class(self) -> type:
        return queue

    def malloc(self, count, dtype, kind: str, q):
        return usm_allocation(count, dtype, kind, q)

    def copy_now(self, dst: int, src: int, nbytes: int) -> None:
        raise exception(errc.runtime, "host memory is copied by the host (copy_now is for memory the host "
                                      "cannot address)")

    def can_access_peer(self, peer, atomics: bool = False) -> bool:
        return peer.impl.runs_on_host

    def enable_peer_access(self, peer) -> None:
        super().enable_peer_access(peer)        # (always supported between CPU devices: nothing to do)

    def disable_peer_access(self, peer) -> None:
        if not peer.impl.runs_on_host:
            super().disable_peer_access(peer)

    def peer_enabled(self, peer) -> bool:
        return peer.impl.runs_on_host

    def link_images(self, images, kernels, names, signatures, spec, sub_group_size):
        return link_and_jit(images, kernels, names, sub_group_size, signatures, spec=spec)

    def bind_globals(self, prog, linked, ctx) -> None:
        bind_host_program(prog, linked, self.device, ctx)

    def global_storage(self, dg, ctx) -> int:
        return shared_storage(dg, self.device, ctx).ptr


register_config_backend(HostBackend)
