"""Running generated cases where a crash is caught: the harness of the fuzz
tests (``test_fuzz_surfaces.py``, ``test_fuzz_kinds.py``).

A test starts one child Python (``run_child``) that imports minisycl once and
forks a grandchild per case (``run_case``), so a case that dies by a signal, an
abort or a hang is seen as that and cannot take the others, or the test run,
with it.  A case's verdict:

* ``0`` success, ``1`` a clean error (``UserError`` / ``sycl.exception`` with
  a one-line message, ``CompileError``, a CLI exit 1), ``2`` click's usage error;
* ``3`` an internal error or a bare exception (its traceback goes to stderr),
  ``4`` a clean error of several lines;
* ``"signal N"`` (an abort is ``signal 6``), ``"hang"`` (still running after
  ``CASE_SECONDS``; the grandchild is killed);
* ``"output: ..."`` when what the case wrote to stdout/stderr has a raw control
  character (diagnostics must escape them) or a traceback;
* ``"destroyed: PATH"`` when an input file the case names changed.

The number of generated cases each generator test runs is its CI count, or
``MINISYCL_FUZZ_EXAMPLES`` (``knobs.fuzz_examples``) for a long run.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import traceback

from minisycl.passes.support import knobs

HERE = os.path.dirname(os.path.abspath(__file__))

#: how long one case may run before it counts as a hang
CASE_SECONDS = 30

OK, CLEAN, OTHER, MULTILINE = 0, 1, 3, 4
_CONTROL = re.compile(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")


def examples(ci_count: int) -> int:
    """The number of cases a generator test runs: ``ci_count``, or the long run's."""
    return knobs.fuzz_examples(ci_count)


def verdict(fn) -> int:
    """Run ``fn()`` here and classify how it ended (see the module docstring)."""
    from minisycl.passes.support.diagnostics import CompileError, UserError
    from minisycl.runtime.errors import exception as SyclException
    try:
        fn()
        return OK
    except (UserError, SyclException) as err:
        text = err.render() if isinstance(err, UserError) else str(err)
        return CLEAN if "\n" not in text.strip() else MULTILINE
    except CompileError:
        return CLEAN
    except SystemExit as err:
        return err.code if isinstance(err.code, int) else (0 if err.code is None else 1)
    except BaseException:       # noqa: BLE001 - any other exception is the finding
        traceback.print_exc(file=sys.stderr)
        return OTHER


def _digest(path):
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


def run_case(fn, inputs=(), log=None, check_output=False, seconds=CASE_SECONDS):
    """``fn()`` in a forked grandchild: its verdict.  ``inputs``: files that must
    be the same afterwards; ``log``: a file for the case's stdout and stderr
    (else /dev/null, or stderr with FUZZ_VERBOSE set); ``check_output``: that
    output must hold no raw control character and no traceback."""
    before = {p: _digest(p) for p in inputs}
    sys.stdout.flush()
    sys.stderr.flush()
    target = log or (None if knobs.fuzz_verbose() else os.devnull)
    pid = os.fork()
    if pid == 0:
        try:
            if target is not None:
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
            sys.stdin = io.TextIOWrapper(io.BytesIO(b""))
            signal.alarm(seconds)
            code = verdict(fn)
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(locals().get("code", OTHER))
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        return "hang" if sig == signal.SIGALRM else f"signal {sig}"
    code = os.WEXITSTATUS(status)
    for p, digest in before.items():
        if _digest(p) != digest:
            return f"destroyed: {p}"
    if check_output and log is not None and code in (OK, CLEAN, 2):
        with open(log, "rb") as fh:
            out = fh.read()
        if _CONTROL.search(out):
            return f"output: a raw control character in {out[:300]!r}"
        if b"Traceback (most recent call last)" in out:
            return "output: a traceback"
    return code


def run_cases(cases):
    """The old harness: ``(name, fn)`` pairs, each run by ``run_case``; prints a
    JSON object name -> verdict."""
    print(json.dumps({name: run_case(fn) for name, fn in cases}))


#: what a child body starts with: minisycl and this module importable
HARNESS = (f"import io, json, os, random, sys\nsys.path.insert(0, {HERE!r})\n"
           "from fuzz_harness import run_case, run_cases, verdict\n")


def run_child(body: str, *args: str, timeout: int = 600) -> dict:
    """Run ``HARNESS + body`` in a child Python; the JSON its last stdout line holds."""
    proc = subprocess.run([sys.executable, "-c", HARNESS + body, *args], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, MINISYCL_DEBUG="0"))
    assert proc.returncode == 0, f"the fuzzing process died ({proc.returncode}):\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.splitlines()[-1])


def assert_clean(results: dict, allowed=(0, 1)):
    bad = {name: v for name, v in results.items() if v not in allowed}
    assert not bad, f"cases that crashed, hung, raised a bare exception (3) or gave several lines (4): {bad}"
