"""Work-group kernels on the CPU (passes/work_item_loops.py, runtime/work_groups.py):
hand-written IR in the IR contract, against NumPy."""
import pathlib
import sys

import numpy as np
import pytest

from minisycl import runtime as sycl

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from wg_ir import HEAD, collective, item, module  # noqa: E402

DATA = pathlib.Path(__file__).parent / "data"


def build(tmp_path, text, name="k.ll"):
    path = tmp_path / name
    path.write_text(text)
    return sycl.build_program([str(path)])


def shared(q, values, dtype):
    a = sycl.malloc_shared(len(values), dtype, q)
    np.asarray(a)[:] = values
    return a


@pytest.fixture(scope="module")
def matmul():
    return sycl.build_program([str(DATA / "tiled_matmul.ll")])


@pytest.mark.parametrize("n", [16, 48])
def test_tiled_matmul_matches_numpy(matmul, n):
    q = sycl.queue()
    rng = np.random.default_rng(n)
    a, b = (shared(q, rng.random(n * n, dtype=np.float32), np.float32) for _ in range(2))
    c = sycl.malloc_shared(n * n, np.float32, q)
    q.parallel_for(matmul.kernel("tiled_matmul"), sycl.nd_range((n, n), (16, 16)), a, b, c, n).wait()
    ref = np.asarray(a).reshape(n, n) @ np.asarray(b).reshape(n, n)
    assert np.allclose(np.asarray(c).reshape(n, n), ref, rtol=1e-5)
    if q.device.name == sycl.HOST_CPU:       # the CPU device's work-group lowering took the tiled kernel only
        assert "tiled_matmul" in matmul.linked_for("tiled_matmul", q.device)[0].groups
        assert "naive_matmul" not in matmul.linked_for("naive_matmul", q.device)[0].groups   # left as it was


def test_reqd_work_group_size_is_enforced(matmul):
    q = sycl.queue()
    a = sycl.malloc_shared(64 * 64, np.float32, q)
    with pytest.raises(sycl.exception) as e:
        q.parallel_for(matmul.kernel("tiled_matmul"), sycl.nd_range((64, 64), (8, 8)), a, a, a, 64).wait()
    assert e.value.code() == sycl.errc.nd_range and "{16, 16}" in str(e.value)



REGISTER_TILES = """
// each work-item keeps a private array of partial sums across every barrier
kernel blocked(nd_item<1> it, float* x, float* out, int chunks) {
  local float tile[64];
  long l = it.get_local_id(0);
  float part[4];
  for (int i = 0; i < 4; i++) part[i] = 0.0f;
  for (int c = 0; c < chunks; c++) {
    tile[l] = x[c * it.get_local_range(0) + l];
    group_barrier(it);
    for (int i = 0; i < 4; i++) part[i] += tile[(l + i) % it.get_local_range(0)] * (float)(i + 1);
    group_barrier(it);
  }
  for (int i = 0; i < 4; i++) out[it.get_global_id(0) * 4 + i] = part[i];
}
"""


@pytest.mark.parametrize("L", [1, 5, 64])
def test_private_arrays_live_across_barriers(tmp_path, L):
    """A private array (register tiling: ``float part[4]``) kept across barriers
    is kept per work-item, as scalars are."""
    prog = build(tmp_path, REGISTER_TILES, "tiles.ksl")
    q = sycl.queue()
    chunks = 3
    x = shared(q, np.arange(chunks * L, dtype=np.float32), np.float32)
    out = sycl.malloc_shared(4 * L, np.float32, q)
    q.parallel_for(prog.kernel("blocked"), sycl.nd_range((L,), (L,)), x, out, chunks).wait()
    xs = np.arange(chunks * L, dtype=np.float32).reshape(chunks, L)
    want = np.array([[sum(xs[c][(l + i) % L] * (i + 1) for c in range(chunks)) for i in range(4)]
                     for l in range(L)], np.float32)
    assert np.allclose(np.asarray(out).reshape(L, 4), want)


