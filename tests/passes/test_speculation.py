"""Work begun while LLVM still checks the input (``passes/ir/speculation.py``,
issue 28 point 1): ``load_and_run`` gives what checking first gives, for valid,
invalid and non-canonical inputs alike; no LLVM module is made from an input
before its verdict."""
import os
import sys
import threading

import llvmlite.binding as llvm
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from minisycl.passes import parse_pipeline
from minisycl.passes.ir import IRError, bridge, load_and_run, speculation, verify_and_serialize
from minisycl.passes.manager import PassContext, PassManager, PassResult
from minisycl.passes.support import knobs
from minisycl.passes.support.cli import main
from minisycl.passes.support.diagnostics import CompileError

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from gen_ir import generate_module  # noqa: E402

FUZZ = settings(max_examples=knobs.fuzz_examples(60), deadline=None, database=None,
                derandomize="MINISYCL_FUZZ_EXAMPLES" not in os.environ, suppress_health_check=list(HealthCheck))

#: LLVM's printing of a small single-source module (it starts with LLVM's ``; ModuleID``)
PRINTED = str(llvm.parse_assembly(generate_module(3)))
LINES = PRINTED.splitlines()
PIPELINE = "split-if-device,propagate-aspects"
#: two instructions that use each other: LLVM parses them, its verifier refuses them
UNDOMINATED = ["  %zz1 = add i32 %zz2, 1", "  %zz2 = add i32 %zz1, 1"]
#: the printed module with a body that does not verify (in a kernel)
UNVERIFIABLE = PRINTED.replace("entry:\n", "entry:\n" + "".join(ln + "\n" for ln in UNDOMINATED), 1)


def outcome(path: str, speculate: bool, verify_each: bool = False):
    """What ``split-if-device,propagate-aspects`` and the outputs' verification
    give for the file: ``("ok", host, device)`` or ``(error type, message)``."""
    def work(module):
        ctx = PassManager(parse_pipeline(PIPELINE), verify_each=verify_each).run(
            module, PassContext(verify_host_in_background=True))
        return verify_and_serialize([ctx.host_module, module])
    try:
        return ("ok", *load_and_run(path, work, speculate=speculate))
    except (IRError, CompileError, RuntimeError) as err:
        return type(err).__name__, str(err)


def test_printed_input_is_speculated_on_and_gives_the_same_outputs(tmp_path, monkeypatch):
    path = tmp_path / "in.ll"
    path.write_text(PRINTED)
    started = []
    real = speculation.InputCheck.pending
    monkeypatch.setattr(speculation.InputCheck, "pending", lambda self: started.append(1) or real(self))
    fast = outcome(str(path), True)
    assert started, "LLVM's own printing must be speculated on"
    assert fast[0] == "ok" and fast == outcome(str(path), False)


MUTATIONS = st.sampled_from(["delete", "duplicate", "swap", "comment", "space", "retype", "rename", "garbage",
                             "undominated"])


