"""Work on an input while LLVM is still checking it (issue 28, point 1).

Reading IR text costs LLVM a parse, a print and a verification before any
pass may start, since passes read LLVM's canonical printing, never the text
as given.  Text that LLVM printed itself (a ``.ll`` file from ``minisycl
compile``, ``clang -S -emit-llvm``: it starts with LLVM's ``; ModuleID``
line) is, nearly always, its own canonical printing already.  For such text
``InputCheck`` hands the text to LLVM on the verifier thread (llvmlite lets go
of the GIL inside LLVM) and the caller's work starts at once on the text as
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
safe: while it runs, the thread running it makes no LLVM module before the
verdict (``bridge.settled``, at every place the bridge makes one): a pass that
hands IR to LLVM's optimiser, ``--verify-each`` or the outputs' verification
first waits for the verdict there, and unwinds the work (``Abandoned``) when
the speculation failed.  The pass manager also looks between passes
(``checkpoint``) and stops work whose input already failed.  Verification on
the verifier thread (the host half's, started early) is parse and verify
only, safe on any text, and goes on meanwhile.

Why the thread and not a forked child, which would let LLVM check the input
beside the thread's other LLVM work: measured (``bench/bench_passes.py``),
the child's copied pages and fork cost 15-30% more CPU, and its one gain, the
host half's verification beside the input's, is about a third of the floor;
with the thread, LLVM's calls in a row (the input's parse, print and verify,
then both halves' parse and verify: about 1.85x the floor) are the critical
path wherever the passes' Python (about 1x) fits beside them.
"""
from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass

from ..support import knobs
from . import bridge
from .bridge import complaint, in_background, parse_assembly

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
    complaint), ``verify_problem`` (the verifier's), or neither; ``printing``:
    LLVM's canonical printing where it differs from the text (None where the
    text is it)."""

    parse_error: str | None = None
    verify_problem: str | None = None
    printing: str | None = None

    @property
    def confirms(self) -> bool:
        """The work done on the text as given stands."""
        return self.parse_error is None and self.verify_problem is None and self.printing is None


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
    """LLVM's parse, print and verification of an input ``text``, started on
    the verifier thread.  ``pending()``: the ``with`` block during which the
    calling thread makes no LLVM module before the verdict; ``result()``: the
    verdict; ``close()``: lets go of LLVM's module (on the verifier thread)."""

    def __init__(self, text: str):
        self.text = text
        self._future = in_background(_check, text)
        self._verdict: Verdict | None = None

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
        return self._future.done() and not self.result().confirms

    def result(self) -> Verdict:
        """LLVM's verdict (waits for it)."""
        if self._verdict is None:
            self._verdict = self._future.result()[0]
        return self._verdict

    def close(self) -> None:
        """Let go of LLVM's module of the input once the check is done (now,
        or when it is: a caller leaving early does not wait for it)."""
        self._future.add_done_callback(_free)


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
