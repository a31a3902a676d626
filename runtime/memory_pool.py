"""``sycl_ext_oneapi_async_memory_alloc`` memory pools, as command graphs use them.

A ``memory_pool`` names an allocation kind for a (context, device) and a few
properties.  Outside a graph, ``async_malloc_from_pool`` allocates memory of
the pool's kind (this runtime's USM is always zeroed when it is handed out, so
``zero_init`` holds trivially).  In a command graph the graph keeps its own pool
of blocks (``graph/allocations.py``) and takes from the given pool only what the graph
extension's newer revision names: the kind (only ``device`` is accepted, else
``errc::invalid``), ``zero_init`` (blocks zeroed each time the graph is
finalized) and ``read_only`` (a freed block is reused only by an allocation
with the same flag).  ``initial_threshold`` and ``maximum_size`` are kept and
reported, and ignored by graphs as the revision says.
"""
from __future__ import annotations

from .device import context as Context, default_context, default_device
from .errors import errc, exception
from .validate import checked_count, require_bool, require_choice, require_context, require_device, require_str

__all__ = ["memory_pool", "USM_KINDS"]

#: ``usm::alloc`` kinds, by this runtime's names
USM_KINDS = ("device", "host", "shared")


class memory_pool:  # noqa: N801 - the extension's name
    """A pool of ``kind`` memory for ``device`` in ``context`` with its properties."""

    def __init__(self, context: Context | None = None, device=None, kind: str = "device", *,
                 zero_init: bool = False, read_only: bool = False, initial_threshold: int = 0,
                 maximum_size: int = 0):
        require_context(context, "memory_pool context", optional=True)
        require_device(device, "memory_pool device", optional=True)
        kind = require_choice(kind, USM_KINDS, "USM allocation kind")
        zero_init, read_only = require_bool(zero_init, "memory_pool zero_init"), require_bool(read_only,
                                                                                                "memory_pool read_only")
        dev = default_device(device) if device is not None else (context.devices[0] if context else default_device())
        ctx = context if context is not None else default_context(dev)
        if dev not in ctx.devices:
            raise exception(errc.invalid, f"device {dev.name} is not associated with {ctx!r}")
        initial_threshold = checked_count(initial_threshold, "memory_pool initial_threshold")
        maximum_size = checked_count(maximum_size, "memory_pool maximum_size")
        self.context, self.device, self.kind = ctx, dev, kind
        self.zero_init, self.read_only = bool(zero_init), bool(read_only)
        self.initial_threshold, self.maximum_size = initial_threshold, maximum_size

    def get_context(self) -> Context:
        return self.context

    def get_device(self):
        return self.device

    def get_alloc_kind(self) -> str:
        return self.kind

    def get_threshold(self) -> int:
        return self.initial_threshold

    def has_property(self, name: str) -> bool:
        """Whether the pool was made with property ``name`` (``zero_init``, ``read_only``,
        ``initial_threshold``, ``maximum_size``)."""
        require_str(name, "memory_pool.has_property name")
        return bool(getattr(self, name, False)) if name in ("zero_init", "read_only", "initial_threshold",
                                                            "maximum_size") else False

    def __repr__(self):
        props = [p for p in ("zero_init", "read_only") if getattr(self, p)]
        return f"<memory_pool {self.kind} on {self.device.name}{' ' + ' '.join(props) if props else ''}>"
