"""The GPU side of interop without a GPU (issue 33 point 1), on the stand-in
driver ``fake_cuda.py``: what GPU allocations export (DLPack device kinds, the
CUDA array interface with the queue's stream), a consumer's stream ordered after
the queue, memory exported through DLPack freed only when the consumer lets go,
kernel arguments of CUDA-array-interface objects, and a native command captured
in a CUDA graph.  The real thing runs in ``tests/gpu/test_interop_gpu.py``."""
import gc

import numpy as np
import pytest

from minisycl import runtime as sycl
from minisycl.runtime import dlpack

import fake_cuda

pytestmark = fake_cuda.ONLY_ON_CPU


@pytest.fixture
def gpu(monkeypatch, tmp_path):
    fake, dev = fake_cuda.install(monkeypatch)
    fake.kernels["scale"] = (5, lambda n, _y, _z, p, a: None)
    (tmp_path / "k.ksl").write_text("kernel scale(id<1> i, float* x, float a) { x[i] = x[i] * a; }\n")
    return fake, dev, sycl.build_program([str(tmp_path / "k.ksl")])


def test_gpu_allocations_export_their_kind_and_stream(gpu):
    fake, dev, _ = gpu
    q = sycl.queue(dev, in_order=True)
    kinds = {"device": (dlpack.CUDA, dev.ordinal), "host": (dlpack.CUDA_HOST, 0), "shared": (dlpack.CUDA_MANAGED, 0)}
    for kind, where in kinds.items():
        x = getattr(sycl, f"malloc_{kind}")(8, np.float32, q)
        assert x.__dlpack_device__() == where
        cai = x.__cuda_array_interface__
        assert cai["data"] == (x.ptr, False) and cai["stream"] == q._stream.value and cai["version"] == 3
    y = sycl.malloc_shared(4, np.int32, q)
    cpu = sycl.queue(sycl.HOST_CPU)
    assert sycl.from_dlpack(y, cpu) is y                # managed memory: the host can use it
    q.memset(y, 0, 16)                                  # work on the queue not known finished
    waits = fake.calls["cuStreamWaitEvent"]
    cap = y.__dlpack__(stream=0x1234)                   # the consumer's stream waits for the queue
    assert fake.calls["cuStreamWaitEvent"] == waits + 1
    del cap
    q.wait()
    cap = y.__dlpack__(stream=0x1234)                   # everything finished: nothing to wait for
    assert fake.calls["cuStreamWaitEvent"] == waits + 1
    del cap
    with pytest.raises(sycl.exception, match="a stream is a CUDA stream handle"):
        y.__dlpack__(stream=-5)


def test_exported_gpu_memory_is_freed_when_the_consumer_lets_go(gpu):
    fake, dev, _ = gpu
    q = sycl.queue(dev)
    x = sycl.malloc_device(64, np.float32, q)
    cap = x.__dlpack__()
    frees = fake.calls["cuMemFree_v2"]
    sycl.free(x)
    assert fake.calls["cuMemFree_v2"] == frees          # the capsule still holds it
    with pytest.raises(sycl.exception, match="freed"):
        x.__dlpack__()
    del cap
    gc.collect()
    assert fake.calls["cuMemFree_v2"] == frees + 1
    s = sycl.malloc_device(4, np.dtype([("a", np.int32), ("b", np.float32)]), q)
    with pytest.raises(sycl.exception, match="no DLPack type"):
        s.__dlpack__()                                  # refused: no consumer holds it
    sycl.free(s)
    assert fake.calls["cuMemFree_v2"] == frees + 2


class _Cai:
    def __init__(self, x):
        self.__cuda_array_interface__ = {"shape": (x.count,), "typestr": "<f4", "data": (x.ptr, False),
                                         "version": 3, "strides": None, "stream": None}


def test_cuda_array_interface_objects_are_kernel_arguments(gpu):
    fake, dev, prog = gpu
    q = sycl.queue(dev, in_order=True)
    x = sycl.malloc_device(16, np.float32, q)
    launched = fake.calls["cuLaunchKernelEx"]
    q.parallel_for(prog.kernel("scale"), 16, _Cai(x), 2.0).wait()
    assert fake.calls["cuLaunchKernelEx"] == launched + 1
    assert fake.launched[-1][3][3] == x.ptr             # the same address, no copy
    with pytest.raises(sycl.exception, match="kDLCPU"):
        q.parallel_for(prog.kernel("scale"), 4, np.zeros(4, np.float32), 2.0)


def test_a_native_command_is_captured_into_a_cuda_graph(gpu):
    fake, dev, prog = gpu
    q = sycl.queue(dev, in_order=True)
    seen = []
    g = sycl.command_graph(q)
    g.add(lambda h: h.ext_codeplay_enqueue_native_command(
        lambda ih: seen.append((ih.get_native_queue(), ih.ext_codeplay_has_graph()))))
    ex = g.finalize()
    assert fake.calls["cuStreamBeginCapture_v2"] == 1 and fake.calls["cuStreamEndCapture"] == 1
    stream, in_graph = seen[0]
    assert in_graph and stream != q._stream.value       # the capturing stream
    q.ext_oneapi_graph(ex).wait()
    q.ext_codeplay_enqueue_native_command(lambda ih: seen.append((ih.get_native_queue(),
                                                                  ih.ext_codeplay_has_graph()))).wait()
    assert seen[-1] == (q._stream.value, False)


def test_pinned_and_managed_memory_export_as_host_memory_when_asked(gpu):
    fake, dev, _ = gpu
    q = sycl.queue(dev)
    for kind in ("host", "shared"):
        x = getattr(sycl, f"malloc_{kind}")(8, np.int32, q)
        np.asarray(x)[:] = np.arange(8)
        a = np.from_dlpack(x, device="cpu")
        assert a.ctypes.data == x.ptr and a.tolist() == list(range(8))
    d = sycl.malloc_device(8, np.int32, q)
    with pytest.raises(sycl.exception, match="kDLCUDA device 0 memory to kDLCPU device 0"):
        d.__dlpack__(dl_device=(dlpack.CPU, 0))
    y = sycl.malloc_shared(4, np.float32, q)
    assert np.from_dlpack(y).ctypes.data == y.ptr       # NumPy takes managed memory (kDLCUDAManaged)