VARIABLE_ALLOCA = HEAD + item(1) + """define spir_kernel void @vla(%"class.sycl::_V1::nd_item.1" %it, ptr %x, ptr %y) #0 {
entry:
  %lid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 1, 0
  %buf = alloca float, i64 %lid
  store float 1.0, ptr %buf
  call void @_Z22__spirv_ControlBarrierjjj(i32 2, i32 2, i32 272)
  %v = load volatile float, ptr %buf
  store float %v, ptr %y
  ret void
}
declare void @_Z22__spirv_ControlBarrierjjj(i32, i32, i32)
attributes #0 = { "minisycl-kernel-signature"="nd_item<1>,float*,float*" }
"""


@pytest.mark.cpu_only("about the CPU device's work-group lowering")
def test_a_kernel_the_cpu_lowering_cannot_compile_is_errc_build(tmp_path):
    """IR the lowering refuses (an alloca whose size each work-item computes,
    kept across a barrier) is a ``sycl.exception`` at launch, not a traceback."""
    prog = build(tmp_path, VARIABLE_ALLOCA, "vla.ll")
    q = sycl.queue()
    y = sycl.malloc_shared(4, np.float32, q)
    with pytest.raises(sycl.exception, match="variable-length alloca cannot be kept per work-item") as info:
        q.parallel_for(prog.kernel("vla"), sycl.nd_range((4,), (4,)), y, y).wait()
    assert info.value.code() == sycl.errc.build

