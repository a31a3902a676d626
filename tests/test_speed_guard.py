"""The speed guard CI runs after the tests (``bench/guard.py``, issue 28 point 3):
its verdicts, its one thresholds file, and a deliberate slowdown (a sleep in a
pass, injected into the bench's process) making it fail."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import guard  # noqa: E402
from thresholds import OPTIONAL, THRESHOLDS  # noqa: E402

LIMITS = {"a / base": (2.0, "test", "bench_a.py"), "b / base": (1.5, "test", "bench_a.py"),
          "tool / base": (3.0, "test", "bench_b.py")}


def verdicts(rows):
    return {r[0]: r[5] for r in rows}


def test_within_and_over_thresholds():
    rows, ok = guard.judge({"bench_a.py": ({"a / base": 1.9, "b / base": {"ratio": 1.2, "measured": "1.2 s",
                                                                           "baseline": "1 s"}}, None, 1.0),
                            "bench_b.py": ({"tool / base": 2.0}, None, 1.0)}, LIMITS, {})
    assert ok and set(verdicts(rows).values()) == {"ok"}
    assert ("b / base", "1.2 s", "1 s", "1.200", "1.500", "ok") in rows
    rows, ok = guard.judge({"bench_a.py": ({"a / base": 2.1, "b / base": 1.0}, None, 1.0)}, LIMITS, {})
    assert not ok and verdicts(rows)["a / base"] == "TOO SLOW" and verdicts(rows)["b / base"] == "ok"


@pytest.mark.parametrize("results, why", [
    ({"bench_a.py": ({"a / base": 1.0, "b / base": 1.0, "new / base": 1.0}, None, 1.0)}, "no threshold"),
    ({"bench_a.py": ({"a / base": 1.0}, None, 1.0)}, "did not measure"),
    ({"bench_a.py": ({}, "exit status 1: Traceback", 1.0)}, "FAILED: exit status 1"),
    ({"bench_a.py": ({"a / base": "fast", "b / base": 1.0}, None, 1.0)}, "no numeric ratio"),
    ({"bench_a.py": ({"a / base": float("nan"), "b / base": 1.0}, None, 1.0)}, "no numeric ratio"),
])
def test_what_fails_the_guard(results, why):
    rows, ok = guard.judge(results, LIMITS, {})
    assert not ok and any(why in r[5] for r in rows), rows


def test_a_missing_tool_is_skipped_not_failed():
    rows, ok = guard.judge({"bench_b.py": ({}, None, 1.0)}, LIMITS, {"tool / base": "gcc not found"})
    assert ok and verdicts(rows) == {"tool / base": "skipped (gcc not found)"}


def test_thresholds_file_is_the_one_place():
    """Every threshold is positive, says where it came from, and names a bench the
    guard runs; every bench the guard runs has thresholds; optional figures exist."""
    for name, (limit, origin, source) in THRESHOLDS.items():
        assert limit > 0 and len(origin) > 20 and source in guard.BENCHES, name
    assert {s for _, _, s in THRESHOLDS.values()} == set(guard.BENCHES)
    assert set(OPTIONAL) <= set(THRESHOLDS)
    for script in guard.BENCHES:
        assert (BENCH / script).is_file()
        assert "--quick" in (BENCH / script).read_text()


def test_a_sleep_in_a_pass_fails_the_guard(tmp_path):
    """The deliberate slowdown: ``split-if-device`` sleeps 3 s per run (the quick
    figure's LLVM baseline is 0.1-0.3 s), injected through a ``sitecustomize``
    into the bench's own process (no hook in the code)."""
    (tmp_path / "sitecustomize.py").write_text(textwrap.dedent("""
        import time
        from minisycl.passes.split_if_device import SplitIfDevice
        _run = SplitIfDevice.run
        def slow(self, *args, **kwargs):
            time.sleep(3.0)
            return _run(self, *args, **kwargs)
        SplitIfDevice.run = slow
    """))
    env = dict(os.environ)                      # the child's environment, with the sleep first on its path
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, str(BENCH / "guard.py"), "--only", "bench_passes.py"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr
    figures = [name for name, (_, _, source) in THRESHOLDS.items() if source == "bench_passes.py"]
    slow = [line for line in done.stdout.splitlines() if line.split("  ")[0] in figures and "TOO SLOW" in line]
    assert slow, done.stdout
    assert "speed guard: FAILED" in done.stdout


def test_figures_are_read_in_either_form():
    """A last line of figures, or closing lines of one figure each; other output before them is ignored."""
    assert guard.read_figures('progress\n{"a": 1.5, "b": {"ratio": 2.0}}\n') == {"a": 1.5, "b": {"ratio": 2.0}}
    lines = 'table\n{"figure": "x", "ratio": 3.1, "target": 2.0}\n{"figure": "y", "ratio": 1.0, "target": 1.0}\n'
    assert guard.read_figures(lines) == {"x": {"ratio": 3.1, "target": 2.0}, "y": {"ratio": 1.0, "target": 1.0}}
    assert guard.read_figures("no figures\n") == {}


def test_a_figure_over_its_threshold_is_measured_again():
    """One slow run of a shared machine does not fail the guard; a figure slow in
    both runs does; only benches with a figure over its threshold run again, and
    a rerun that fails keeps the first run's figures."""
    ran = []

    def rerun(values):
        def runner(script):
            ran.append(script)
            return values[script]
        return runner

    first = {"bench_a.py": ({"a / base": 2.5, "b / base": {"ratio": 1.0, "measured": "1 s"}}, None, 1.0),
             "bench_b.py": ({"tool / base": 2.0}, None, 1.0)}
    results = dict(first)
    assert guard.confirm(results, rerun({"bench_a.py": ({"a / base": 1.8, "b / base": 1.4}, None, 2.0)}),
                         LIMITS) == ["bench_a.py"]
    assert ran == ["bench_a.py"]
    assert results["bench_a.py"] == ({"a / base": 1.8, "b / base": {"ratio": 1.0, "measured": "1 s"}}, None, 3.0)
    assert guard.judge(results, LIMITS, {})[1]

    results = dict(first)                       # slow twice: fails, with the better of the two
    guard.confirm(results, rerun({"bench_a.py": ({"a / base": 2.2, "b / base": 1.0}, None, 2.0)}), LIMITS)
    rows, ok = guard.judge(results, LIMITS, {})
    assert not ok and ("a / base", "-", "-", "2.200", "2.000", "TOO SLOW") in rows

    results = dict(first)                       # the rerun fails to run: the first run's figures stand
    guard.confirm(results, rerun({"bench_a.py": ({}, "exit status 1", 2.0)}), LIMITS)
    assert results["bench_a.py"] == first["bench_a.py"] and not guard.judge(results, LIMITS, {})[1]
    ran.clear()                                 # nothing over: nothing runs again
    assert guard.confirm({"bench_b.py": ({"tool / base": 2.0}, None, 1.0)}, rerun({}), LIMITS) == [] and not ran
