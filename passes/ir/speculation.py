"""Work on an input while LLVM is still checking it (issue 28, point 1).

Reading IR text costs LLVM a parse, a print and a verification before any
pass may start, since passes read LLVM's canonical printing, never the text
as given.  Text that LLVM printed itself (a ``.ll`` file from ``minisycl
compile``, ``clang -S -emit-llvm``: it starts with LLVM's ``; ModuleID``
line) is, nearly always, its own canonical printing already.  For such text
``InputCheck`` hands the text to LLVM on another core (a forked child, or the
verifier thread when no core is spare) and the caller's work starts at once
on the text as given; LLVM's verdict then settles it:

* the input is invalid: the work's result, or its error, is dropped and the
  input's error is raised, exactly as if the input had been checked first;
* LLVM's printing differs from the text (other than in the ``; ModuleID``
  comment, which the reader skips): the work is dropped and runs again on
  LLVM's printing (the work must therefore have no effect outside its result);
* the input is valid and is LLVM's printing: the work's result stands, and is
  byte for byte what it would have been after the check.

Every input is still parsed and verified by LLVM; nothing derived from it
leaves before the verdict.  One guarantee makes the speculative work itself
safe: while it runs, the thread running it makes no LLVM module before the
verdict (``bridge.settled``, at every place the bridge makes one): a pass that
hands IR to LLVM's optimiser, ``--verify-each`` or the outputs' verification
first waits for the verdict there, and unwinds the work (``Abandoned``) when
the speculation failed.  The pass manager also looks between passes
(``checkpoint``) and stops work whose input already failed.  Verification on
the verifier thread (the host half's, started early) is parse and verify
only, safe on any text, and goes on meanwhile.
"""
from __future__ import annotations

import contextlib
import os
import select
import threading
from dataclasses import dataclass

from ..support import knobs
from . import bridge
from .bridge import _fatal, _forked, _record, _send, child_setup, complaint, in_background, parse_assembly

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
    complaint), ``verify_problem`` (the verifier's), ``crash`` (the child
    checking it died: how), or none of them; ``printing``: LLVM's canonical
    printing where it differs from the text (None where the text is it)."""

    parse_error: str | None = None
    verify_problem: str | None = None
    crash: str | None = None
    printing: str | None = None

    @property
    def confirms(self) -> bool:
        """The work done on the text as given stands."""
        return self.parse_error is None and self.verify_problem is None and self.crash is None \
            and self.printing is None


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


def _in_thread(text: str):
    """The verifier thread's check: ``(Verdict, LLVM's module or None)``."""
    try:
        ref = parse_assembly(text)
    except RuntimeError as err:
        return Verdict(parse_error=str(err)), None
    printing = str(ref)
    problem = complaint(ref)
    return Verdict(verify_problem=problem, printing=None if printed_alike(printing, text) else printing), ref


def _child(text: str, out: int, errors: int) -> None:
    """The forked child's check: ``E`` (the parser's complaint), or ``S`` (LLVM's
    printing is the text) or ``T`` (LLVM's printing), then ``V`` (the
    verifier's complaint, empty when none).  Only ``os._exit`` leaves it (the
    child disposes of nothing: its memory goes with it)."""
    code = 70
    try:
        child_setup(errors)
        try:
            ref = parse_assembly(text)
        except RuntimeError as err:
            _send(out, b"E", str(err).encode("utf-8", "replace"))
        else:
            printing = str(ref)
            if printed_alike(printing, text):
                _send(out, b"S", b"")
            else:
                _send(out, b"T", printing.encode("utf-8", "surrogateescape"))
            _send(out, b"V", (complaint(ref) or "").encode("utf-8", "replace"))
        code = 0
    finally:
        os._exit(code)


class InputCheck:
    """LLVM's parse, print and verification of an input ``text`` started
    beside the caller (a context manager: leaving it early kills a child still
    checking).  ``pending()``: the ``with`` block during which the calling
    thread makes no LLVM module before the verdict; ``result()``: the verdict."""

    def __init__(self, text: str):
        self.text = text
        self._verdict: Verdict | None = None
        self._future = self._run = None
        self._stack = contextlib.ExitStack()
        self.ref = None             # LLVM's module, where the verifier thread checked: the caller closes it
        self._first: tuple | None = None         # the child's first record, once read

    def __enter__(self) -> "InputCheck":
        from .bitcode_worker import _spare_core        # (the same test the post-link worker makes)
        if hasattr(os, "fork") and _spare_core():
            self._run = self._stack.enter_context(_forked(lambda out, errors: _child(self.text, out, errors)))
        else:
            self._future = in_background(_in_thread, self.text)
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()

    @contextlib.contextmanager
    def pending(self):
        """The calling thread's LLVM modules wait for the verdict (``bridge.settled``)."""
        before = bridge.await_before_llvm(None)

        def wait():
            if before is not None:      # (an input this work came from, still unchecked)
                before()
            self._settle()
        bridge.await_before_llvm(wait)
        try:
            yield
        finally:
            bridge.await_before_llvm(before)

    def _settle(self) -> None:
        if not self.result().confirms:
            raise Abandoned()

    def failed_already(self) -> bool:
        """Whether the verdict is known, without waiting, not to confirm the work."""
        if self._verdict is not None:
            return not self._verdict.confirms
        if self._future is not None:
            return self._future.done() and not self.result().confirms
        if self._first is None and select.select([self._run.pipe], [], [], 0)[0]:
            self._first = _record(self._run.pipe)
        return self._first is not None and self._first[0] != b"S"

    def result(self) -> Verdict:
        """LLVM's verdict (waits for it)."""
        if self._verdict is None:
            if self._future is not None:
                self._verdict, self.ref = self._future.result()
            else:
                self._verdict = self._from_child()
        return self._verdict

    def _from_child(self) -> Verdict:
        run = self._run
        kind, payload = self._first if self._first is not None else _record(run.pipe)
        verdict = None
        if kind == b"E":
            verdict = Verdict(parse_error=payload.decode("utf-8", "replace"))
        elif kind in (b"S", b"T"):
            printing = payload.decode("utf-8", "surrogateescape") if kind == b"T" else None
            last, problem = _record(run.pipe)
            if last == b"V":
                verdict = Verdict(verify_problem=problem.decode("utf-8", "replace") or None, printing=printing)
        status = run.wait()
        if verdict is None or not os.WIFEXITED(status) or os.waitstatus_to_exitcode(status) != 0:
            return Verdict(crash=_fatal(status, run.stderr()))
        return verdict


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