BOX = HEAD + item(1) + """@tile = internal addrspace(3) global [1024 x float] undef, align 4
define spir_kernel void @rotate(%"class.sycl::_V1::nd_item.1" %it, ptr %x, ptr %y) #0 {
entry:
  %gid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 0, 0
  %lid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 1, 0
  %n = extractvalue %"class.sycl::_V1::nd_item.1" %it, 4, 0
  %px = getelementptr float, ptr %x, i64 %gid
  %v = load float, ptr %px
  %pt = getelementptr [1024 x float], ptr addrspace(3) @tile, i64 0, i64 %lid
  store float %v, ptr addrspace(3) %pt
  call void @_Z22__spirv_ControlBarrierjjj(i32 2, i32 2, i32 272)
  %l1 = add i64 %lid, 1
  %r = urem i64 %l1, %n
  %pr = getelementptr [1024 x float], ptr addrspace(3) @tile, i64 0, i64 %r
  %w = load float, ptr addrspace(3) %pr
  %py = getelementptr float, ptr %y, i64 %gid
  store float %w, ptr %py
  ret void
}
; y = (tile[l-1] + tile[l] + tile[l+1]) / 3 through a local T* sized at launch
define spir_kernel void @box(%"class.sycl::_V1::nd_item.1" %it, ptr %x, ptr %y, ptr addrspace(3) %tile) #1 {
entry:
  %gid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 0, 0
  %l = extractvalue %"class.sycl::_V1::nd_item.1" %it, 1, 0
  %n = extractvalue %"class.sycl::_V1::nd_item.1" %it, 4, 0
  %px = getelementptr float, ptr %x, i64 %gid
  %v = load float, ptr %px
  %pt = getelementptr float, ptr addrspace(3) %tile, i64 %l
  store float %v, ptr addrspace(3) %pt
  call void @_Z22__spirv_ControlBarrierjjj(i32 2, i32 2, i32 272)
  %a0 = add i64 %l, %n
  %a1 = sub i64 %a0, 1
  %a = urem i64 %a1, %n
  %b0 = add i64 %l, 1
  %b = urem i64 %b0, %n
  %pa = getelementptr float, ptr addrspace(3) %tile, i64 %a
  %pb = getelementptr float, ptr addrspace(3) %tile, i64 %b
  %va = load float, ptr addrspace(3) %pa
  %vb = load float, ptr addrspace(3) %pb
  %s0 = fadd float %va, %v
  %s1 = fadd float %s0, %vb
  %s = fdiv float %s1, 3.0
  %py = getelementptr float, ptr %y, i64 %gid
  store float %s, ptr %py
  ret void
}
; barriers inside a loop and under a uniform condition; %acc lives across them
define spir_kernel void @loops(%"class.sycl::_V1::nd_item.1" %it, ptr %x, ptr %y, ptr addrspace(3) %tile) #1 {
entry:
  %gid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 0, 0
  %l = extractvalue %"class.sycl::_V1::nd_item.1" %it, 1, 0
  %n = extractvalue %"class.sycl::_V1::nd_item.1" %it, 4, 0
  %px = getelementptr float, ptr %x, i64 %gid
  %v = load float, ptr %px
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %latch ]
  %acc = phi float [ %v, %entry ], [ %acc2, %latch ]
  %pt = getelementptr float, ptr addrspace(3) %tile, i64 %l
  store float %acc, ptr addrspace(3) %pt
  call void @_Z22__spirv_ControlBarrierjjj(i32 2, i32 2, i32 272)
  %b0 = add i64 %l, 1
  %b = urem i64 %b0, %n
  %pb = getelementptr float, ptr addrspace(3) %tile, i64 %b
  %vb = load float, ptr addrspace(3) %pb
  %acc1 = fadd float %acc, %vb
  %odd = and i32 %i, 1
  %isodd = icmp ne i32 %odd, 0
  br i1 %isodd, label %extra, label %latch
extra:
  call void @_Z22__spirv_ControlBarrierjjj(i32 2, i32 2, i32 272)
  %acc3 = fmul float %acc1, 0.5
  br label %latch
latch:
  %acc2 = phi float [ %acc1, %loop ], [ %acc3, %extra ]
  call void @_Z22__spirv_ControlBarrierjjj(i32 2, i32 2, i32 272)
  %i1 = add i32 %i, 1
  %more = icmp slt i32 %i1, 4
  br i1 %more, label %loop, label %done
done:
  %py = getelementptr float, ptr %y, i64 %gid
  store float %acc2, ptr %py
  ret void
}
; a barrier only some work-items reach
define spir_kernel void @divergent(%"class.sycl::_V1::nd_item.1" %it, ptr %x, ptr %y) #0 {
entry:
  %l = extractvalue %"class.sycl::_V1::nd_item.1" %it, 1, 0
  %few = icmp ult i64 %l, 3
  br i1 %few, label %wait, label %done
wait:
  call void @_Z22__spirv_ControlBarrierjjj(i32 2, i32 2, i32 272)
  br label %done
done:
  ret void
}
declare void @_Z22__spirv_ControlBarrierjjj(i32, i32, i32)
attributes #0 = { "minisycl-kernel-signature"="nd_item<1>,float*,float*" }
attributes #1 = { "minisycl-kernel-signature"="nd_item<1>,float*,float*,local float*" }
"""


@pytest.fixture(scope="module")
def boxes(tmp_path_factory):
    return build(tmp_path_factory.mktemp("box"), BOX)


def loops_reference(x, L):
    acc = x.reshape(-1, L).astype(np.float32).copy()
    for i in range(4):
        acc = acc + np.roll(acc, -1, axis=1)
        if i % 2:
            acc = acc * np.float32(0.5)
    return acc.reshape(-1)


