"""The kernel language's work-group features end to end (issue 19 points 1, 4, 6):
kernels of tests/runtime/data/groups_language.ksl built by the front end,
lowered and launched by the runtime, against NumPy."""
import pathlib

import numpy as np
import pytest

from minisycl import runtime as sycl

SOURCE = pathlib.Path(__file__).parent / "data" / "groups_language.ksl"


@pytest.fixture(scope="module")
def prog():
    return sycl.build_program([str(SOURCE)])


@pytest.fixture
def q():
    return sycl.queue()


def shared(q, values, dtype):
    a = sycl.malloc_shared(len(values), dtype, q)
    np.asarray(a)[:] = values
    return a


@pytest.mark.parametrize("n", [16, 128])
def test_tiled_matmul(prog, q, n):
    rng = np.random.default_rng(n)
    ha, hb = rng.integers(0, 5, (n, n)).astype(np.float32), rng.integers(0, 5, (n, n)).astype(np.float32)
    a, b = shared(q, ha.ravel(), np.float32), shared(q, hb.ravel(), np.float32)
    c = sycl.malloc_shared(n * n, np.float32, q)
    q.parallel_for(prog.kernel("tiled_matmul"), sycl.nd_range((n, n), (16, 16)), a, b, c, n).wait()
    np.testing.assert_array_equal(np.asarray(c).reshape(n, n), ha @ hb)
    with pytest.raises(sycl.exception) as e:         # reqd_work_group_size
        q.parallel_for(prog.kernel("tiled_matmul"), sycl.nd_range((n, n), (8, 8)), a, b, c, n)
    assert e.value.code() == sycl.errc.nd_range


@pytest.mark.parametrize("local", [1, 7, 64, 256])
def test_row_sums(prog, q, local):
    rng = np.random.default_rng(local)
    x = shared(q, rng.random(local * 9, dtype=np.float32), np.float32)
    out = sycl.malloc_shared(9, np.float32, q)
    q.parallel_for(prog.kernel("row_sums"), sycl.nd_range((local * 9,), (local,)), x, out).wait()
    assert np.allclose(np.asarray(out), np.asarray(x).reshape(9, local).sum(axis=1), rtol=1e-5)


@pytest.mark.parametrize("local", [3, 32, 100])
def test_box_with_local_memory_argument(prog, q, local):
    x = shared(q, np.arange(local * 5, dtype=np.float32) ** 2, np.float32)
    y = sycl.malloc_shared(local * 5, np.float32, q)
    q.parallel_for(prog.kernel("box"), sycl.nd_range((local * 5,), (local,)), x, y,
                   sycl.local_memory(local, np.float32)).wait()
    t = np.asarray(x).reshape(5, local)
    np.testing.assert_allclose(np.asarray(y), ((np.roll(t, 1, 1) + t + np.roll(t, -1, 1)) / 3).ravel(), rtol=1e-6)
    with pytest.raises(sycl.exception) as e:
        q.parallel_for(prog.kernel("box"), sycl.nd_range((local,), (local,)), x, y, sycl.local_memory(local, np.int32))
    assert e.value.code() == sycl.errc.invalid


