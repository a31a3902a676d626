"""Launch ranges with SYCL's names: ``range`` (1 to 3 dimensions) and
``nd_range`` (a global range split into work-groups of a local range)."""
from __future__ import annotations

import numpy as np

from .errors import errc, exception

__all__ = ["range", "nd_range", "as_range"]

_MAX_ITEMS = (1 << 63) - 1          # launches count work-items in 64-bit signed integers


def _is_size(d) -> bool:
    return isinstance(d, (int, np.integer)) and not isinstance(d, (bool, np.bool_)) and d >= 0


class range:  # noqa: N801,A001 - SYCL's name
    def __init__(self, *dims: int):
        if len(dims) == 1 and type(dims[0]) is int and 0 <= dims[0] <= _MAX_ITEMS:     # the common case, directly
            self.dims = dims
            return
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        if not 1 <= len(dims) <= 3 or not all(_is_size(d) for d in dims):
            raise exception(errc.invalid, f"a range has 1 to 3 non-negative integer dimensions, got {dims!r}")
        self.dims = tuple(int(d) for d in dims)
        if self.size() > _MAX_ITEMS:
            raise exception(errc.invalid, f"a range of {' x '.join(map(str, self.dims))} work-items is more than "
                                          f"a launch can hold (2^63 - 1)")

    def size(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n

    def __len__(self):
        return len(self.dims)

    def __repr__(self):
        return f"range{self.dims}"


class nd_range:  # noqa: N801
    def __init__(self, global_range, local_range):
        if type(global_range) is int and type(local_range) is int and 0 < local_range \
                and 0 <= global_range <= _MAX_ITEMS and global_range % local_range == 0:   # the common case
            self.global_range, self.local_range = range(global_range), range(local_range)
            return
        self.global_range = global_range if isinstance(global_range, range) else range(global_range)
        self.local_range = local_range if isinstance(local_range, range) else range(local_range)
        glob, local = self.global_range.dims, self.local_range.dims
        if len(glob) != len(local):
            raise exception(errc.nd_range, "global and local ranges of an nd_range must have the same dimensions")
        for g, l in zip(glob, local):
            if l == 0 or g % l:
                raise exception(errc.nd_range, "Non-uniform work-groups are not supported by the target device")


def as_range(r) -> range | nd_range:
    """``r`` as a ``range`` or ``nd_range``: an int and a tuple are ranges."""
    if isinstance(r, (range, nd_range)):
        return r
    if isinstance(r, (int, np.integer)):
        return range(int(r))
    if isinstance(r, (tuple, list)):
        return range(*r)
    raise exception(errc.invalid, f"expected a range, an nd_range, an int or a tuple, got {type(r).__name__}")
