"""``sycl::exception`` and ``sycl::errc``: every runtime error a user can cause."""
from __future__ import annotations

import enum

__all__ = ["errc", "exception"]


class errc(enum.Enum):
    """SYCL 2020's error codes (``sycl::errc``)."""
    success = 0
    runtime = 1
    kernel = 2
    accessor = 3
    nd_range = 4
    event = 5
    kernel_argument = 6
    build = 7
    invalid = 8
    memory_allocation = 9
    platform = 10
    profiling = 11
    feature_not_supported = 12
    kernel_not_supported = 13
    backend_mismatch = 14


class exception(Exception):  # noqa: N801 - SYCL's name
    """``sycl::exception``: ``code()`` is an ``errc``, ``what()`` the message."""

    def __init__(self, code: errc, message: str):
        super().__init__(message)
        self._code = code

    def code(self) -> errc:
        return self._code

    def what(self) -> str:
        return str(self)

    def __str__(self):
        return super().__str__()


class Refused(Exception):
    """A value a parameter cannot take; ``say(where)`` is the message once the
    caller has named the parameter (named only when needed: packing arguments is
    on the launch path).  The caller raises ``exception(errc.invalid, ...)``."""

    def __init__(self, say):
        super().__init__()
        self.say = say
