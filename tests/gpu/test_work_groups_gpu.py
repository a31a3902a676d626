"""Work-groups on the NVIDIA GPU (issue 20 point 7): the programs of the CPU's
work-group tests (``tests/runtime/test_groups_language.py``) on the host CPU and
the GPU, each against a NumPy model of SYCL's results for the device's sub-group
size (the CPU's first size, 8; the GPU's warps, 32): shuffles (lanes outside the
sub-group included, as both devices define them), votes, sub-group and
work-group reduce/scan/broadcast over int, float, double and half, 1-, 2- and
3-D work-groups up to 1024 work-items (partial last sub-groups too), dynamic
local memory (above CUDA's default 48 KiB too) and reductions (of every
reducer type, into device memory).  The tiled matrix product, local-memory
arguments and the other reductions are ``tests/runtime/test_groups_language.py``'s,
which runs on every device present (``tests/runtime/conftest.py``).

Data are integer-valued so every sum is exact in every order: results are
compared exactly."""

import numpy as np
import pytest

from minisycl import runtime as sycl

TYPES = {"int": np.int32, "uint": np.uint32, "long": np.int64, "char": np.int8, "float": np.float32,
         "double": np.float64, "half": np.float16}
INTS = ("int", "uint", "long", "char")


def _alg_kernel(t: str) -> str:
    bits = ("\n  out[10 * n + g] = reduce_over_group(it, v, bit_xor);"
            "\n  out[11 * n + g] = exclusive_scan_over_sub_group(it, v, bit_or);"
            "\n  out[12 * n + g] = inclusive_scan_over_group(it, v, bit_and);") if t in INTS else ""
    return f"""
kernel alg_{t}(nd_item<1> it, {t}* x, {t}* y, {t}* out, uint bid) {{
  long g = it.get_global_id(0);
  long n = it.get_global_range(0);
  {t} v = x[g];
  out[g] = reduce_over_group(it, v, plus);
  out[n + g] = inclusive_scan_over_group(it, v, plus);
  out[2 * n + g] = exclusive_scan_over_group(it, v, maximum);
  out[3 * n + g] = reduce_over_sub_group(it, v, minimum);
  out[4 * n + g] = inclusive_scan_over_sub_group(it, v, plus);
  out[5 * n + g] = exclusive_scan_over_sub_group(it, v, plus);
  out[6 * n + g] = group_broadcast(it, v, bid);
  out[7 * n + g] = sub_group_broadcast(it, v, bid);
  out[8 * n + g] = reduce_over_group(it, y[g], multiplies);
  out[9 * n + g] = inclusive_scan_over_group(it, v, minimum);{bits}
}}
kernel shuf_{t}(nd_item<1> it, {t}* x, uint* d, {t}* out) {{
  long g = it.get_global_id(0);
  long n = it.get_global_range(0);
  {t} v = x[g];
  out[g] = select_from_sub_group(it, v, d[g]);
  out[n + g] = permute_sub_group_by_xor(it, v, d[g] % 32u);
  out[2 * n + g] = shift_sub_group_left(it, v, d[g]);
  out[3 * n + g] = shift_sub_group_right(it, v, d[g]);
}}
"""


