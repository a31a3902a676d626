"""How a GPU wait polls (``cuda/queue.py`` ``_await``): back to back at first, as
CUDA's own synchronize spins, then with sleeps that are a small share of the time
waited so far, so a wait ends at most that share late.  Sleeps that doubled up to
a millisecond ended a 2.4 ms wait up to a millisecond late, which made batches of
memory-bound kernels measure 20% slower than CUDA's on an H200.  The driver
query is a stand-in that turns ready at a chosen time; the sleeps are recorded."""
import time

import pytest

from minisycl.runtime.cuda import queue as cuda_queue_module

NOT_READY = 600


class _Stream:
    """``cuStreamQuery`` of a stream whose work ends ``seconds`` after it is made."""

    def __init__(self, seconds: float):
        self.ready_at = time.perf_counter() + seconds
        self.polls = 0

    def __call__(self, handle) -> int:
        self.polls += 1
        return 0 if time.perf_counter() >= self.ready_at else NOT_READY


@pytest.mark.parametrize("seconds", [0.0, 0.0005, 0.003, 0.02, 0.08])
def test_a_wait_sleeps_only_a_small_share_of_what_it_waited(monkeypatch, seconds):
    naps = []
    real_sleep = time.sleep

    def sleep(s):
        naps.append((time.perf_counter(), s))
        real_sleep(s)

    monkeypatch.setattr(cuda_queue_module.time, "sleep", sleep)
    start = time.perf_counter()
    stream = _Stream(seconds)
    cuda_queue_module._await(stream, 1, "cuStreamSynchronize", 1)
    assert time.perf_counter() >= stream.ready_at            # it waited for the work
    for when, nap in naps:
        waited = when - start
        assert waited >= cuda_queue_module._SPIN_S            # no sleep while it spins
        assert nap <= max(waited * cuda_queue_module._NAP_SHARE, 0) + 1e-9
        assert nap <= cuda_queue_module._NAP_MAX


def test_a_failed_query_stops_the_wait_with_the_drivers_error(monkeypatch):
    raised = []

    def synchronize(name, handle):
        raised.append(name)
        raise RuntimeError("the failure")

    monkeypatch.setattr(cuda_queue_module.driver, "call", synchronize)
    answers = iter([NOT_READY, NOT_READY, 700])
    with pytest.raises(RuntimeError):
        cuda_queue_module._await(lambda h: next(answers), 1, "cuStreamSynchronize", 1)
    assert raised == ["cuStreamSynchronize"]
