"""The runtime's own native code: worker threads and fault guards for kernels.

Kernel launchers (``jit.py``) are native; so is what drives them, so that a
launch costs no Python beyond one ctypes call and a kernel that faults does
not take the process with it.  This module's LLVM IR is JIT-compiled once per
process and gives:

``msycl_run(launch, args, total, geometry, chunks, fault)``
    runs ``launch`` over ``[0, total)`` shared by up to ``chunks``
    participants: the calling thread and persistent worker threads (one per
    further core).  Each participant has a share of the range, cut into
    blocks; it runs the blocks of its own share (the same memory as at the
    launch before, still in its caches), then claims those left in the
    others' shares, so a participant that starts late or runs slowly - its
    core taken by another process, as on a busy or virtual machine - holds
    nobody up: one that has not started when every block is done is not
    waited for.  Workers spin briefly after a job, then sleep on a futex, so
    back-to-back launches hand off in about a microsecond while an idle
    runtime uses no CPU.  Concurrent callers do not queue behind each other:
    whoever finds the workers busy runs its whole range itself.
``msycl_run_plan(job)``
    runs a list of small launches back to back (a graph's plan) under one
    guard, stopping at the first that faults.

Every piece runs under a guard: ``sigsetjmp`` before calling the launcher,
and handlers for SIGSEGV, SIGBUS, SIGFPE and SIGILL that ``siglongjmp`` back
to the guard of the faulting thread.  The handlers run on an alternate signal
stack that each thread gets the first time it runs guarded code (freed when
the thread ends), so a kernel or host function that overflows its stack is
caught like any other fault.  The guard reports the signal and the
faulting address, and the caller raises ``exception(errc.runtime)``.  A fault
outside a kernel is passed to the handler that was there before (e.g.
Python's faulthandler) and then takes its default action, as it would have
without us.  The handlers are put back if someone else replaced them.

Ctrl-C: while a launch runs, SIGINT's handler calls the handler that was
there before (Python's, which records the signal), sets a cancel flag that
stops every participant from claiming another block, relays SIGINT to the
launch's other threads (marked by its value, so Python's handler runs once)
and jumps back to the guard of a thread inside a kernel.  The guard returns
SIGINT, and the caller's next Python instruction raises ``KeyboardInterrupt``
(or whatever Python's handler does).  Outside launches only Python's handler
runs; where SIGINT is ignored or default, the runtime leaves it alone.

Linux on x86-64 or AArch64 (glibc struct layouts, futex numbers); elsewhere
kernels run on the calling thread without guards.

The IR is ``native.ll``, package data with named substitutions (the thread
limit, the architecture's futex number and spin-wait hint).
"""
from __future__ import annotations

import ctypes
import os
import platform
import signal
import string
import sys
import threading
from importlib import resources

from .engine import compile_ir, keep_context
from .errors import errc, exception

__all__ = ["run_range", "PlanRun", "run_guarded", "PlanEntry", "SIGNALS"]

#: per architecture: futex syscall number, spin-wait hint intrinsic and its call
_ARCH = {"x86_64": (202, "declare void @llvm.x86.sse2.pause()", "call void @llvm.x86.sse2.pause()"),
         "aarch64": (98, "declare void @llvm.aarch64.hint(i32)", "call void @llvm.aarch64.hint(i32 1)")}
MAX_THREADS = 64
_SPIN = 20000            # spin-wait hints before a worker sleeps (~0.2-1 ms)
_SLOT_BYTES = 128        # a worker's slot (%slot in native.ll)
_BLOCKS = 8              # blocks each participant's share of a launch is cut into (%part in native.ll)
#: the value SIGINT carries when the runtime relays it to a launch's other threads
_INTERRUPT_MARK = 0x6D737963
_SIGINT = 2
#: the signals a kernel's guard catches: number -> (name, what it means, whether it has a faulting address)
SIGNALS = {4: ("SIGILL", "illegal instruction (a trap or unreachable code)", False),
           7: ("SIGBUS", "bus error (misaligned or truncated memory)", True),
           8: ("SIGFPE", "arithmetic fault (integer division by zero or overflow)", False),
           11: ("SIGSEGV", "invalid memory access", True)}
#: a launcher: ``void (ptr args, i64 begin, i64 end, ptr geometry)``
_LAUNCH = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)


class PlanJob(ctypes.Structure):
    """What ``msycl_run_plan`` takes: the entries, their count, and where it says
    which signal stopped an entry and at what address."""
    _fields_ = [("entries", ctypes.c_void_p), ("count", ctypes.c_int64), ("signal", ctypes.c_int64),
                ("address", ctypes.c_int64)]


class PlanEntry(ctypes.Structure):
    """One launch of a plan: launcher, argument slots, work-items, geometry
    (``%entry`` in ``native.ll``)."""
    _fields_ = [("fn", ctypes.c_void_p), ("args", ctypes.c_void_p), ("total", ctypes.c_int64),
                ("geom", ctypes.c_void_p)]


def native_ir(futex: int, hint_decl: str, hint: str) -> str:
    """The IR of the native support for one architecture: ``native.ll`` (package
    data) with its names filled in."""
    template = string.Template(resources.files(__package__).joinpath("native.ll").read_text(encoding="utf-8"))
    return template.substitute(max_threads=MAX_THREADS, slots_bytes=MAX_THREADS * _SLOT_BYTES, max_parts=MAX_THREADS + 1,
                               blocks_per_part=_BLOCKS, blocks_per_part_minus_1=_BLOCKS - 1, futex_syscall=futex,
                               spin_hint_declaration=hint_decl, spin_hint=hint, spin_limit=_SPIN,
                               interrupt_mark=_INTERRUPT_MARK)