KSL = "".join(_alg_kernel(t) for t in TYPES) + """
kernel votes(nd_item<1> it, int* x, int* out) {
  long g = it.get_global_id(0);
  long n = it.get_global_range(0);
  bool b = x[g] > 0;
  out[g] = (int)any_of_group(it, b) + 2 * (int)all_of_group(it, b) + 4 * (int)none_of_group(it, b);
  out[n + g] = (int)any_of_sub_group(it, b) + 2 * (int)all_of_sub_group(it, b) + 4 * (int)none_of_sub_group(it, b);
  out[2 * n + g] = (int)reduce_over_group(it, b, logical_and) + 2 * (int)reduce_over_sub_group(it, b, logical_or);
  out[3 * n + g] = (int)inclusive_scan_over_sub_group(it, b, logical_or) + 2 * (int)exclusive_scan_over_group(it, b, logical_and);
  out[4 * n + g] = (int)it.get_sub_group_id() + 100 * (int)it.get_sub_group_local_id()
                 + 10000 * (int)it.get_sub_group_size() + 1000000 * (int)it.get_max_sub_group_size();
  out[5 * n + g] = (int)it.get_sub_group_range();
  sub_group_barrier(it);
}

kernel alg2(nd_item<2> it, int* x, int* out) {
  long g = it.get_global_linear_id();
  long n = it.get_global_range(0) * it.get_global_range(1);
  out[g] = inclusive_scan_over_group(it, x[g], plus);
  out[n + g] = reduce_over_sub_group(it, x[g], plus);
  out[2 * n + g] = (int)it.get_local_linear_id();
}

kernel alg3(nd_item<3> it, int* x, int* out) {
  long g = it.get_global_linear_id();
  long n = it.get_global_range(0) * it.get_global_range(1) * it.get_global_range(2);
  out[g] = exclusive_scan_over_group(it, x[g], plus);
  out[n + g] = inclusive_scan_over_sub_group(it, x[g], plus);
  out[2 * n + g] = reduce_over_group(it, x[g], maximum);
}

kernel box(nd_item<1> it, float* x, float* y, local float* tile) {
  long l = it.get_local_id(0);
  tile[l] = x[it.get_global_id(0)];
  group_barrier(it);
  long n = it.get_local_range(0);
  y[it.get_global_id(0)] = (tile[(l + n - 1) % n] + tile[l] + tile[(l + 1) % n]) / 3.0f;
}

kernel two_tiles(nd_item<1> it, int* x, int* y, local int* a, local double* b, int m) {
  local int fixed[8];
  long l = it.get_local_id(0);
  long n = it.get_local_range(0);
  for (long k = l; k < m; k += n) { a[k] = x[it.get_group(0) * m + k]; b[k] = 0.5; }
  if (l < 8) fixed[l] = (int)l;
  group_barrier(it);
  int s = 0;
  for (long k = 0; k < m; k++) s += a[k];
  y[it.get_global_id(0)] = s + (int)(b[m - 1] * 2.0) + fixed[l % 8];
}

kernel total(id<1> i, float* x, reducer<float, plus> sum) { sum += x[i]; }

kernel typed(id<1> i, double* d, long* l, half* h, int* x, reducer<double, minimum> dmin,
             reducer<long, multiplies> lmul, reducer<half, plus> hsum, reducer<ulong, maximum> umax,
             reducer<int, bit_xor> bx, reducer<bool, logical_or> any, reducer<float, multiplies> fmul) {
  dmin.combine(d[i]);
  lmul *= l[i];
  hsum += h[i];
  umax.combine((ulong)l[i] * 3ul);
  bx ^= x[i];
  any.combine(x[i] == 77);
  fmul *= (float)l[i];
}
"""


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("wg")
    (d / "wg.ksl").write_text(KSL)
    return sycl.build_program([str(d / "wg.ksl")])


def shared(q, values, dtype):
    a = sycl.malloc_shared(len(values), dtype, q)
    np.asarray(a)[:] = values
    return a


def S(dev) -> int:
    return dev.sub_group_sizes[0]


# -- the NumPy model of SYCL's results (work-items of a group in linear order) -----------------

_UFUNC = {"plus": np.add, "multiplies": np.multiply, "minimum": np.minimum, "maximum": np.maximum,
          "bit_xor": np.bitwise_xor, "bit_or": np.bitwise_or, "bit_and": np.bitwise_and,
          "logical_and": np.logical_and, "logical_or": np.logical_or}


def identity(op, dtype):
    return getattr(sycl, op).identity(dtype)


def segments(n: int, size: int):
    return [(s, min(s + size, n)) for s in range(0, n, size)]


def model(kind: str, op: str, v: np.ndarray, seg: int) -> np.ndarray:
    """reduce / inclusive / exclusive of ``op`` over consecutive runs of ``seg`` of ``v``."""
    out = np.empty_like(v)
    f = _UFUNC[op]
    for s, e in segments(len(v), seg):
        part = v[s:e]
        if kind == "reduce":          # in the element type: integers wrap as on the devices
            out[s:e] = f.reduce(part, dtype=v.dtype)
        else:
            inc = f.accumulate(part, dtype=v.dtype)
            out[s:e] = inc if kind == "inclusive" else np.concatenate([[identity(op, v.dtype)], inc[:-1]]).astype(v.dtype)
    return out


def shuffle_model(kind: str, v: np.ndarray, d: np.ndarray, size: int) -> np.ndarray:
    """The shuffles as both devices define them (a lane outside the sub-group: the caller's
    own value; shifts past the sub-group of the maximum size ``size`` wrap into it)."""
    out = v.copy()
    for s, e in segments(len(v), size):
        n = e - s
        for lane in range(n):
            dd = int(d[s + lane])
            src = {"select": dd, "xor": lane ^ (dd % 32), "left": lane + dd, "right": lane - dd}[kind]
            if 0 <= src < n:
                out[s + lane] = v[s + src]
            elif kind in ("left", "right"):
                o = src - size if kind == "left" else src + size
                if 0 <= o < n:
                    out[s + lane] = v[s + o]
    return out


