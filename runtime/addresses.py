"""Addresses of the memory a copy, fill or hint names, checked.

A command that takes memory (``memcpy``, ``memset``, ``prefetch``, device-global
copies) accepts a USM allocation, a NumPy array or a raw address; the size it
touches must fit the allocation or array."""
from __future__ import annotations

import numpy as np

from .commands import DynamicValue
from .errors import errc, exception
from .memory import usm_allocation

__all__ = ["checked_address"]


def checked_address(x, what: str, nbytes: int = 0) -> int:
    """The address of a USM allocation / NumPy array, checked to hold ``nbytes``."""
    if isinstance(x, DynamicValue) and x.graph_only:
        raise exception(errc.invalid, "dynamic_parameters cannot be registered with graph nodes which do not "
                                      "represent kernel executions")
    if isinstance(x, usm_allocation):
        x.check(what)
        if nbytes > x.nbytes:
            raise exception(errc.invalid, f"{what} of {nbytes} bytes overruns a {x.nbytes}-byte USM allocation")
        return x.ptr
    if isinstance(x, np.ndarray):
        if nbytes > x.nbytes:
            raise exception(errc.invalid, f"{what} of {nbytes} bytes overruns a {x.nbytes}-byte array")
        return x.ctypes.data
    if isinstance(x, (int, np.integer)):
        return int(x)
    raise exception(errc.invalid, f"{what} expects a USM allocation, a NumPy array or an address, got {type(x).__name__}")
