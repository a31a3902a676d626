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
    assert "tiled_matmul" in matmul.linked_for("tiled_matmul", q.device)[0].groups
    assert "naive_matmul" not in matmul.linked_for("naive_matmul", q.device)[0].groups   # left as it was


def test_reqd_work_group_size_is_enforced(matmul):
    q = sycl.queue()
    a = sycl.malloc_shared(64 * 64, np.float32, q)
    with pytest.raises(sycl.exception) as e:
        q.parallel_for(matmul.kernel("tiled_matmul"), sycl.nd_range((64, 64), (8, 8)), a, a, a, 64)
    assert e.value.code() == sycl.errc.nd_range and "{16, 16}" in str(e.value)


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


def test_divergent_barrier_stops_with_errc_runtime(boxes):
    q = sycl.queue()
    x = sycl.malloc_shared(64, np.float32, q)
    with pytest.raises(sycl.exception) as e:
        q.parallel_for(boxes.kernel("divergent"), sycl.nd_range(64, 16), x, x)
    assert e.value.code() == sycl.errc.runtime
    assert "work-group barrier #1 (__spirv_ControlBarrier)" in str(e.value) and "the end of the kernel" in str(e.value)
    q.parallel_for(boxes.kernel("divergent"), sycl.nd_range(6, 2), x, x).wait()    # all of each group reach it


def test_local_memory_is_checked(boxes):
    q = sycl.queue()
    x = sycl.malloc_shared(64, np.float32, q)
    with pytest.raises(sycl.exception) as e:
        q.parallel_for(boxes.kernel("box"), sycl.nd_range(64, 16), x, x, sycl.local_memory(16, np.int32))
    assert e.value.code() == sycl.errc.invalid and "local float*" in str(e.value)
    with pytest.raises(sycl.exception) as e:
        q.parallel_for(boxes.kernel("box"), sycl.nd_range(64, 16), x, x, x)
    assert e.value.code() == sycl.errc.invalid
    too_many = q.device.local_mem_size // 4 + 1
    with pytest.raises(sycl.exception) as e:
        q.parallel_for(boxes.kernel("box"), sycl.nd_range(64, 16), x, x, sycl.local_memory(too_many, np.float32))
    assert e.value.code() == sycl.errc.invalid and "local_mem_size" in str(e.value)
    assert q.device.local_mem_size == 65536
    assert sycl.device(__import__("minisycl.device_configs.targets", fromlist=["x"]).load_target(
        "nvidia_gpu_sm_80")).local_mem_size == 49152