def groups_of(values: np.ndarray, local: int):
    return values.reshape(-1, local)


# -- sub-groups and work-group algorithms -------------------------------------------------------

@pytest.mark.parametrize("t", list(TYPES))
@pytest.mark.parametrize("local", [20, 32, 48, 96, 1024])
def test_group_and_sub_group_algorithms(prog, dev, t, local):
    q = sycl.queue(dev)
    dt = np.dtype(TYPES[t])
    groups = 3
    n = local * groups
    rng = np.random.default_rng(local)
    hi = 2 if dt == np.float16 else (4 if dt == np.int8 else 8)      # exact sums in every order
    xs = rng.integers(0, hi, n).astype(dt)
    ys = (rng.integers(0, 2, n) * 2 - 1).astype(dt) if dt.kind != "u" else rng.integers(1, 2, n).astype(dt)
    bid = 5
    x, y = shared(q, xs, dt), shared(q, ys, dt)
    rows = 13 if t in INTS else 10
    out = sycl.malloc_shared(rows * n, dt, q)
    q.parallel_for(prog.kernel(f"alg_{t}"), sycl.nd_range((n,), (local,)), x, y, out, bid).wait()
    got = np.asarray(out).reshape(rows, n)
    s = S(dev)
    want = [model("reduce", "plus", xs, local), model("inclusive", "plus", xs, local),
            model("exclusive", "maximum", xs, local), model("reduce", "minimum", xs, s),
            model("inclusive", "plus", xs, s), model("exclusive", "plus", xs, s)]
    bc = np.concatenate([np.full(local, g[bid if bid < local else 0]) for g in groups_of(xs, local)])
    sbc = np.concatenate([np.concatenate([np.full(e - b, g[b + (bid if bid < e - b else 0)])
                                          for b, e in segments(local, s)]) for g in groups_of(xs, local)])
    want += [bc.astype(dt), sbc.astype(dt), model("reduce", "multiplies", ys, local), model("inclusive", "minimum", xs, local)]
    if t in INTS:
        want += [model("reduce", "bit_xor", xs, local), model("exclusive", "bit_or", xs, s),
                 model("inclusive", "bit_and", xs, local)]
    # sub-group models run per work-group: recompute them group by group
    for k, (kind, op) in {3: ("reduce", "minimum"), 4: ("inclusive", "plus"), 5: ("exclusive", "plus"),
                          11: ("exclusive", "bit_or")}.items():
        if k < rows:
            want[k] = np.concatenate([model(kind, op, g, s) for g in groups_of(xs, local)])
    for k in range(rows):
        np.testing.assert_array_equal(got[k], want[k], err_msg=f"{t} local={local} row {k} on {dev.name}")


@pytest.mark.parametrize("t", ["int", "float", "double", "half", "char", "long"])
@pytest.mark.parametrize("local", [20, 32, 64, 40])
def test_shuffles(prog, dev, t, local):
    q = sycl.queue(dev)
    dt = np.dtype(TYPES[t])
    n = local * 2
    rng = np.random.default_rng(local + 1)
    xs = rng.integers(-60, 60, n).astype(dt)
    ds = rng.integers(0, 40, n).astype(np.uint32)
    x, d, out = shared(q, xs, dt), shared(q, ds, np.uint32), sycl.malloc_shared(4 * n, dt, q)
    q.parallel_for(prog.kernel(f"shuf_{t}"), sycl.nd_range((n,), (local,)), x, d, out).wait()
    got = np.asarray(out).reshape(4, n)
    s = S(dev)
    for k, kind in enumerate(("select", "xor", "left", "right")):
        want = np.concatenate([shuffle_model(kind, g, dg, s) for g, dg in zip(groups_of(xs, local), groups_of(ds, local))])
        np.testing.assert_array_equal(got[k], want, err_msg=f"{kind} {t} local={local} on {dev.name}")