@pytest.mark.parametrize("L", [1, 2, 3, 5, 7, 16, 60, 64, 256])
def test_barriers_static_and_dynamic_local_memory(boxes, L):
    q = sycl.queue()
    n = L * 7
    x = shared(q, np.random.default_rng(L).random(n, dtype=np.float32), np.float32)
    y = sycl.malloc_shared(n, np.float32, q)
    xv = np.asarray(x).reshape(-1, L)
    q.parallel_for(boxes.kernel("rotate"), sycl.nd_range(n, L), x, y).wait()
    assert np.array_equal(np.asarray(y).reshape(-1, L), np.roll(xv, -1, axis=1))
    q.parallel_for(boxes.kernel("box"), sycl.nd_range(n, L), x, y, sycl.local_memory(L, np.float32)).wait()
    ref = (np.roll(xv, 1, axis=1) + xv + np.roll(xv, -1, axis=1)) / np.float32(3)
    assert np.allclose(np.asarray(y).reshape(-1, L), ref, rtol=1e-6)
    q.parallel_for(boxes.kernel("loops"), sycl.nd_range(n, L), x, y, sycl.local_memory(L, np.float32)).wait()
    assert np.allclose(np.asarray(y), loops_reference(np.asarray(x), L), rtol=1e-5)


LOOPS = pathlib.Path(__file__).parent.parent / "lit" / "passes" / "lower-work-groups" / "loops.ll"


@pytest.mark.parametrize("L", [1, 3, 16])
def test_loops_with_and_without_implicit_barriers(L):
    """The kernels of the lit test loops.ll (a short constant loop left whole, a loop
    of a run-time trip count with an implicit barrier, a counter and an accumulator
    carried across two barriers in a shared slot, a phi that must keep its own slot)
    against NumPy."""
    prog = sycl.build_program([str(LOOPS)])
    q = sycl.queue()
    n = 48
    x = shared(q, np.random.default_rng(L).random(n, dtype=np.float32), np.float32)
    y = sycl.malloc_shared(n, np.float32, q)
    xv = np.asarray(x)
    if L == 16:                       # the 16-element tile: y = x * the sum of the group's x
        ref = xv * xv.reshape(-1, 16).sum(axis=1).repeat(16)
        q.parallel_for(prog.kernel("short_loop"), sycl.nd_range(n, 16), x, y).wait()
        assert np.allclose(np.asarray(y), ref, rtol=1e-5)
        np.asarray(y)[:] = 0
        q.parallel_for(prog.kernel("long_loop"), sycl.nd_range(n, 16), x, y, 16).wait()
        assert np.allclose(np.asarray(y), ref, rtol=1e-5)
    for count in (0, 1, 6):
        q.parallel_for(prog.kernel("carried"), sycl.nd_range(n, L), x, y, sycl.local_memory(L, np.float32),
                       count).wait()
        nxt = np.roll(xv.reshape(-1, L), -1, axis=1).reshape(-1)
        assert np.allclose(np.asarray(y), nxt * (count * (count - 1) / 2), rtol=1e-5)
        q.parallel_for(prog.kernel("apart"), sycl.nd_range(n, L), x, y, count).wait()
        assert np.allclose(np.asarray(y), xv * (2 ** count - 1), rtol=1e-5)


@pytest.mark.cpu_only("a barrier not reached by every work-item is undefined behaviour: the CPU device's lowering "
                       "detects it, a GPU may hang")
def test_divergent_barrier_stops_with_errc_runtime(boxes):
    q = sycl.queue()
    x = sycl.malloc_shared(64, np.float32, q)
    with pytest.raises(sycl.exception) as e:
        q.parallel_for(boxes.kernel("divergent"), sycl.nd_range(64, 16), x, x).wait()
    assert e.value.code() == sycl.errc.runtime
    assert "work-group barrier #1 (__spirv_ControlBarrier)" in str(e.value) and "the end of the kernel" in str(e.value)
    q.parallel_for(boxes.kernel("divergent"), sycl.nd_range(6, 2), x, x).wait()    # all of each group reach it


