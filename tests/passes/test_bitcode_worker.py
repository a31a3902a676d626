"""LLVM's verification and bitcode of many modules in a forked child
(``passes/ir/bitcode_worker.py``, issue 28): the same answers as on the
thread, in order; a module that does not verify is an answer, not the end; a
child that dies owes its missing answers as LLVM's message and never hangs
the parent; a worker that goes away leaves no child behind."""
import gc
import os
import signal

import pytest

from minisycl.passes.ir.bitcode_worker import FORK_AFTER, BitcodeWorker
from minisycl.passes.ir.bridge import verified_bitcode

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the worker forks")


def module(i: int) -> str:
    return f"define i32 @f{i}(i32 %x) {{\n  %y = add i32 %x, {i}\n  ret i32 %y\n}}\n"


BAD = "define i32 @g() {\n  %a = add i32 %b, 1\n  %b = add i32 %a, 1\n  ret i32 %a\n}\n"


def test_answers_are_the_threads_in_order():
    texts = [(module(i), f"m{i}") for i in range(60)] + [(module(60), "\udcff-name"), (module(61), "a\0b")]
    worker = BitcodeWorker(fork_after=5)
    handles = [worker.submit(t, n) for t, n in texts]
    worker.finish()
    assert worker._run is not None                  # the child took all but the first five
    assert [h.result() for h in handles] == [verified_bitcode(t, n) for t, n in texts]
    assert [h.result() for h in handles] == [verified_bitcode(t, n) for t, n in texts]     # as a Future's


def test_a_module_that_does_not_verify_is_one_answer():
    worker = BitcodeWorker(fork_after=0)
    handles = [worker.submit(module(1), "a"), worker.submit(BAD, "bad"), worker.submit(module(2), "b")]
    worker.finish()
    data, problem = handles[1].result()
    assert data is None and "does not dominate all uses" in problem
    assert handles[0].result() == verified_bitcode(module(1), "a")
    assert handles[2].result() == verified_bitcode(module(2), "b")


def test_answers_taken_in_any_order_and_large_modules():
    big = "".join(module(i) for i in range(3000))       # megabytes through the pipes both ways
    worker = BitcodeWorker(fork_after=0)
    handles = [worker.submit(big if i % 3 == 0 else module(i), f"m{i}") for i in range(9)]
    worker.finish()
    for i in (8, 0, 4, 3, 1, 2, 5, 7, 6):
        assert handles[i].result() == verified_bitcode(big if i % 3 == 0 else module(i), f"m{i}")


def test_a_child_that_dies_owes_its_answers_as_llvms_message():
    worker = BitcodeWorker(fork_after=0)
    first = worker.submit(module(0), "m0")
    assert first.result()[1] is None                # the child is up and answering
    pid = worker._run.pid
    os.kill(pid, signal.SIGKILL)
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)   # dead (not reaped: the worker does that)
    later = [worker.submit(module(i), f"m{i}") for i in range(1, 40)]
    worker.finish()
    for h in later:
        data, problem = h.result()
        assert data is None and "LLVM stopped (killed by SIGKILL" in problem
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)                 # reaped


@pytest.mark.parametrize("finished", [False, True])
def test_a_worker_that_goes_away_leaves_no_child(finished):
    worker = BitcodeWorker(fork_after=0)
    handles = [worker.submit(module(i), f"m{i}") for i in range(30)]
    if finished:
        worker.finish()
    pid = worker._run.pid
    del worker, handles                             # no answer ever taken
    gc.collect()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def test_two_workers_at_once_each_end():
    a, b = BitcodeWorker(fork_after=0), BitcodeWorker(fork_after=0)
    ha = [a.submit(module(i), "a") for i in range(5)]
    hb = [b.submit(module(i), "b") for i in range(5)]
    b.finish()                      # b's child holds none of a's pipes: a's child still ends on its own
    a.finish()
    assert [h.result() for h in ha] == [verified_bitcode(module(i), "a") for i in range(5)]
    assert [h.result() for h in hb] == [verified_bitcode(module(i), "b") for i in range(5)]
    for w in (a, b):
        with pytest.raises(ChildProcessError):
            os.waitpid(w._run.pid, os.WNOHANG)


def test_one_thread_setting_forks_nothing(monkeypatch):
    monkeypatch.setenv("MINISYCL_VERIFY_THREADS", "1")
    worker = BitcodeWorker(fork_after=0)
    handles = [worker.submit(module(i), "m") for i in range(3)]
    worker.finish()
    assert worker._run is None
    assert [h.result() for h in handles] == [verified_bitcode(module(i), "m") for i in range(3)]


@pytest.mark.parametrize("load, forks", [(64.0, False), (0.0, True)])
def test_the_child_only_where_a_core_is_free(monkeypatch, load, forks):
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    worker = BitcodeWorker()
    handles = [worker.submit(module(i), "m") for i in range(FORK_AFTER + 5)]
    worker.finish()
    assert (worker._run is not None) == forks
    assert [h.result() for h in handles] == [verified_bitcode(module(i), "m") for i in range(FORK_AFTER + 5)]