def mutate(lines: list[str], how: str, at: int) -> list[str]:
    """One edit of line ``at`` (never the first: the ``; ModuleID`` line stays,
    so that every input is speculated on)."""
    lines = list(lines)
    line = lines[at]
    if how == "delete":
        del lines[at]
    elif how == "duplicate":
        lines.insert(at, line)
    elif how == "swap" and at + 1 < len(lines):
        lines[at], lines[at + 1] = lines[at + 1], line
    elif how == "comment":                          # valid, but not LLVM's printing: the work runs again
        lines.insert(at, "; a comment")
    elif how == "space":
        lines[at] = line.replace(" ", "  ", 1)
    elif how == "retype":
        lines[at] = line.replace("i32", "i64", 1) if "i32" in line else line.replace("ptr", "i32", 1)
    elif how == "undominated":                      # parses; the verifier refuses it
        entry = next((i for i in range(at, len(lines)) if lines[i] == "entry:"), None)
        if entry is not None:
            lines[entry + 1:entry + 1] = UNDOMINATED
    elif how == "rename":
        lines[at] = line.replace("%", "%zz", 1)
    else:
        lines[at] = line[: len(line) // 2] + " } ( @"
    return lines


@FUZZ
@given(st.lists(st.tuples(MUTATIONS, st.integers(1, len(LINES) - 1)), min_size=0, max_size=3), st.booleans(),
       st.booleans())
def test_speculation_gives_what_checking_first_gives(tmp_path_factory, edits, verify_each, in_child):
    """Either way the input is checked: in the checker child, or on the verifier thread."""
    lines = LINES
    for how, at in edits:
        lines = mutate(lines, how, min(at, len(lines) - 1))
    path = tmp_path_factory.mktemp("spec") / "in.ll"
    path.write_text("\n".join(lines) + "\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(speculation, "forks", lambda: in_child)
        assert outcome(str(path), True, verify_each) == outcome(str(path), False, verify_each)


class _Optimizing:
    """A pass that hands the module to LLVM's optimiser (as ``lower-work-groups`` does)."""

    name = "optimizing"

    def run(self, module, am):
        bridge.inline_and_simplify(module.text(), [])
        return PassResult.NONE


class _Touching:
    """A pass that says it changed the module (``--verify-each`` then verifies it)."""

    name = "touching"

    def run(self, module, am):
        return PassResult.NONE


def test_no_llvm_module_but_parse_and_verify_is_made_from_an_input_before_its_verdict(tmp_path, monkeypatch):
    """A pass that runs LLVM's optimiser on an input that does not verify: the
    pass runs on it (speculatively), but its IR never reaches LLVM's
    optimiser on this thread; ``--verify-each``'s parse and verify may, and
    the input's error is what is raised either way."""
    path = tmp_path / "in.ll"
    path.write_text(UNVERIFIABLE)
    made = []
    real = llvm.parse_assembly

    def counting(text, *args, **kwargs):
        frame, verifying = sys._getframe(1), False
        while frame is not None and not verifying:
            verifying, frame = frame.f_code is bridge.parse_and_verify.__code__, frame.f_back
        if threading.current_thread() is threading.main_thread():
            (verified if verifying else made).append(text)
        return real(text, *args, **kwargs)
    verified = []
    monkeypatch.setattr(llvm, "parse_assembly", counting)
    for verify_each in (False, True):
        with pytest.raises(IRError, match="invalid module: Instruction does not dominate all uses!"):
            load_and_run(str(path), lambda module: PassManager([_Touching(), _Optimizing()], verify_each=verify_each
                                                               ).run(module, PassContext()))
    assert made == []       # (the check itself parses in the checker child, or on the verifier thread)


def test_work_that_fails_on_an_invalid_input_gives_the_input_error(tmp_path):
    path = tmp_path / "in.ll"
    path.write_text(PRINTED.replace("define ", "define frob ", 1))

    def work(module):
        raise RuntimeError("the work's own error")
    with pytest.raises(IRError, match="error: "):
        load_and_run(str(path), work)
    path.write_text(PRINTED)
    with pytest.raises(RuntimeError, match="the work's own error"):
        load_and_run(str(path), work)


def test_opt_writes_the_same_files_and_errors_either_way(tmp_path, monkeypatch):
    """The ``minisycl opt`` command, speculating or checking first (one thread)."""
    good, bad = tmp_path / "good.ll", tmp_path / "bad.ll"
    good.write_text(PRINTED)
    bad.write_text(UNVERIFIABLE)
    got = {}
    for threads in ("2", "1"):
        monkeypatch.setenv("MINISYCL_VERIFY_THREADS", threads)
        for src in (good, bad):
            dev, host = tmp_path / f"{src.stem}{threads}.dev.ll", tmp_path / f"{src.stem}{threads}.host.ll"
            r = CliRunner().invoke(main, ["opt", f"-passes={PIPELINE}", str(src), "-o", str(dev),
                                          "--host-output", str(host)])
            got[src.stem, threads] = (r.exit_code, r.output,
                                      dev.read_text() if dev.exists() else None, host.read_text() if host.exists() else None)
    assert got["good", "2"] == got["good", "1"] and got["good", "2"][0] == 0
    assert got["bad", "2"] == got["bad", "1"] and got["bad", "2"][0] == 1 and got["bad", "2"][2] is None


class _Recording:
    """A pass that records that it ran, and waits a little (so that the
    verdict on a small input is in before the next pass)."""

    def __init__(self, name: str, ran: list):
        self.name, self.ran = name, ran

    def run(self, module, am):
        import time
        self.ran.append(self.name)
        time.sleep(0.3)
        return PassResult.ALL


def test_speculative_work_stops_at_the_next_pass_once_its_input_failed(tmp_path):
    path = tmp_path / "in.ll"
    path.write_text(PRINTED.replace("define ", "define frob ", 1))     # LLVM's parser refuses it at once
    ran, began = [], []
    pm = PassManager([_Recording(f"p{i}", ran) for i in range(5)])
    with pytest.raises(IRError, match=r"in\.ll:\d+:\d+: error: "):
        load_and_run(str(path), lambda module: began.append(1) or pm.run(module, PassContext()))
    # the work began before the verdict; the checker child may answer before the first pass even starts
    assert began and len(ran) < 5


# -- the checker child (``speculation._Checker``) ------------------------------------------

def _fresh_checker():
    """Forget the checker child, so that the next check forks one (with this test's patches)."""
    if speculation._checker is not None:
        speculation._drop_checker(speculation._checker)


@pytest.fixture
def forking(monkeypatch):
    """Checks go to the checker child, however busy the machine (``speculation.forks``)."""
    monkeypatch.setattr(speculation, "_spare_core", lambda: True)


def test_the_child_is_forked_only_where_a_core_is_free(monkeypatch):
    monkeypatch.delenv("MINISYCL_VERIFY_THREADS", raising=False)
    for spare in (True, False):
        monkeypatch.setattr(speculation, "_spare_core", lambda: spare)
        assert speculation.forks() is (spare and hasattr(os, "fork"))
        monkeypatch.setenv("MINISYCL_VERIFY_THREADS", "1")
        assert speculation.forks() is False
        monkeypatch.delenv("MINISYCL_VERIFY_THREADS")


def test_one_checker_child_serves_every_check(tmp_path, forking):
    path = tmp_path / "in.ll"
    path.write_text(PRINTED)
    first = outcome(str(path), True)
    child = speculation._checker
    assert child is not None and child.alive()
    assert outcome(str(path), True) == first and speculation._checker is child
    assert speculation.checker_cpu() > 0


def test_a_checker_child_that_dies_is_an_error_and_the_next_check_forks_another(tmp_path, monkeypatch, forking):
    path = tmp_path / "in.ll"
    path.write_text(PRINTED)
    _fresh_checker()
    real = speculation._check
    monkeypatch.setattr(speculation, "_check", lambda text: os.abort())     # (the child forked next has it)
    try:
        got = outcome(str(path), True)
    finally:
        _fresh_checker()
    assert got[0] == "IRError" and "in.ll: LLVM stopped (killed by SIGABRT)" in got[1], got
    monkeypatch.setattr(speculation, "_check", real)
    assert outcome(str(path), True) == outcome(str(path), False)


def test_a_check_left_before_its_verdict_ends_its_child(tmp_path, monkeypatch, forking):
    """Work that raises what no verdict settles (Ctrl-C) leaves at once: the
    child still at work on it is ended, and the next check forks another."""
    path = tmp_path / "in.ll"
    path.write_text(PRINTED)
    _fresh_checker()
    slow = speculation._check
    monkeypatch.setattr(speculation, "_check", lambda text: __import__("time").sleep(30) or slow(text))
    try:
        def interrupted(module):
            raise KeyboardInterrupt
        with pytest.raises(KeyboardInterrupt):
            load_and_run(str(path), interrupted)
        assert speculation._checker is None
    finally:
        _fresh_checker()
    monkeypatch.setattr(speculation, "_check", slow)
    assert outcome(str(path), True)[0] == "ok" and speculation._checker.alive()


def test_a_check_while_the_child_is_busy_goes_to_the_thread(tmp_path, forking):
    """``load_and_run`` inside another's work: the inner input is checked on
    the verifier thread, and both give what checking first gives."""
    good, bad = tmp_path / "good.ll", tmp_path / "bad.ll"
    good.write_text(PRINTED)
    bad.write_text(UNVERIFIABLE)

    def nested(module):
        return module.text(), outcome(str(bad), True), outcome(str(good), True)
    got = load_and_run(str(good), nested)
    assert got[1] == outcome(str(bad), False) and got[1][0] == "IRError"
    assert got[2] == outcome(str(good), False) and got[2][0] == "ok"


def test_the_checker_child_holds_no_other_file_of_the_process_open(tmp_path, forking):
    """It lives on: a pipe open when it was forked closes when this process closes it."""
    import select
    path = tmp_path / "in.ll"
    path.write_text(PRINTED)
    _fresh_checker()
    r, w = os.pipe()
    try:
        assert outcome(str(path), True)[0] == "ok" and speculation._checker is not None
        os.close(w)
        assert select.select([r], [], [], 10)[0] and os.read(r, 1) == b""     # the end of the pipe, not a wait
    finally:
        os.close(r)