def test_local_memory_is_checked(boxes):
    q = sycl.queue()
    x = sycl.malloc_shared(64, np.float32, q)
    with pytest.raises(sycl.exception) as e:
        q.parallel_for(boxes.kernel("box"), sycl.nd_range(64, 16), x, x, sycl.local_memory(16, np.int32)).wait()
    assert e.value.code() == sycl.errc.invalid and "local float*" in str(e.value)
    with pytest.raises(sycl.exception) as e:
        q.parallel_for(boxes.kernel("box"), sycl.nd_range(64, 16), x, x, x).wait()
    assert e.value.code() == sycl.errc.invalid
    too_many = q.device.local_mem_size // 4 + 1
    with pytest.raises(sycl.exception) as e:
        q.parallel_for(boxes.kernel("box"), sycl.nd_range(64, 16), x, x, sycl.local_memory(too_many, np.float32)).wait()
    assert e.value.code() == sycl.errc.invalid and "local_mem_size" in str(e.value)
    if q.device.name == sycl.HOST_CPU:
        assert q.device.local_mem_size == 65536
    assert sycl.device(__import__("minisycl.device_configs.targets", fromlist=["x"]).load_target(
        "nvidia_gpu_sm_80")).local_mem_size == 49152


# -- collectives --------------------------------------------------------------------------------

NP = {"i32": np.int32, "float": np.float32, "half": np.float16, "i64": np.int64}
OPS = {"IAdd": np.add, "FAdd": np.add, "IMulKHR": np.multiply, "FMulKHR": np.multiply, "SMin": np.minimum,
       "FMin": np.minimum, "SMax": np.maximum, "FMax": np.maximum, "BitwiseAndKHR": np.bitwise_and,
       "BitwiseOrKHR": np.bitwise_or, "BitwiseXorKHR": np.bitwise_xor}
CASES = [("IAdd", "i32"), ("IMulKHR", "i32"), ("SMin", "i32"), ("SMax", "i64"), ("BitwiseAndKHR", "i32"),
         ("BitwiseOrKHR", "i32"), ("BitwiseXorKHR", "i32"), ("FAdd", "float"), ("FMin", "float"),
         ("FMax", "float"), ("FMulKHR", "float"), ("FAdd", "half")]


def segments(n_items, L, S):
    """(start, end) of every segment: work-groups of L, cut into sub-groups of S."""
    for g in range(0, n_items, L):
        for s in range(g, g + L, S):
            yield s, min(s + S, g + L)


def expected(kind, opname, values, L, S):
    op = OPS[opname]
    out = np.empty_like(values)
    for s, e in segments(len(values), L, S):
        seg = values[s:e]
        if kind == 0:
            out[s:e] = op.reduce(seg)
        else:
            inc = op.accumulate(seg)
            out[s:e] = inc if kind == 1 else np.concatenate([[identity(opname, seg.dtype)], inc[:-1]])
    return out


def identity(opname, dtype):
    if opname in ("IAdd", "FAdd", "BitwiseOrKHR", "BitwiseXorKHR"):
        return 0
    if opname in ("IMulKHR", "FMulKHR"):
        return 1
    if opname == "BitwiseAndKHR":
        return -1
    if dtype.kind == "f":
        return np.inf if "Min" in opname else -np.inf
    info = np.iinfo(dtype)
    return info.max if "Min" in opname else info.min


@pytest.fixture(scope="module")
def collectives(tmp_path_factory):
    ks = [collective(f"c_{o}_{t}_{scope}_{kind}", f"__spirv_Group{o}", t, scope, kind)
          for o, t in CASES for scope in (2, 3) for kind in (0, 1, 2)]
    ks += [collective("bcast", "__spirv_GroupBroadcast", "i32", 2, None, "i32 5"),
           collective("sg_bcast", "__spirv_GroupBroadcast", "float", 3, None, "i32 1"),
           collective("sx", "__spirv_SubgroupShuffleXorINTEL", "i32", None, None, "i32 1"),
           collective("sel", "__spirv_SubgroupShuffleINTEL", "i32", None, None, "i32 2"),
           collective("any", "__spirv_GroupAny", "i1", 2, None), collective("all_sg", "__spirv_GroupAll", "i1", 3, None),
           collective("c16", "__spirv_GroupIAdd", "i32", 3, 1, reqd_sg=16),
           collective("c3d", "__spirv_GroupIAdd", "i32", 2, 1, dims=3),
           collective("c_sg3d", "__spirv_GroupFAdd", "float", 3, 0, dims=3)]
    return build(tmp_path_factory.mktemp("c"), module(ks, dims=(1, 3)))


