"""The arguments of memory commands, checked: sizes, counts, offsets and addresses.

Every command that touches memory (``memcpy``, ``memset``, ``fill``, ``copy``,
``prefetch``, ``mem_advise``, device-global copies), eager or recorded into a
command graph, checks its arguments here before anything runs, so a bad one
is an ``exception(errc.invalid)`` naming it and never reaches ``ctypes`` (where
a negative size becomes a huge ``size_t``) or NumPy (where it becomes a bare
``ValueError`` or a silent clip).

Memory is a USM allocation, the pointer of an ``async_malloc`` node, a NumPy
array (C-contiguous; writeable where it is written), or an integer address
inside a live USM allocation; the bytes a command touches must lie inside it.
An integer address outside every allocation (0 among them) is refused: the
runtime cannot tell how much memory is there.
"""
from __future__ import annotations

import ctypes
from typing import NamedTuple

import numpy as np

from .commands import DynamicValue
from .errors import errc, exception
from .memory import allocation_at, usm_allocation
from .validate import checked_count, checked_int

__all__ = ["Span", "checked_memory", "checked_address", "checked_count", "checked_int", "fill_bytes"]


class Span(NamedTuple):
    """Checked memory: its address, its element type (``None`` for a raw
    address) and elements, the USM allocation it lies in (``None`` for a
    NumPy array), which a command lists among the memory it uses, and what was
    checked (a command holding the span keeps a NumPy array alive)."""
    address: int
    dtype: np.dtype | None
    count: int
    allocation: usm_allocation | None
    holder: object = None


def checked_memory(x, what: str, nbytes: int = 0, *, writes: bool = False, offset: int = 0) -> Span:
    """``x`` checked to hold ``nbytes`` bytes from byte ``offset`` on (both already
    checked non-negative); ``writes`` when the command writes there."""
    end = offset + nbytes
    if type(x) is not usm_allocation and isinstance(x, DynamicValue):
        if x.graph_only:
            raise exception(errc.invalid, "dynamic_parameters cannot be registered with graph nodes which do not "
                                          "represent kernel executions")
        x = x.resolve()                 # an async_malloc node's memory
    if isinstance(x, usm_allocation):
        if x.freed:
            x.check(what)
        size = x.count * x.dtype.itemsize
        if end > size:
            raise exception(errc.invalid, f"{what} of {nbytes} bytes{_at(offset)} overruns a {size}-byte "
                                          f"USM allocation")
        return Span(x.ptr + offset, x.dtype, x.count, x)
    if isinstance(x, np.ndarray):
        if not x.flags["C_CONTIGUOUS"]:
            raise exception(errc.invalid, f"{what} needs a contiguous NumPy array")
        if writes and not x.flags["WRITEABLE"]:
            raise exception(errc.invalid, f"{what} cannot write into a read-only NumPy array")
        if end > x.nbytes:
            raise exception(errc.invalid, f"{what} of {nbytes} bytes{_at(offset)} overruns a {x.nbytes}-byte array")
        return Span(x.ctypes.data + offset, x.dtype, x.size, None, x)
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        address = int(x) + offset
        owner = allocation_at(int(x))
        if owner is None:
            raise exception(errc.invalid, f"{what}: address {int(x):#x} is not inside a USM allocation")
        room = owner.ptr + owner.nbytes - address
        if nbytes > room:
            raise exception(errc.invalid, f"{what} of {nbytes} bytes at address {address:#x} overruns its "
                                          f"{owner.nbytes}-byte USM allocation ({max(room, 0)} bytes left)")
        return Span(address, None, 0, owner)
    raise exception(errc.invalid, f"{what} expects a USM allocation, a NumPy array or an address, "
                                  f"got {type(x).__name__}")


def checked_address(x, what: str, nbytes: int = 0) -> int:
    """The address of ``checked_memory(x, what, nbytes)`` (``nbytes`` checked non-negative here)."""
    return checked_memory(x, what, checked_count(nbytes, f"{what} size")).address


def _at(offset: int) -> str:
    return f" at offset {offset}" if offset else ""


def fill_bytes(address: int, element: bytes, count: int) -> None:
    """Write ``count`` copies of ``element`` from ``address`` on (checked memory)."""
    if count and len(element) == 1:
        ctypes.memset(address, element[0], count)
    elif count:
        size = len(element)
        view = np.frombuffer((ctypes.c_uint8 * (size * count)).from_address(address), np.uint8)
        view.reshape(count, size)[:] = np.frombuffer(element, np.uint8)