def test_group_and_sub_group_algorithms_2d(prog, q):
    glob, local = (8, 12), (4, 6)             # work-groups of 24: sub-groups of the device's first size
    n = glob[0] * glob[1]
    xs = np.random.default_rng(5).integers(0, 50, n).astype(np.int32)
    x, out = shared(q, xs, np.int32), sycl.malloc_shared(7 * n, np.int32, q)
    q.parallel_for(prog.kernel("algorithms"), sycl.nd_range(glob, local), x, out).wait()
    got = np.asarray(out).reshape(7, n)
    S = q.device.sub_group_sizes[0]
    for gi in range(glob[0] // local[0]):
        for gj in range(glob[1] // local[1]):
            rows = [(gi * local[0] + r) * glob[1] + gj * local[1] + np.arange(local[1]) for r in range(local[0])]
            ids = np.concatenate(rows)                  # the group's work-items in linear order
            v = xs[ids]
            assert (got[0][ids] == v.max()).all()
            assert (got[1][ids] == np.cumsum(v)).all()
            assert (got[3][ids] == v[1]).all()
            assert (got[5][ids] == int((v > 40).any()) + 2 + 4).all()
            for s in range(0, len(ids), S):
                seg = v[s:s + S]
                excl = np.concatenate([[0], np.bitwise_xor.accumulate(seg)[:-1]])
                assert (got[2][ids[s:s + S]] == excl).all()
                assert (got[4][ids[s:s + S]] == seg[0]).all()
                assert (got[6][ids[s:s + S]] == np.arange(len(seg)) + 100 * (s // S)).all()


def test_float_and_half_algorithms_with_reqd_sub_group_size(prog, q):
    if 4 not in q.device.sub_group_sizes:
        pytest.skip(f"{q.device.name}'s sub-group sizes are {q.device.sub_group_sizes}: a kernel requiring 4 is "
                    f"refused there (test_unlisted_required_sub_group_size_is_refused)")
    xs = np.random.default_rng(6).uniform(0.5, 1.5, 64).astype(np.float32)
    hs = np.random.default_rng(7).uniform(-4, 4, 64).astype(np.float16)
    x, out = shared(q, xs, np.float32), sycl.malloc_shared(64, np.float32, q)
    h, hout = shared(q, hs, np.float16), sycl.malloc_shared(64, np.float16, q)
    q.parallel_for(prog.kernel("float_scan"), sycl.nd_range((64,), (16,)), x, out, h, hout).wait()
    assert np.allclose(np.asarray(out), np.cumprod(xs.reshape(-1, 4), axis=1).ravel(), rtol=1e-5)
    assert (np.asarray(hout) == np.repeat(hs.reshape(-1, 16).min(axis=1), 16)).all()


def test_reduction_over_a_range(prog, q):
    xs = np.random.default_rng(8).integers(0, 10, 100_000).astype(np.float32)
    x, r = shared(q, xs, np.float32), shared(q, [2.0], np.float32)
    q.parallel_for(prog.kernel("total"), sycl.range(100_000), x, sycl.reduction(r, sycl.plus)).wait()
    assert np.asarray(r)[0] == xs.sum(dtype=np.float64) + 2.0
    q.parallel_for(prog.kernel("total"), sycl.range(100_000), x,
                   sycl.reduction(r, sycl.plus, initialize_to_identity=True)).wait()
    assert np.asarray(r)[0] == xs.sum(dtype=np.float64)
    q.parallel_for(prog.kernel("total"), sycl.range(1), x, sycl.reduction(r, sycl.plus)).wait()
    assert np.asarray(r)[0] == xs.sum(dtype=np.float64) + xs[0]


def test_several_reducers_over_an_nd_range(prog, q):
    xs = np.random.default_rng(9).integers(0, 1000, 4096).astype(np.int32)
    x = shared(q, xs, np.int32)
    s, mx, bits, alls = shared(q, [5], np.int32), shared(q, [0], np.int32), shared(q, [0], np.uint32), \
        shared(q, [True], np.bool_)
    q.parallel_for(prog.kernel("several"), sycl.nd_range((4096,), (128,)),
                   x, sycl.reduction(s, sycl.plus), sycl.reduction(mx, sycl.maximum, initialize_to_identity=True),
                   sycl.reduction(bits, sycl.bit_or), sycl.reduction(alls, sycl.logical_and)).wait()
    assert np.asarray(s)[0] == 5 + xs.sum()
    assert np.asarray(mx)[0] == xs.max()
    assert np.asarray(bits)[0] == np.bitwise_or.reduce(xs.astype(np.uint32))
    assert bool(np.asarray(alls)[0]) is True


def test_reducer_increment_over_3d_range(prog, q):
    n = shared(q, [0], np.int64)
    q.parallel_for(prog.kernel("count"), sycl.range(5, 6, 7), sycl.reduction(n, sycl.plus)).wait()
    assert np.asarray(n)[0] == 210


def test_reductions_in_a_graph(prog, q):
    xs = np.arange(1000, dtype=np.float32)
    x, r = shared(q, xs, np.float32), shared(q, [0.0], np.float32)
    g = sycl.command_graph(q)
    g.add(lambda h: h.parallel_for(prog.kernel("total"), sycl.range(1000), x,
                                   sycl.reduction(r, sycl.plus, initialize_to_identity=True)))
    exe = g.finalize()
    for _ in range(3):                      # each execution starts from the identity
        q.ext_oneapi_graph(exe).wait()
        assert np.asarray(r)[0] == xs.sum()
    acc = shared(q, [1.0], np.float32)
    g2 = sycl.command_graph(q)
    g2.add(lambda h: h.parallel_for(prog.kernel("total"), sycl.range(1000), x, sycl.reduction(acc, sycl.plus)))
    exe2 = g2.finalize()
    q.ext_oneapi_graph(exe2).wait()
    q.ext_oneapi_graph(exe2).wait()
    assert np.asarray(acc)[0] == 1.0 + 2 * xs.sum()
    sycl.free(acc, q)                       # the result's memory is gone: the replay is refused, not run
    with pytest.raises(sycl.exception) as e:
        q.ext_oneapi_graph(exe2).wait()
    assert e.value.code() == sycl.errc.invalid and "freed" in str(e.value)


def test_reduction_misuse_is_errc_invalid(prog, q):
    x = shared(q, [1.0], np.float32)
    wrong_type = sycl.malloc_shared(1, np.float64, q)
    empty = sycl.malloc_shared(0, np.float32, q)         # no element to hold the result
    for bad in (sycl.reduction(wrong_type, sycl.plus), sycl.reduction(x, sycl.maximum), x,
                sycl.reduction(empty, sycl.plus, initialize_to_identity=True)):
        with pytest.raises(sycl.exception) as e:
            q.parallel_for(prog.kernel("total"), sycl.range(1), x, bad).wait()
        assert e.value.code() == sycl.errc.invalid
    with pytest.raises(sycl.exception) as e:
        sycl.reduction(np.zeros(1), sycl.plus)
    assert e.value.code() == sycl.errc.invalid


def test_failed_assert_raises_with_dpcpp_message(prog, q):
    x = shared(q, list(range(8)), np.int32)
    with pytest.raises(sycl.exception) as e:
        q.parallel_for(prog.kernel("checked"), sycl.range(8), x).wait()
    assert e.value.code() == sycl.errc.runtime
    line = SOURCE.read_text().split("\n").index("kernel checked(id<1> i, int* x) { assert(x[i] < 5); x[i] = -1; }") + 1
    assert str(e.value) == f"{SOURCE}:{line}: checked: Assertion `x[i] < 5` failed."
    assert list(np.asarray(x)) == [-1] * 5 + [5, 6, 7]        # the failing work-items stopped
    q.parallel_for(prog.kernel("checked"), sycl.range(5), x).wait()      # the next launch is clean


def test_math_builtins(prog, q):
    xs = np.array([0.1, 0.5, 0.9], np.float32)
    x, out = shared(q, xs, np.float32), sycl.malloc_shared(24, np.float32, q)
    q.parallel_for(prog.kernel("maths"), sycl.range(3), x, out).wait()
    got = np.asarray(out).reshape(3, 8).astype(np.float64)
    v = xs.astype(np.float64)
    want = np.stack([v * 2 + 1, np.tanh(v) + 1 / np.sqrt(v + 1), np.minimum(v, .5) + np.maximum(v, .5) + np.clip(v, .25, .75),
                     np.arctan2(v, 2) + np.arcsin(v) + np.arccos(v) + np.arctan(v),
                     np.sinh(v) + np.cosh(v) + np.cbrt(v) + np.hypot(v, 3), -v + v * v + v,
                     np.sign(v * 4 - .5) * np.floor(np.abs(v * 4 - .5) + .5), np.full(3, 3.0)], axis=1)
    assert np.allclose(got, want, rtol=1e-5)