@pytest.mark.parametrize("local", [7, 32, 50, 256])
def test_votes_and_queries(prog, dev, local):
    q = sycl.queue(dev)
    n = local * 4
    rng = np.random.default_rng(local + 2)
    xs = (rng.random(n) < 0.9).astype(np.int32)
    xs[:local] = 1                      # group 0: all true
    xs[local:2 * local] = 0             # group 1: none
    x, out = shared(q, xs, np.int32), sycl.malloc_shared(6 * n, np.int32, q)
    q.parallel_for(prog.kernel("votes"), sycl.nd_range((n,), (local,)), x, out).wait()
    got = np.asarray(out).reshape(6, n)
    s = S(dev)
    b = xs > 0
    anyg, allg = model("reduce", "logical_or", b, local), model("reduce", "logical_and", b, local)
    grp = lambda kind, op, seg: np.concatenate([model(kind, op, g, seg) for g in groups_of(b, local)])  # noqa: E731
    anys, alls = grp("reduce", "logical_or", s), grp("reduce", "logical_and", s)
    np.testing.assert_array_equal(got[0], anyg + 2 * allg + 4 * ~anyg)
    np.testing.assert_array_equal(got[1], anys + 2 * alls + 4 * ~anys)
    np.testing.assert_array_equal(got[2], allg + 2 * anys)
    np.testing.assert_array_equal(got[3], grp("inclusive", "logical_or", s) + 2 * grp("exclusive", "logical_and", local))
    lid = np.tile(np.arange(local), 4)
    size = np.minimum(s, local - lid // s * s)
    np.testing.assert_array_equal(got[4], lid // s + 100 * (lid % s) + 10000 * size + 1000000 * s)
    np.testing.assert_array_equal(got[5], -(-local // s))


@pytest.mark.parametrize("glob,local", [((8, 24), (4, 12)), ((4, 64), (2, 64)), ((32, 32), (32, 32))])
def test_two_dimensional_groups_in_linear_order(prog, dev, glob, local):
    q = sycl.queue(dev)
    n = glob[0] * glob[1]
    xs = np.random.default_rng(3).integers(0, 9, n).astype(np.int32)
    x, out = shared(q, xs, np.int32), sycl.malloc_shared(3 * n, np.int32, q)
    q.parallel_for(prog.kernel("alg2"), sycl.nd_range(glob, local), x, out).wait()
    got = np.asarray(out).reshape(3, n)
    grid = xs.reshape(glob)
    for gi in range(glob[0] // local[0]):
        for gj in range(glob[1] // local[1]):
            ids = np.array([(gi * local[0] + r) * glob[1] + gj * local[1] + c
                            for r in range(local[0]) for c in range(local[1])])
            v = xs[ids]
            np.testing.assert_array_equal(got[0][ids], np.cumsum(v))
            np.testing.assert_array_equal(got[1][ids], model("reduce", "plus", v, S(dev)))
            np.testing.assert_array_equal(got[2][ids], np.arange(len(ids)))
    assert grid.size == n


def test_three_dimensional_groups_in_linear_order(prog, dev):
    q = sycl.queue(dev)
    glob, local = (4, 6, 16), (2, 3, 8)             # 48 work-items: a partial warp on the GPU
    n = int(np.prod(glob))
    xs = np.random.default_rng(4).integers(0, 9, n).astype(np.int32)
    x, out = shared(q, xs, np.int32), sycl.malloc_shared(3 * n, np.int32, q)
    q.parallel_for(prog.kernel("alg3"), sycl.nd_range(glob, local), x, out).wait()
    got = np.asarray(out).reshape(3, n)
    idx = np.arange(n).reshape(glob)
    for a in range(0, glob[0], local[0]):
        for b in range(0, glob[1], local[1]):
            for c in range(0, glob[2], local[2]):
                ids = idx[a:a + local[0], b:b + local[1], c:c + local[2]].ravel()
                v = xs[ids]
                np.testing.assert_array_equal(got[0][ids], np.concatenate([[0], np.cumsum(v)[:-1]]))
                np.testing.assert_array_equal(got[1][ids], model("inclusive", "plus", v, S(dev)))
                np.testing.assert_array_equal(got[2][ids], v.max())


# -- work-group memory ---------------------------------------------------------------------------



@pytest.mark.parametrize("m", [10, 7000])          # 7000: 28 KB + 56 KB, above CUDA's default 48 KiB
def test_several_local_memory_arguments_and_static_local(prog, dev, m):
    q = sycl.queue(dev)
    if 12 * m + 32 > dev.local_mem_size:
        pytest.skip(f"{dev.name} has {dev.local_mem_size} bytes of work-group memory")
    local, groups = 64, 3
    xs = np.random.default_rng(m).integers(0, 5, groups * m).astype(np.int32)
    x, y = shared(q, xs, np.int32), sycl.malloc_shared(groups * local, np.int32, q)
    q.parallel_for(prog.kernel("two_tiles"), sycl.nd_range((groups * local,), (local,)), x, y,
                   sycl.local_memory(m, np.int32), sycl.local_memory(m, np.float64), m).wait()
    want = np.repeat(xs.reshape(groups, m).sum(axis=1), local) + 1 + np.tile(np.arange(local) % 8, groups)
    np.testing.assert_array_equal(np.asarray(y), want)


def test_too_much_work_group_memory_is_errc_invalid(prog, dev):
    q = sycl.queue(dev)
    x, y = shared(q, np.zeros(64, np.float32), np.float32), sycl.malloc_shared(64, np.float32, q)
    count = dev.local_mem_size // 4 + 1
    with pytest.raises(sycl.exception) as e:
        q.parallel_for(prog.kernel("box"), sycl.nd_range((64,), (64,)), x, y, sycl.local_memory(count, np.float32)).wait()
    assert e.value.code() == sycl.errc.invalid
    assert str(dev.local_mem_size) in str(e.value)


def test_too_many_work_items_per_group_is_errc_nd_range(prog, gpu):
    q = sycl.queue(gpu)
    x, out = shared(q, np.zeros(2048, np.int32), np.int32), sycl.malloc_shared(6 * 2048, np.int32, q)
    with pytest.raises(sycl.exception) as e:
        q.parallel_for(prog.kernel("votes"), sycl.nd_range((2048,), (2048,)), x, out).wait()
    assert e.value.code() == sycl.errc.nd_range and "1024" in str(e.value)


def test_gpu_lists_warps_and_opt_in_shared_memory(gpu):
    assert gpu.sub_group_sizes == (32,)
    assert gpu.local_mem_size > 48 * 1024          # the opt-in limit (227 KiB on an H100)


# -- reductions ----------------------------------------------------------------------------------


def test_reduction_into_device_memory(prog, dev):
    q = sycl.queue(dev)
    xs = np.random.default_rng(9).integers(0, 10, 5000).astype(np.float32)
    x = shared(q, xs, np.float32)
    r = sycl.malloc_device(1, np.float32, q)
    q.memcpy(r, np.array([123.0], np.float32), 4).wait()
    q.parallel_for(prog.kernel("total"), sycl.range(5000), x,
                   sycl.reduction(r, sycl.plus, initialize_to_identity=True)).wait()
    back = np.zeros(1, np.float32)
    q.memcpy(back, r, 4).wait()
    assert back[0] == xs.sum()



def test_reducers_of_every_kind(prog, dev):
    q = sycl.queue(dev)
    n = 3000
    rng = np.random.default_rng(10)
    ds = rng.integers(-50, 50, n).astype(np.float64)
    ls = np.ones(n, np.int64)
    ls[rng.choice(n, 20, replace=False)] = 2                   # product 2^20, exact in float too
    hs = rng.integers(0, 2, n).astype(np.float16) * np.float16(0.5)
    xs = rng.integers(0, 1 << 20, n).astype(np.int32)
    d, l, h, x = shared(q, ds, np.float64), shared(q, ls, np.int64), shared(q, hs, np.float16), shared(q, xs, np.int32)
    dmin, lmul, hsum = shared(q, [0.0], np.float64), shared(q, [3], np.int64), shared(q, [0.0], np.float16)
    umax, bx, anyr, fmul = shared(q, [0], np.uint64), shared(q, [0], np.int32), shared(q, [False], np.bool_), \
        shared(q, [0.5], np.float32)
    q.parallel_for(prog.kernel("typed"), sycl.range(n), d, l, h, x,
                   sycl.reduction(dmin, sycl.minimum, initialize_to_identity=True), sycl.reduction(lmul, sycl.multiplies),
                   sycl.reduction(hsum, sycl.plus), sycl.reduction(umax, sycl.maximum),
                   sycl.reduction(bx, sycl.bit_xor), sycl.reduction(anyr, sycl.logical_or),
                   sycl.reduction(fmul, sycl.multiplies, initialize_to_identity=True)).wait()
    assert np.asarray(dmin)[0] == ds.min()
    assert np.asarray(lmul)[0] == 3 * (1 << 20)
    assert np.asarray(hsum)[0] == hs.astype(np.float64).sum()
    assert np.asarray(umax)[0] == 6
    assert np.asarray(bx)[0] == np.bitwise_xor.reduce(xs)
    assert bool(np.asarray(anyr)[0]) == bool((xs == 77).any())
    assert np.asarray(fmul)[0] == float(1 << 20)



