"""Aggregated atomic updates (the aggregate-atomics pass, run by the JIT): the
same results as one atomic per work-item, and only where no work-item could
tell the difference."""
import numpy as np
import pytest

from minisycl import runtime as sycl
from minisycl.passes.ir import Module
from minisycl.passes.aggregate_atomics import accumulators, private_copy

KSL = """
kernel sum_sub(id<1> i, int* x, long* s) { atomic_fetch_add(s, (long)x[i]); atomic_fetch_sub(s, 1L); }
kernel lo_hi(id<1> i, int* x, int* lo, int* hi) { atomic_fetch_min(lo, x[i]); atomic_fetch_max(hi, x[i]); }
kernel bits(id<1> i, int* x, int* a, int* o, int* e) {
  atomic_fetch_and(a, x[i] | 0x100); atomic_fetch_or(o, x[i]); atomic_fetch_xor(e, x[i]);
}
kernel ticket(id<1> i, int* next, int* got) { got[i] = atomic_fetch_add(next, 1); }
kernel fsum(id<1> i, float* x, float* s) { atomic_fetch_add(s, x[i]); }
kernel peek(id<1> i, long* s, long* alias, long* out) { atomic_fetch_add(s, 5L); out[0] = alias[0]; }
kernel also_loads(id<1> i, int* x, int* s) { atomic_fetch_add(s, 1); x[i] = atomic_load(s); }
"""
N = 1 << 20 | 12345      # several pieces, not a multiple of anything


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("a")
    (d / "a.ksl").write_text(KSL)
    return sycl.build_program([str(d / "a.ksl")])


@pytest.fixture(scope="module")
def x():
    q = sycl.queue()
    a = sycl.malloc_shared(N, np.int32, q)
    np.asarray(a)[:] = np.random.default_rng(7).integers(-1 << 20, 1 << 20, N, dtype=np.int32)
    return a


def aggregated(prog, kernel, expected):
    """Whether the CPU device's lowering aggregated the atomics it should (``expected``);
    other devices compile atomics their own way (only their results are checked)."""
    device = sycl.queue().device
    if device.name != sycl.HOST_CPU:
        return True
    return prog.linked_for(kernel, device)[0].aggregated.get(kernel, []) == expected


def test_sums_minima_maxima_and_bits_are_exact(prog, x):
    q = sycl.queue()
    xs = np.asarray(x).astype(np.int64)
    s = sycl.malloc_shared(1, np.int64, q)
    s[0] = 10
    q.parallel_for(prog.kernel("sum_sub"), N, x, s).wait()
    assert s[0] == 10 + xs.sum() - N
    lo, hi = sycl.malloc_shared(1, np.int32, q), sycl.malloc_shared(1, np.int32, q)
    lo[0], hi[0] = 0, 0
    q.parallel_for(prog.kernel("lo_hi"), N, x, lo, hi).wait()
    assert (lo[0], hi[0]) == (min(0, xs.min()), max(0, xs.max()))
    a, o, e = (sycl.malloc_shared(1, np.int32, q) for _ in range(3))
    a[0], o[0], e[0] = -1, 0, 0x55
    q.parallel_for(prog.kernel("bits"), N, x, a, o, e).wait()
    xv = np.asarray(x)
    assert a[0] == np.bitwise_and.reduce(xv | 0x100) and o[0] == np.bitwise_or.reduce(xv)
    assert e[0] == 0x55 ^ np.bitwise_xor.reduce(xv)
    assert aggregated(prog, "sum_sub", [1]) and aggregated(prog, "lo_hi", [1, 2])
    assert aggregated(prog, "bits", [1, 2, 3])


def test_updates_that_someone_reads_are_left_alone(prog):
    q = sycl.queue()
    nxt, got = sycl.malloc_shared(1, np.int32, q), sycl.malloc_shared(N, np.int32, q)
    nxt[0] = 0
    q.parallel_for(prog.kernel("ticket"), N, nxt, got).wait()
    assert nxt[0] == N and np.array_equal(np.sort(np.asarray(got)), np.arange(N))   # every ticket once
    assert aggregated(prog, "ticket", [])
    assert aggregated(prog, "fsum", [])           # float sums depend on the order
    assert aggregated(prog, "also_loads", [])     # another atomic could read the target


def test_a_single_work_item_sees_its_own_update(prog):
    q = sycl.queue()
    s, out = sycl.malloc_shared(1, np.int64, q), sycl.malloc_shared(1, np.int64, q)
    s[0] = 1
    q.parallel_for(prog.kernel("peek"), 1, s, s, out).wait()
    assert out[0] == 6 and s[0] == 6
    q.parallel_for(prog.kernel("peek"), 1000, s, out, out).wait()
    assert s[0] == 5006 and aggregated(prog, "peek", [0])


IR = """
define spir_func void @k(ptr %item, ptr %t, i64 %v, ptr %u) {
  %r = atomicrmw add ptr %t, i64 %v seq_cst, align 8
  BODY
  ret void
}
define spir_func void @helper(ptr %p) {
  HELPER
  ret void
}
"""


# parameter indices count every parameter: %t is parameter 1
@pytest.mark.parametrize("body,helper,expect", [
    ("", "", [1]),
    ("%r2 = atomicrmw sub ptr %t, i64 1 monotonic, align 8", "", []),      # orderings differ
    ("%r2 = atomicrmw sub ptr %t, i64 1 seq_cst, align 8", "", [1]),
    ("%r2 = atomicrmw max ptr %t, i64 1 seq_cst, align 8", "", []),        # add and max do not combine
    ("fence seq_cst", "", []),
    ("%c = cmpxchg ptr %u, i64 0, i64 1 seq_cst seq_cst, align 8", "", []),
    ("%l = load atomic i64, ptr %u seq_cst, align 8", "", []),
    ("store i64 0, ptr %t", "", []),                                       # the target is written
    ("call spir_func void @helper(ptr %u)", "fence seq_cst", []),          # a callee orders memory
    ("call spir_func void @helper(ptr %u)", "store i8 0, ptr %p", [1]),
    ("store i64 %r, ptr %u", "", []),                                      # the old value is used
])
def test_which_parameters_are_accumulators(body, helper, expect):
    m = Module.parse(IR.replace("BODY", body).replace("HELPER", helper))
    found = accumulators(m, "k")
    assert [a.param for a in found] == expect
    if found:
        copy = m.functions[private_copy(m, "k", found)].text()
        assert "atomicrmw" not in copy and "define internal spir_func void @__minisycl_private.k(" in copy
        assert "%r.old = load i64, ptr %t, align 8" in copy
