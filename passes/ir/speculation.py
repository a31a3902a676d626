"""Work on an input while LLVM is still checking it (issue 28, point 1).

Reading IR text costs LLVM a parse, a print and a verification before any
pass may start, since passes read LLVM's canonical printing, never the text
as given.  Text that LLVM printed itself (a ``.ll`` file from ``minisycl
compile``, ``clang -S -emit-llvm``: it starts with LLVM's ``; ModuleID``
line) is, nearly always, its own canonical printing already.  For such text
``InputCheck`` hands the text to LLVM in a checker child (below; the verifier
thread where there is no ``fork``) and the caller's work starts at once on
the text as
given; LLVM's verdict then settles it:

* the input is invalid: the work's result, or its error, is dropped and the
  input's error is raised, exactly as if the input had been checked first;
* LLVM's printing differs from the text (other than in the ``; ModuleID``
  comment, which the reader skips): the work is dropped and runs again on
  LLVM's printing (the work must therefore have no effect outside its result);
* the input is valid and is LLVM's printing: the work's result stands, and is
  byte for byte what it would have been after the check.

Every input is still parsed and verified by LLVM; nothing derived from it
leaves before the verdict.  One guarantee makes the speculative work itself
safe: while it runs, the thread running it hands LLVM nothing but text to
parse and verify before the verdict (``bridge.settled``, at every place the
bridge makes a module for more than that): a pass that hands IR to LLVM's
optimiser first waits for the verdict there, and unwinds the work
(``Abandoned``) when the speculation failed.  The pass manager also looks
between passes (``checkpoint``) and stops work whose input already failed.
Parsing and verifying (``bridge.parse_and_verify``: ``--verify-each``, the
outputs' verification, the host half's on the verifier thread) is safe on
any text and goes on meanwhile: where a pass made bad IR of a bad input, the
input's error is what is raised.

Where LLVM checks the input: where a core is free (``forks``), in a forked
child, the checker, which serves every input this process checks (``_Checker``: forked once, the text sent
through a pipe, the verdict back; LLVM's printing only where it differs).
On the verifier thread (without ``fork`` or a free core), as before, LLVM's calls all pass one lock of llvmlite's, so the input's parse,
print and verify and then both halves' parse and verify ran in a row, about
1.85x the floor, and after each call the thread waited up to a switch interval
for the GIL the passes' Python held; in the child the input's check runs
beside the passes and the host half's verification, with an interpreter of
its own, and only the device half's verification follows the passes.  A
child forked for each input instead made a long-lived parent copy every page
of its heap it wrote while the child lived (+0.2x the floor of CPU at full
size); the one checker's pages are copied once.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import select
import struct
import threading
import time

try:
    import fcntl
except ImportError:         # (no fcntl, no fork: the verifier thread checks)
    fcntl = None
from dataclasses import dataclass

from ..support import knobs
from . import bridge
from .bitcode_worker import _PARENT_FDS, _spare_core
from .bridge import _forked, _record, _send, complaint, in_background, parse_assembly, serve_records

__all__ = ["InputCheck", "Verdict", "Abandoned", "worth_speculating", "checkpoint", "printed_alike"]

#: how LLVM's printing of a module starts (then the module's name and a newline)
MODULE_ID = "; ModuleID = "


class Abandoned(BaseException):
    """Unwinds speculative work whose input failed (invalid, or not LLVM's
    printing): a ``BaseException``, so that no ``except Exception`` in a pass
    keeps it from reaching ``loading.load_and_run``."""


@dataclass
class Verdict:
    """LLVM's verdict on an input text: ``parse_error`` (the text parser's
    complaint), ``verify_problem`` (the verifier's), ``stopped``, or none; ``printing``:
    LLVM's canonical printing where it differs from the text (None where the
    text is it)."""

    parse_error: str | None = None
    verify_problem: str | None = None
    printing: str | None = None
    #: the checker child died on the text (``LLVM stopped (killed by ...)``)
    stopped: str | None = None

    @property
    def confirms(self) -> bool:
        """The work done on the text as given stands."""
        return self.parse_error is None and self.verify_problem is None and self.printing is None \
            and self.stopped is None


def worth_speculating(text: str) -> bool:
    """Whether ``text`` looks like LLVM's printing (its first line LLVM's
    ``; ModuleID``) and work may start before LLVM's check: with a second
    thread only (``MINISYCL_VERIFY_THREADS=1`` checks first, as always)."""
    return text.startswith(MODULE_ID) and "\n" in text and knobs.verify_threads() != 1


def printed_alike(printing: str, text: str) -> bool:
    """Whether LLVM's ``printing`` and ``text`` cut into the same entities:
    equal but for their first line, the ``; ModuleID`` comment (it names the
    module, which LLVM's parser calls ``<string>``; the reader skips comments)."""
    if not (printing.startswith(MODULE_ID) and text.startswith(MODULE_ID)):
        return printing == text
    a, b = printing.find("\n"), text.find("\n")
    return a >= 0 and b >= 0 and len(printing) - a == len(text) - b and printing[a:] == text[b:]


def _check(text: str):
    """The verifier thread's check: ``(Verdict, LLVM's module or None)``."""
    try:
        ref = parse_assembly(text)
    except RuntimeError as err:
        return Verdict(parse_error=str(err)), None
    printing = str(ref)
    problem = complaint(ref)
    return Verdict(verify_problem=problem, printing=None if printed_alike(printing, text) else printing), ref


class InputCheck:
    """LLVM's parse, print and verification of an input ``text``, started in
    a forked child (``fork``) or on the verifier thread.  ``pending()``: the
    ``with`` block during which the calling thread makes no LLVM module before
    the verdict; ``result()``: the verdict; ``close()``: lets go of LLVM's
    module (the child's, or the one on the verifier thread)."""

    def __init__(self, text: str, fork: bool | None = None):
        self.text = text
        self._verdict: Verdict | None = None
        if fork is None:
            fork = forks()
        self._child = _idle_checker() if fork else None
        if self._child is not None:
            self._child.submit(text)
            self._future = None
        else:
            self._future = in_background(_check, text)

    @contextlib.contextmanager
    def pending(self):
        """The calling thread's LLVM modules wait for the verdict (``bridge.settled``)."""
        before = bridge.await_before_llvm(None)

        def wait():
            if before is not None:      # (an input this work came from, still unchecked)
                before()
            if not self.result().confirms:
                raise Abandoned()
        bridge.await_before_llvm(wait)
        try:
            yield
        finally:
            bridge.await_before_llvm(before)

    def failed_already(self) -> bool:
        """Whether the verdict is known, without waiting, not to confirm the work."""
        if self._verdict is None:
            if not (self._child.ready() if self._child is not None else self._future.done()):
                return False
        return not self.result().confirms

    def result(self) -> Verdict:
        """LLVM's verdict (waits for it)."""
        if self._verdict is None:
            if self._child is not None:
                self._verdict = self._child.verdict()
                self._child = None
            else:
                self._verdict = self._future.result()[0]
        return self._verdict

    def close(self) -> None:
        """Let go of LLVM's module of the input once the check is done (now,
        or when it is: a caller leaving early does not wait for it; its child
        is stopped)."""
        if self._child is not None:         # (left before its verdict)
            _drop_checker(self._child)
            self._child = None
        elif self._future is not None:
            self._future.add_done_callback(_free)


def forks() -> bool:
    """Whether the input's check runs in the checker child (else on the
    verifier thread): where ``os.fork`` exists, a second thread is allowed,
    and a core is free for it (``bitcode_worker._spare_core``: the load average
    leaves one).  On a busy machine the child, the verifier thread (the host
    half) and the passes would take three shares of the cores where the thread
    takes two, and the passes, the critical path, run slower: measured on 2
    cores under load 2, 3.15-3.22x the floor against the thread's 2.88-2.93x."""
    return hasattr(os, "fork") and knobs.verify_threads() != 1 and _spare_core()


#: a verdict's three fields on the pipe (``stopped`` is the parent's): for each, whether it is there, and its length
_FIELDS = struct.Struct("<?Q?Q?Q")


def _pack(verdict: Verdict) -> bytes:
    fields = [None if f is None else f.encode("utf-8", "surrogateescape")
              for f in (verdict.parse_error, verdict.verify_problem, verdict.printing)]
    head = _FIELDS.pack(*[x for f in fields for x in (f is not None, len(f or b""))])
    return head + b"".join(f for f in fields if f)


def _unpack(payload: bytes) -> Verdict:
    head = _FIELDS.unpack_from(payload)
    at, fields = _FIELDS.size, []
    for there, size in zip(head[0::2], head[1::2]):
        fields.append(payload[at:at + size].decode("utf-8", "surrogateescape") if there else None)
        at += size
    return Verdict(*fields)


class _Checker:
    """A forked child that checks input texts, one at a time, for as long as
    this process lives: ``T`` records in (the text), ``V`` records out (the
    packed verdict, LLVM's printing only where it differs from the text).  It
    is forked once, the first time an input is checked, and then serves every
    later check: the pages the parent shares with it are copied once, not
    again for every input (a fork per input made the parent copy every page
    of its heap it wrote, 0.2x the floor at full size in a long-lived process).
    It ends when this process closes its input (at exit, or when a check is
    left unanswered: the next check forks another).  A child that dies on a
    text gives the verdict ``stopped`` (LLVM's last words) instead of taking
    this process with it."""

    def __init__(self):
        inp, self._to = os.pipe()

        def serve(out: int, errors: int) -> None:
            # it lives on: it holds no other file of this process open (a pipe another
            # child waits to see closed, an output file)
            keep = sorted(fd for fd in {inp, out, errors} if fd > 2)
            for low, high in zip([3] + [k + 1 for k in keep], keep + [os.sysconf("SC_OPEN_MAX")]):
                os.closerange(low, high)
            _serve(inp, out, errors)

        self._stack = contextlib.ExitStack()
        try:
            self._run = self._stack.enter_context(_forked(serve))
        except BaseException:
            os.close(self._to)
            raise
        finally:
            os.close(inp)
        self._fds = (self._to, self._run.pipe.fileno())
        self._writing = None
        _PARENT_FDS.update(self._fds)
        if hasattr(fcntl, "F_SETPIPE_SZ"):      # Linux: a module goes over in a few writes
            with contextlib.suppress(OSError):
                fcntl.fcntl(self._to, fcntl.F_SETPIPE_SZ, 1 << 20)
        self.busy = False

    def alive(self) -> bool:
        return self._run.status is None

    def submit(self, text: str) -> None:
        """Send ``text``: the verifier thread writes it (the pipe takes a
        module in several writes, each waiting for the child to read, which
        on a busy machine may wait for a core: not the passes' wait)."""
        self.busy = True
        self._writing = in_background(_send_quietly, self._to, text.encode("utf-8", "surrogateescape"))

    def ready(self) -> bool:
        """Whether the verdict can be read without waiting for LLVM."""
        return bool(select.select([self._run.pipe], [], [], 0)[0])

    def verdict(self) -> Verdict:
        kind, payload = _record(self._run.pipe)
        self.busy = False
        if kind == b"V":
            global _checked_cpu
            _checked_cpu += _CPU.unpack_from(payload)[0]
            return _unpack(payload[_CPU.size:])
        self._close_input()
        verdict = Verdict(stopped=bridge._fatal(self._run.wait(), self._run.stderr()))
        self.close()
        return verdict

    def _close_input(self) -> None:
        """Close the child's input, once no write to it is under way (the
        number would be another file's after ``close``)."""
        if self._writing is not None:
            self._writing.result()          # (the child reads it, or has died: the write ends)
            self._writing = None
        if self._to >= 0:
            _PARENT_FDS.difference_update(self._fds)
            os.close(self._to)
            self._to = -1

    def close(self) -> None:
        """End the child (killed, if it is still at work), reap it, close its input."""
        self._stack.close()
        self._close_input()


def _send_quietly(fd: int, data: bytes) -> None:
    """The checker's ``T`` record; a child that died meanwhile (its verdict says how) is no error here."""
    with contextlib.suppress(OSError):
        _send(fd, b"T", data)


def _serve(inp: int, out: int, errors: int) -> None:
    """The checker child: the verdict on each text of ``inp``, to ``out``,
    until its input ends.  Only ``os._exit`` leaves it."""
    def answer(kind: bytes, payload: bytes) -> None:
        c0 = time.process_time()
        verdict, ref = _check(payload.decode("utf-8", "surrogateescape"))
        _send(out, b"V", _CPU.pack(time.process_time() - c0) + _pack(verdict))
        if ref is not None:
            ref.close()
    serve_records(inp, errors, answer)


#: the CPU time a check took the child, before its verdict
_CPU = struct.Struct("<d")
_checked_cpu = 0.0


def checker_cpu() -> float:
    """The CPU time checker children spent on the checks answered so far
    (a child's CPU time counts in this process's only once it is reaped:
    ``bench/bench_passes.py`` adds this)."""
    return _checked_cpu


_checker_lock = threading.Lock()
_checker: _Checker | None = None


def _idle_checker() -> _Checker | None:
    """The checker child, forked the first time, marked busy; None while
    another check has it (that check then goes to the verifier thread)."""
    global _checker
    with _checker_lock:
        if _checker is not None and not _checker.alive():
            _checker = None
        if _checker is None:
            _checker = _Checker()
            atexit.register(_checker.close)
        elif _checker.busy:
            return None
        _checker.busy = True
        return _checker


def _drop_checker(checker: _Checker) -> None:
    """``checker`` owes an answer nobody will read: it is ended, the next check forks another."""
    global _checker
    with _checker_lock:
        if _checker is checker:
            _checker = None
    checker.close()


def _after_fork_in_child() -> None:
    global _checker, _checker_lock
    _checker, _checker_lock = None, threading.Lock()       # (the parent's child is the parent's)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _free(future) -> None:
    if future.exception() is None and future.result()[1] is not None:
        bridge.close_in_background(future.result()[1])


#: per thread: the checks whose verdicts the work running on it awaits (``speculating``)
_current = threading.local()


@contextlib.contextmanager
def speculating(check: InputCheck):
    """Work on ``check``'s text runs on this thread during the ``with`` block:
    it makes no LLVM module before the verdict (``pending``), and
    ``checkpoint`` looks at the verdict."""
    checks = _current.__dict__.setdefault("checks", [])
    checks.append(check)
    try:
        with check.pending():
            yield
    finally:
        checks.pop()


def checkpoint() -> None:
    """Stop speculative work (``Abandoned``) whose input is known, by now, to
    have failed; nothing outside speculative work (or on another thread).
    The pass manager calls it before each pass."""
    checks = getattr(_current, "checks", None)
    if checks and any(check.failed_already() for check in checks):
        raise Abandoned()
