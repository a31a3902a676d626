"""Zero-copy interop with torch and CuPy on an NVIDIA GPU (issue 33 point 1).

Each test skips without its library; the coordinator runs them on the GPU
machine: ``python -m pytest tests/gpu/test_interop_gpu.py -m gpu``."""
import gc

import numpy as np
import pytest

from minisycl import runtime as sycl
from minisycl.runtime import dlpack

@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    """``scale`` (x *= a) and ``add_into`` (dst += src)."""
    path = tmp_path_factory.mktemp("interop_gpu") / "k.ksl"
    path.write_text("kernel scale(id<1> i, float* x, float a) { x[i] = x[i] * a; }\n"
                    "kernel add_into(id<1> i, float* dst, float* src) { dst[i] = dst[i] + src[i]; }\n")
    return sycl.build_program([str(path)])


def raises(code, fn, *words):
    """``fn()`` raises ``sycl.exception`` of ``errc::code`` whose message holds ``words``."""
    with pytest.raises(sycl.exception) as err:
        fn()
    text = str(err.value)
    assert err.value.code() == getattr(sycl.errc, code) and all(w in text for w in words), text


def test_torch_tensors_are_kernel_arguments_without_a_copy(gpu, prog):
    torch = pytest.importorskip("torch")
    q = sycl.queue(gpu, in_order=True)
    t = torch.arange(1024, dtype=torch.float32, device=f"cuda:{gpu.ordinal}")
    before = t.data_ptr()
    q.parallel_for(prog.kernel("scale"), 1024, t, 3.0).wait()
    assert t.data_ptr() == before
    assert torch.equal(t.cpu(), torch.arange(1024, dtype=torch.float32) * 3)
    y = sycl.from_dlpack(t, q)
    assert y.ptr == t.data_ptr() and y.kind == "device"
    raises("invalid", lambda: q.parallel_for(prog.kernel("scale"), 4, torch.zeros(4, dtype=torch.float32), 2.0),
           "kDLCPU", gpu.name)
    raises("invalid", lambda: sycl.from_dlpack(torch.zeros(4, dtype=torch.bfloat16, device=f"cuda:{gpu.ordinal}"),
                                               q), "kDLBfloat")
    raises("invalid", lambda: q.parallel_for(prog.kernel("scale"), 4, t.view(32, 32)[:, 0], 2.0), "contiguous")
    cpu_q = sycl.queue(sycl.HOST_CPU)
    raises("invalid", lambda: sycl.from_dlpack(t, cpu_q), f"kDLCUDA device {gpu.ordinal}")


def test_torch_takes_our_memory_and_it_outlives_free(gpu):
    torch = pytest.importorskip("torch")
    q = sycl.queue(gpu, in_order=True)
    x = sycl.malloc_device(256, np.float32, q)
    q.fill(x, 2.5, 256).wait()
    before = dlpack.exports_alive()
    t = torch.from_dlpack(x)
    assert t.device.type == "cuda" and t.data_ptr() == x.ptr
    sycl.free(x)                                   # torch still holds it: freed at its release
    assert float(t.sum()) == 2.5 * 256
    del t
    gc.collect()
    assert dlpack.exports_alive() == before


def test_torch_work_ordered_by_a_native_command_and_in_a_graph(gpu, prog):
    torch = pytest.importorskip("torch")
    q = sycl.queue(gpu, in_order=True)
    n = 1 << 20
    x = sycl.malloc_device(n, np.float32, q)
    q.fill(x, 1.0, n)
    t = torch.from_dlpack(x)

    def double_in_torch(ih):
        stream = torch.cuda.ExternalStream(ih.get_native_queue(), device=f"cuda:{gpu.ordinal}")
        with torch.cuda.stream(stream):
            t.mul_(2.0)
    q.ext_codeplay_enqueue_native_command(double_in_torch)
    q.parallel_for(prog.kernel("scale"), n, x, 3.0).wait()     # after torch's work, on the same stream
    assert float(t[0]) == 6.0 and float(t[-1]) == 6.0
    g = sycl.command_graph(q)
    a = g.add(lambda h: h.ext_codeplay_enqueue_native_command(double_in_torch))
    g.add(lambda h: h.parallel_for(prog.kernel("scale"), n, x, 0.5), depends_on=[a])
    ex = g.finalize()
    q.ext_oneapi_graph(ex).wait()
    assert float(t[0]) == 6.0
    q.ext_oneapi_graph(ex).wait()
    assert float(t[-1]) == 6.0


def test_cupy_both_ways(gpu, prog):
    cupy = pytest.importorskip("cupy")
    q = sycl.queue(gpu, in_order=True)
    with cupy.cuda.Device(gpu.ordinal):
        a = cupy.arange(512, dtype=cupy.float32)
        q.parallel_for(prog.kernel("scale"), 512, a, 2.0).wait()            # through DLPack
        assert bool((a == cupy.arange(512, dtype=cupy.float32) * 2).all())
        x = sycl.malloc_device(512, np.float32, q)
        q.fill(x, 4.0, 512)
        via_cai = cupy.asarray(x)                                            # __cuda_array_interface__
        via_dlpack = cupy.from_dlpack(x)
        assert via_cai.data.ptr == x.ptr == via_dlpack.data.ptr
        assert float(via_cai.sum()) == 4.0 * 512 == float(via_dlpack.sum())

        class OnlyCai:
            __cuda_array_interface__ = a.__cuda_array_interface__
        y = sycl.from_dlpack(OnlyCai(), q)
        assert y.ptr == a.data.ptr and y.count == 512
        q.parallel_for(prog.kernel("add_into"), 512, x, OnlyCai()).wait()
        assert float(cupy.asarray(x)[3]) == 4.0 + 6.0


def test_another_gpus_memory_is_refused(prog):
    torch = pytest.importorskip("torch")
    from minisycl.runtime.cuda.device import cuda_devices
    gpus = cuda_devices()
    if len(gpus) < 2:
        pytest.skip("needs two GPUs")
    q = sycl.queue(gpus[0])
    t = torch.ones(4, device=f"cuda:{gpus[1].ordinal}")
    raises("invalid", lambda: q.parallel_for(prog.kernel("scale"), 4, t, 2.0), f"kDLCUDA device {gpus[1].ordinal}",
           gpus[0].name)
