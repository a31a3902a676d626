"""The commands a GPU queue's handler records: copies and fills on the queue's stream.

They carry what a CUDA graph's memcpy and memset nodes take (``copy``,
``fill``: ``cuda/graph.py`` builds nodes from them) and run on the stream
of the queue that runs them (``cuda_queue._copy`` / ``_memset``).  A copy
between device memory of two GPUs names both (``peer``): it is
``cuMemcpyPeerAsync`` with each GPU's context (peer to peer over NVLink or
PCIe where the GPUs can, staged by the driver otherwise).
"""
from __future__ import annotations

import numpy as np

from ..backend import Command

__all__ = ["CopyCommand", "FillCommand", "peer_devices"]


def peer_devices(dst_allocation, src_allocation):
    """``(destination GPU, source GPU)`` when both sides are ``malloc_device`` memory of
    two different GPUs, else ``None`` (one address space: ``cuMemcpyAsync`` infers the rest)."""
    if dst_allocation is None or src_allocation is None or dst_allocation.host_accessible \
            or src_allocation.host_accessible or dst_allocation.device is src_allocation.device:
        return None
    return dst_allocation.device, src_allocation.device


class CopyCommand(Command):
    """A copy of ``n`` bytes on the stream of the queue that runs it; ``copy`` is
    what a CUDA graph's memcpy node takes (``cuda/graph.py``); ``peer``: see
    ``peer_devices``."""

    def __init__(self, d: int, s: int, n: int, label: str, peer=None, uses=(), details=()):
        super().__init__("memcpy", None, label, uses=uses, details=details)
        self.copy = (d, s, n)
        self.peer = peer

    def run(self, q) -> None:
        q._copy(*self.copy, peer=self.peer)


class FillCommand(Command):
    """``count`` copies of ``element`` (bytes) from address ``ptr``, on the stream of
    the queue that runs it: a memset of 1-, 2- or 4-byte elements, else a copy
    of the whole pattern from host memory."""

    def __init__(self, kind: str, ptr: int, element: bytes, count: int, label: str, uses=(), details=()):
        super().__init__(kind, None, label, uses=uses, details=details)
        self.fill = (ptr, element, count)
        self._data = None if len(element) in (1, 2, 4) else np.frombuffer(element * count, dtype=np.uint8)

    def run(self, q) -> None:
        ptr, element, count = self.fill
        if self._data is None:
            q._memset(ptr, int.from_bytes(element, "little"), len(element), count)
        else:
            q._copy(ptr, self._data.ctypes.data, self._data.nbytes)
