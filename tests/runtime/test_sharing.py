"""How a launch is shared among the worker threads and the caller
(``runtime/native.ll``: shares cut into blocks, claimed by whoever comes; a
worker that has not come when every block is done is not waited for): every
work-item and every work-group runs exactly once, whatever the timing."""
import time

import numpy as np
import pytest

from minisycl import runtime as sycl
from minisycl.runtime import native

KSL = """
kernel bump(id<1> i, int* x) { x[i] = x[i] + 1; }
kernel bump_groups(nd_item<1> it, int* x, int* g) {
  x[it.get_global_id(0)] = x[it.get_global_id(0)] + 1;
  if (it.get_local_id(0) == 0) { g[it.get_group(0)] = g[it.get_group(0)] + 1; }
  group_barrier(it);
}
"""


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("s")
    (d / "s.ksl").write_text(KSL)
    return sycl.build_program([str(d / "s.ksl")])


SIZES = [1, 2, 3, 16383, 16384, 2 * 16384 + 1, 5 * 16384 - 3, (1 << 20) + 7]


@pytest.mark.parametrize("n", SIZES)
def test_every_work_item_runs_once(prog, n):
    q = sycl.queue()
    x = sycl.malloc_shared(n, np.int32, q)
    np.asarray(x)[:] = 0                    # (a GPU's fresh memory is not zero)
    for _ in range(3):
        q.parallel_for(prog.kernel("bump"), n, x).wait()
    assert np.bincount(np.asarray(x), minlength=4)[3] == n


def test_every_work_group_runs_once_with_idle_and_busy_workers(prog):
    """Launches right after the workers went to sleep (the caller may finish
    before they wake: their part is then not waited for) and back to back
    (they are spinning), with any number of groups."""
    q = sycl.queue()
    rng = np.random.default_rng(0)
    for i in range(60):
        groups = int(rng.integers(1, 300))
        L = int(rng.choice([1, 4, 64]))
        x = sycl.malloc_shared(groups * L, np.int32, q)
        g = sycl.malloc_shared(groups, np.int32, q)
        np.asarray(x)[:] = 0
        np.asarray(g)[:] = 0
        if i % 3 == 0:
            time.sleep(native._SPIN * 1e-7 + 0.01)      # longer than the workers spin
        q.parallel_for(prog.kernel("bump_groups"), sycl.nd_range(groups * L, L), x, g).wait()
        assert (np.asarray(x) == 1).all() and (np.asarray(g) == 1).all(), (groups, L)