class _Native:
    def __init__(self, futex: int, hint_decl: str, hint: str, workers: int):
        text = native_ir(futex, hint_decl, hint)
        self.engine, context, _, _ = compile_ir(text, "the runtime's native support", trusted=True)
        keep_context(self, context)
        addr = self.engine.get_function_address
        P, I64 = ctypes.c_void_p, ctypes.c_int64
        self.run = ctypes.CFUNCTYPE(ctypes.c_int32, P, P, I64, P, I64, P)(addr("msycl_run"))
        self.run_plan = ctypes.CFUNCTYPE(I64, P)(addr("msycl_run_plan"))
        ctypes.CFUNCTYPE(None, I64)(addr("msycl_init"))(workers)
        self.after_fork = ctypes.CFUNCTYPE(None)(addr("msycl_after_fork"))


_NATIVE: _Native | None = None
_LOCK = threading.Lock()
WORKERS = os.cpu_count() or 1


def _native() -> _Native | None:
    """The native support, or ``None`` where it is not available."""
    global _NATIVE
    if _NATIVE is not None:
        return _NATIVE
    arch = _ARCH.get(platform.machine())
    if arch is None or not sys.platform.startswith("linux"):
        return None
    with _LOCK:
        if _NATIVE is None:
            _NATIVE = _Native(*arch, workers=WORKERS - 1)
            os.register_at_fork(after_in_child=_NATIVE.after_fork)
    return _NATIVE


def _fault(kernel: str, sig: int, addr: int, subject: str | None = None) -> exception:
    """The error of a fault: in kernel ``kernel``, or in what ``subject`` names.

    SIGINT (Ctrl-C) is no fault: Python's own handler ran when it came, and
    Python runs the handler's Python side (``KeyboardInterrupt`` by default) at
    the first instruction after the native call, which is here; only a handler
    that returns lets the ``errc::runtime`` below be raised."""
    if sig == _SIGINT:
        signal.getsignal(signal.SIGINT)     # any call: Python's pending handler runs now
        return exception(errc.runtime, f"{subject or f'kernel {kernel!r}'} was interrupted (SIGINT); "
                                       f"its remaining work may not have run")
    name, what, has_address = SIGNALS.get(sig, (f"signal {sig}", "fault", False))
    where = f" at address 0x{addr:x}" if has_address else ""
    if subject is not None:
        return exception(errc.runtime, f"{subject} stopped with {name}: {what}{where}")
    return exception(errc.runtime, f"kernel '{kernel}' stopped with {name}: {what}{where}; "
                                   f"its remaining work-items may not have run")


def run_range(launch: int, args, total: int, geometry, kernel: str, workers: int | None = None,
              grain: int = 16384) -> None:
    """Run the launcher at address ``launch`` over ``[0, total)``: on the calling
    thread when small (fewer than ``grain`` indices per core), else shared by the
    cores in blocks (``msycl_run``)."""
    if total <= 0:
        return
    chunks = max(1, min(workers or WORKERS, total // grain))
    native = _native()
    if native is None:
        _LAUNCH(launch)(args, 0, total, geometry)
        return
    addr = ctypes.c_int64(0)
    sig = native.run(launch, args, total, geometry, chunks, ctypes.byref(addr))
    if sig:
        raise _fault(kernel, sig, addr.value)


def run_guarded(launch: int, args, subject: str) -> None:
    """Run the launcher-shaped function at address ``launch`` once, on the calling
    thread, under the fault guard (host functions: ``program.py``); ``subject``
    names it in the error a fault raises."""
    native = _native()
    if native is None:
        _LAUNCH(launch)(args, 0, 1, None)
        return
    addr = ctypes.c_int64(0)
    sig = native.run(launch, args, 1, None, 1, ctypes.byref(addr))
    if sig:
        raise _fault("", sig, addr.value, subject)


class PlanRun:
    """Runs ``count`` plan entries in order on the calling thread (``msycl_run_plan``);
    ``kernels`` names them for the error a fault raises.  Resolved once (the entry
    point and its one argument, a ``PlanJob``, made beforehand), so that a replay
    of a graph's plan costs one ctypes call of one ready argument.  The entries may
    be changed in place between runs (an update repoints one); one run at a time
    (the graph's lock)."""

    __slots__ = ("entries", "count", "kernels", "_call", "_job", "_arg")

    def __init__(self, entries, count: int, kernels: list[str]):
        self.entries, self.count, self.kernels = entries, count, kernels
        native = _native()
        self._call = native.run_plan if native is not None else None
        self._job = PlanJob(ctypes.addressof(entries), count, 0, 0)
        self._arg = ctypes.c_void_p(ctypes.addressof(self._job))

    def __call__(self) -> None:
        if self._call is None:
            for e in self.entries[:self.count]:
                _LAUNCH(e.fn)(e.args, 0, e.total, e.geom)
            return
        at = self._call(self._arg)
        if at >= 0:
            raise _fault(self.kernels[at], self._job.signal, self._job.address)
