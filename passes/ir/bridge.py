"""The llvmlite bridge: the only code that hands modules to ``llvmlite.binding``.

LLVM parses (text or bitcode), verifies and prints; everything else about a
module is read from LLVM's printing by the reader in this package.  Work that
can run beside Python (verification: llvmlite lets go of the GIL inside LLVM)
goes to one background thread.
"""
from __future__ import annotations

import functools
import os
import re
from concurrent.futures import Future, ThreadPoolExecutor

import llvmlite.binding as llvm

from ...frontend import knobs
from ...frontend.diagnostics import UserError

__all__ = ["IRError", "parse_and_verify", "complaint", "in_background", "parse_assembly", "parse_bitcode",
           "first_line", "BITCODE_MAGIC"]

BITCODE_MAGIC = (b"BC\xc0\xde", b"\xde\xc0\x17\x0b")


class IRError(UserError):
    """The input is not valid LLVM IR (or cannot be read); the message is one line."""


def parse_assembly(text: str) -> llvm.ModuleRef:
    """LLVM's text reader, in a fresh context (``RuntimeError`` on bad text)."""
    return llvm.parse_assembly(text, context=llvm.create_context())


def parse_bitcode(data: bytes) -> llvm.ModuleRef:
    """LLVM's bitcode reader, in a fresh context (``RuntimeError`` on bad bitcode)."""
    return llvm.parse_bitcode(data, context=llvm.create_context())


def parse_and_verify(text: str, name: str) -> tuple[llvm.ModuleRef | None, str | None]:
    """(LLVM's module, None), or (None, LLVM's complaint).  Work handed to
    another thread returns its failure as text: an exception kept there would
    tie its frames, and the modules in them, into reference cycles, and the
    collector may then dispose of an LLVM context before its module."""
    try:
        ref = parse_assembly(text)
        ref.verify()
    except RuntimeError as err:
        return None, str(err)
    ref.name = name
    return ref, None


def complaint(ref: llvm.ModuleRef) -> str | None:
    """LLVM's verifier on ``ref``: None, or its complaint (see above)."""
    try:
        ref.verify()
    except RuntimeError as err:
        return str(err)
    return None


def in_background(fn, *args) -> Future:
    """Run an LLVM call on the one verifier thread (llvmlite serialises LLVM's
    calls, so one is all that can work at a time); with
    ``MINISYCL_VERIFY_THREADS=1``, right here.  Returns a ``Future``."""
    if knobs.verify_threads() == 1:
        done = Future()
        done.set_result(fn(*args))
        return done
    return _verifier().submit(fn, *args)


@functools.lru_cache(maxsize=None)
def _verifier():
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="minisycl-verify")


if hasattr(os, "register_at_fork"):        # a forked child has no thread: it makes its own
    os.register_at_fork(after_in_child=_verifier.cache_clear)


def first_line(err: Exception | str) -> str:
    """LLVM's parse errors are several lines (message, source line, caret); keep
    the ``<string>:L:C: error: ...`` line without the fake file name."""
    lines = [ln for ln in str(err).splitlines() if ln.strip()]
    for ln in lines:
        m = re.match(r'<string>:(\d+):(\d+): error: (.*)', ln)
        if m:
            return f"{m.group(1)}:{m.group(2)}: error: {m.group(3)}"
    return "invalid module: " + " ".join(lines[:2])