def values(n, ty, seed):
    rng = np.random.default_rng(seed)
    if ty in ("float", "half"):
        return rng.integers(-8, 9, n).astype(NP[ty]) / NP[ty](4)      # exact in any order
    return rng.integers(-3, 4, n).astype(NP[ty])


@pytest.mark.parametrize("L", [1, 5, 8, 13, 64, 131, 256])   # 131, 256: the wide sweep of a reduce
@pytest.mark.parametrize("o,t", CASES)
def test_group_and_sub_group_reduce_and_scans(collectives, o, t, L):
    q = sycl.queue()
    S = q.device.sub_group_sizes[0]
    n = 3 * L
    x = shared(q, values(n, t, L), NP[t])
    out = sycl.malloc_shared(n, NP[t], q)
    for scope in (2, 3):
        for kind in (0, 1, 2):
            q.parallel_for(collectives.kernel(f"c_{o}_{t}_{scope}_{kind}"), sycl.nd_range(n, L), x, out).wait()
            want = expected(kind, o, np.asarray(x), L, L if scope == 2 else S)
            got = np.asarray(out)
            if o in ("IMulKHR", "FMulKHR") and t != "i32":
                assert np.allclose(got, want)
            else:
                assert np.array_equal(got, want.astype(NP[t])), (scope, kind)


@pytest.mark.parametrize("L", [6, 10, 32])
def test_broadcast_votes_and_shuffles(collectives, L):
    q = sycl.queue()
    S = q.device.sub_group_sizes[0]
    n = 2 * L
    xi = shared(q, np.arange(n, dtype=np.int32) * 3, np.int32)
    oi = sycl.malloc_shared(n, np.int32, q)
    v = np.asarray(xi)
    q.parallel_for(collectives.kernel("bcast"), sycl.nd_range(n, L), xi, oi).wait()
    assert np.array_equal(np.asarray(oi), np.repeat(v.reshape(-1, L)[:, 5], L))
    q.parallel_for(collectives.kernel("sx"), sycl.nd_range(n, L), xi, oi).wait()
    q2 = sycl.malloc_shared(n, np.int32, q)
    q.parallel_for(collectives.kernel("sel"), sycl.nd_range(n, L), xi, q2).wait()
    for s, e in segments(n, L, S):
        for i in range(s, e):
            lane = i - s
            src = lane ^ 1
            assert oi[i] == (v[s + src] if src < e - s else v[i])
            assert q2[i] == (v[s + 2] if 2 < e - s else v[i])
    xf = shared(q, np.arange(n, dtype=np.float32), np.float32)
    of = sycl.malloc_shared(n, np.float32, q)
    q.parallel_for(collectives.kernel("sg_bcast"), sycl.nd_range(n, L), xf, of).wait()
    for s, e in segments(n, L, S):
        assert np.all(np.asarray(of)[s:e] == (s + 1 if e - s > 1 else s))
    xb = shared(q, (np.arange(n) % L == L - 1).astype(np.bool_), np.bool_)
    ob = sycl.malloc_shared(n, np.bool_, q)
    q.parallel_for(collectives.kernel("any"), sycl.nd_range(n, L), xb, ob).wait()
    assert np.all(np.asarray(ob))
    q.parallel_for(collectives.kernel("all_sg"), sycl.nd_range(n, L), xb, ob).wait()
    for s, e in segments(n, L, S):
        assert np.all(np.asarray(ob)[s:e] == np.all(np.asarray(xb)[s:e]))


