"""Graph-owned memory (``sycl_ext_oneapi_async_memory_alloc`` in graphs).

``async_malloc`` nodes take a block of their graph's own pool when they are
added (reusing the block of an ``async_free`` node they depend on, when it
fits); ``zero_init`` blocks are zeroed at each finalize.  The free functions
``async_malloc`` / ``async_malloc_from_pool`` / ``async_free`` submit the
command group of the same name to a queue."""
from __future__ import annotations

import numpy as np

from .. import memory
from ..memory_pool import memory_pool
from ..validate import require_queue
from . import backend
from .nodes import node_type

__all__ = ["async_malloc", "async_malloc_from_pool", "async_free", "allocate", "zero_blocks"]


def async_malloc(q, size: int, kind: str = "device", dtype=None):
    """``async_malloc(queue, alloc kind, size)``: in a recording queue, an allocation node."""
    require_queue(q, "async_malloc queue")
    box = []
    q.submit(lambda h: box.append(h.async_malloc(size, kind, np.uint8 if dtype is None else dtype)))
    return box[0]


def async_malloc_from_pool(q, size: int, pool: memory_pool, dtype=None):
    """``async_malloc_from_pool(queue, size, pool)``: in a recording queue, an allocation node."""
    require_queue(q, "async_malloc_from_pool queue")
    box = []
    q.submit(lambda h: box.append(h.async_malloc_from_pool(size, pool, np.uint8 if dtype is None else dtype)))
    return box[0]


def async_free(q, ptr) -> None:
    require_queue(q, "async_free queue")
    q.submit(lambda h: h.async_free(ptr))


def allocate(graph, request, deps):
    """The block of a new ``async_malloc`` node of ``graph``: that of an ``async_free``
    node it depends on (same size, type and read-only flag), else a new one of
    the graph's pool."""
    size, dtype, zero_init, read_only = request
    alloc = _reusable(size, dtype, read_only, deps)
    if alloc is None:
        alloc = memory._allocate(size, dtype, "device", graph._queue)    # the device's own memory, if any
        graph._pool.append(alloc)
    if zero_init:
        graph._zero_init.add(id(alloc))
    return alloc


def _reusable(size, dtype, read_only, deps):
    """The block an ``async_free`` node among ``deps`` and their predecessors released
    that fits, marking that node as reused; ``None`` when there is none."""
    seen, work = set(), list(deps)
    while work:
        d = work.pop()
        if d in seen:
            continue
        seen.add(d)
        if d.kind == node_type.async_free and not getattr(d, "_reused", False):
            block = getattr(d.command.frees, "_cmd", None)
            old = block.allocation if block is not None else None
            if old is not None and old.count == size and old.dtype == dtype and block.request[3] == read_only:
                d._reused = True
                return old
        work.extend(d.preds)
    return None


def zero_blocks(graph) -> None:
    """``zero_init``: the graph's zero-initialised blocks are zeroed at each finalize,
    not at each run."""
    for block in graph._pool:
        if id(block) in graph._zero_init:
            backend.zero(graph._queue, block)
