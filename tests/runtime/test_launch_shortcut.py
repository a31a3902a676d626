"""The queue shortcut ``q.parallel_for(k, r, *args)`` launches directly, without a
handler or a ``KernelCommand`` (``queue._launch_now``), and its common cases
(an int range, a 1-D ``nd_range``, a reduction of the right type) skip the
general checks.  Here every refusal and every result must be the one a
command group (``q.submit``) gives for the same launch."""
import numpy as np
import pytest

from minisycl import runtime as sycl

SOURCE = """
kernel total(id<1> i, float* x, reducer<float, plus> sum) { sum += x[i]; }
kernel group_total(nd_item<1> it, float* x, reducer<float, plus> sum) {
  float s = reduce_over_group(it, x[it.get_global_id(0)], plus);
  if (it.get_local_id(0) == 0) sum += s;
}
kernel tile(nd_item<2> it, int* out) { out[it.get_global_id(0) * 8 + it.get_global_id(1)] = it.get_local_linear_id(); }
kernel largest(id<1> i, int* x, reducer<int, maximum> m) { m.combine(x[i]); }
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    path = tmp_path_factory.mktemp("shortcut") / "s.ksl"
    path.write_text(SOURCE)
    prog = sycl.build_program([str(path)])
    q = sycl.queue()
    x = sycl.malloc_shared(1024, np.float32, q)
    np.asarray(x)[:] = np.arange(1024, dtype=np.float32) % 7
    ints = sycl.malloc_shared(1024, np.int32, q)
    np.asarray(ints)[:] = (np.arange(1024, dtype=np.int32) * 37) % 1001
    return prog, q, x, ints


def both(q, k, r, *args):
    """The outcome of the shortcut and of a command group: (errc, message) or None."""
    out = []
    for launch in (lambda: q.parallel_for(k, r, *args).wait(),
                   lambda: q.submit(lambda h: h.parallel_for(k, r, *args)).wait()):
        try:
            launch()
            out.append(None)
        except sycl.exception as e:
            out.append((e.code(), str(e)))
    return out


def test_refusals_are_the_command_groups(env):
    prog, q, x, ints = env
    total, group, tile = prog.kernel("total"), prog.kernel("group_total"), prog.kernel("tile")
    out = sycl.malloc_shared(1, np.float32, q)
    empty = sycl.malloc_shared(0, np.float32, q)
    freed = sycl.malloc_shared(1, np.float32, q)
    red_freed = sycl.reduction(freed, sycl.plus)
    sycl.free(freed, q)
    cases = [
        (group, 256, x, sycl.reduction(out, sycl.plus)),                     # a range for an nd_item kernel
        (total, sycl.nd_range(256, 64), x, sycl.reduction(out, sycl.plus)),  # an nd_range for an id kernel
        (tile, sycl.nd_range(64, 8), ints),                                  # 1-D nd_range, 2-D kernel
        (group, sycl.nd_range((16, 16), (4, 4)), x, sycl.reduction(out, sycl.plus)),
        (total, 256, x, sycl.reduction(ints, sycl.plus)),                    # int memory, float reducer
        (total, 256, x, sycl.reduction(out, sycl.maximum)),                  # wrong operator
        (total, 256, x, sycl.reduction(empty, sycl.plus)),                   # no element for the result
        (total, 256, x, red_freed),                                          # freed memory
        (total, 256, x, out),                                                # not a reduction
        (total, 256, x),                                                     # an argument missing
        (total, -1, x, sycl.reduction(out, sycl.plus)),                      # a negative range
        ("total", 256, x, sycl.reduction(out, sycl.plus)),                   # not a kernel
    ]
    for k, r, *args in cases:
        shortcut, command_group = both(q, k, r, *args)
        assert shortcut is not None, (k, r, args)
        assert shortcut == command_group, (k, r, args)
        assert shortcut[0] in (sycl.errc.invalid, sycl.errc.nd_range)


def test_results_are_the_command_groups(env):
    prog, q, x, ints = env
    out = sycl.malloc_shared(1, np.float32, q)
    best = sycl.malloc_shared(1, np.int32, q)
    tiles = sycl.malloc_shared(64, np.int32, q)
    want = float(np.asarray(x).sum())
    for launch in (lambda k, r, *a: q.parallel_for(k, r, *a),
                   lambda k, r, *a: q.submit(lambda h: h.parallel_for(k, r, *a))):
        np.asarray(out)[0] = 100.0
        launch(prog.kernel("total"), 1024, x, sycl.reduction(out, sycl.plus, initialize_to_identity=True)).wait()
        assert np.asarray(out)[0] == want
        launch(prog.kernel("group_total"), sycl.nd_range(1024, 128), x, sycl.reduction(out, sycl.plus)).wait()
        assert np.asarray(out)[0] == 2 * want                    # combined with the value already there
        np.asarray(best)[0] = 5000
        launch(prog.kernel("largest"), 1024, ints, sycl.reduction(best, sycl.maximum, initialize_to_identity=True)).wait()
        assert np.asarray(best)[0] == np.asarray(ints).max()
        np.asarray(tiles)[:] = -1
        launch(prog.kernel("tile"), sycl.nd_range((8, 8), (2, 4)), tiles).wait()
        assert np.asarray(tiles).reshape(8, 8).tolist() == [[(r % 2) * 4 + c % 4 for c in range(8)] for r in range(8)]