def test_required_sub_group_size_and_3d(collectives):
    q = sycl.queue()
    if 16 not in q.device.sub_group_sizes:
        pytest.skip(f"{q.device.name}'s sub-group sizes are {q.device.sub_group_sizes}: a kernel requiring 16 is "
                    f"refused there (test_unlisted_required_sub_group_size_is_refused)")
    n = 48
    x = shared(q, np.arange(n, dtype=np.int32), np.int32)
    out = sycl.malloc_shared(n, np.int32, q)
    q.parallel_for(collectives.kernel("c16"), sycl.nd_range(n, 24), x, out).wait()
    assert np.array_equal(np.asarray(out), expected(1, "IAdd", np.asarray(x), 24, 16))
    g, l = (4, 6, 10), (2, 3, 5)
    N = 4 * 6 * 10
    x3 = shared(q, np.arange(N, dtype=np.int32) % 7, np.int32)
    o3 = sycl.malloc_shared(N, np.int32, q)
    q.parallel_for(collectives.kernel("c3d"), sycl.nd_range(g, l), x3, o3).wait()
    xv = np.asarray(x3).reshape(g)
    want = np.empty(g, np.int32)
    for a in range(0, 4, 2):
        for b in range(0, 6, 3):
            for c in range(0, 10, 5):
                blk = xv[a:a + 2, b:b + 3, c:c + 5].reshape(-1)       # linear order: last dimension fastest
                want[a:a + 2, b:b + 3, c:c + 5] = np.cumsum(blk).reshape(2, 3, 5)
    assert np.array_equal(np.asarray(o3).reshape(g), want)


def test_unlisted_required_sub_group_size_is_refused(tmp_path):
    prog = build(tmp_path, module([collective("c7", "__spirv_GroupIAdd", "i32", 3, 0, reqd_sg=7)]))
    q = sycl.queue()
    x = sycl.malloc_shared(8, np.int32, q)
    with pytest.raises(sycl.exception) as e:
        q.parallel_for(prog.kernel("c7"), sycl.nd_range(8, 8), x, x).wait()
    assert e.value.code() == sycl.errc.kernel_not_supported and "Sub-group size 7" in str(e.value)


def test_work_group_kernels_in_a_graph(boxes):
    q = sycl.queue()
    L, n = 16, 64
    x = shared(q, np.arange(n, dtype=np.float32), np.float32)
    y = sycl.malloc_shared(n, np.float32, q)
    g = sycl.command_graph(q.get_context(), q.get_device())
    g.add(lambda h: h.parallel_for(boxes.kernel("rotate"), sycl.nd_range(n, L), x, y))
    ex = g.finalize()
    q.ext_oneapi_graph(ex).wait()
    assert np.array_equal(np.asarray(y).reshape(-1, L), np.roll(np.asarray(x).reshape(-1, L), -1, axis=1))


def test_a_static_local_array_above_the_device_limit_is_invalid_naming_it(tmp_path):
    """The same wrong program gives the same error on every device (issue 31 point 4):
    ``errc::invalid`` at launch naming the limit, not a build error from the GPU's assembler."""
    q = sycl.queue()
    words = q.device.local_mem_size // 4 + 1
    (tmp_path / "big.ksl").write_text(
        f"kernel big(nd_item<1> it, float* out) {{\n  local float tile[{words}];\n"
        f"  tile[it.get_local_id(0)] = 1.0f;\n  group_barrier(it);\n"
        f"  out[it.get_global_id(0)] = tile[{words - 1} - it.get_local_id(0)];\n}}\n")
    prog = sycl.build_program([str(tmp_path / "big.ksl")])
    out = sycl.malloc_shared(16, np.float32, q)
    with pytest.raises(sycl.exception) as e:
        q.parallel_for(prog.kernel("big"), sycl.nd_range(16, 16), out).wait()
    assert e.value.code() == sycl.errc.invalid and "local_mem_size" in str(e.value) and "'big'" in str(e.value)
