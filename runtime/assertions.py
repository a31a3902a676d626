"""``assert(cond)`` in device code: the runtime end of the front end's hook.

A failed ``assert`` calls ``void __minisycl_assert_fail(ptr message)`` with the
message DPC++ prints (``<file>:<line>: <function>: Assertion `<cond>` failed.``,
made by the front end, ``frontend/emitter/groups.py``) and that work-item
returns.  This module provides the function to every JIT-compiled program (a
symbol registered with LLVM before any is compiled): it keeps the first
message.  After a launch, ``check`` raises it as ``errc::runtime`` (SYCL's
``sycl::exception`` for an assertion failed in a kernel) and clears it.  A
failure is rare, so the hook may go through Python (a ctypes callback).

The same hook stops a kernel that calls a virtual method which is not
``indirectly_callable`` (host code: its device vtable slot is a stub,
``passes/host_only_virtuals.py``).  That message begins with ``called `` and
the kernel is named in front of it: ``kernel 'k' called virtual method 'S::f',
which is not indirectly_callable and exists on the host only``.
"""
from __future__ import annotations

import ctypes
import threading

import llvmlite.binding as llvm

from ..passes.ir import ASSERT_FAIL
from .errors import errc, exception

__all__ = ["HOOK", "check", "failure"]

HOOK = ASSERT_FAIL
#: how the host-only virtual methods' stubs begin their message (the kernel goes in front)
_CALLED = "called "

_lock = threading.Lock()
_failed: list[str] = []


@ctypes.CFUNCTYPE(None, ctypes.c_char_p)
def _assert_fail(message: bytes) -> None:
    with _lock:
        if not _failed:
            _failed.append(message.decode("utf-8", "replace"))


llvm.add_symbol(HOOK, ctypes.cast(_assert_fail, ctypes.c_void_p).value)


def check(kernel: str | None = None) -> None:
    """Raise the first assertion that failed since the last check (``errc::runtime``);
    ``kernel``: the kernel that ran, when one did."""
    if not _failed:
        return
    with _lock:
        message = _failed.pop() if _failed else None
        _failed.clear()
    if message is not None:
        raise failure(message, kernel)


def failure(message: str, kernel: str | None = None):
    """The ``sycl.exception`` (``errc::runtime``) for a hook's ``message``."""
    if message.startswith(_CALLED):
        message = (f"kernel '{kernel}' " if kernel else "a kernel ") + message
    return exception(errc.runtime, message)
