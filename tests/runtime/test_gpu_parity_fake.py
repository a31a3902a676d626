"""Issue 31's GPU-only failures, reproduced without a GPU: the stand-in driver
``fake_cuda.py`` in its lazy mode (streams run their work only when
synchronised, ``cuMemcpy`` lands on the legacy default stream, fresh memory
holds garbage), as the real driver behaves.  Each test failed before its fix;
the same programs run on every device in the tests it names."""
import numpy as np
import pytest

from minisycl import runtime as sycl

import fake_cuda

pytestmark = fake_cuda.ONLY_ON_CPU

KSL = """
device_global<float> ro [[host_access(read)]] = 1.5f;
device_global<int[4]> arr = {1, 2, 3, 4};
kernel fillv(id<1> i, int* x, int v) { x[i] = v; }
kernel dbl(id<1> i, int* x) { x[i] = x[i] * 2; }
"""
N = 4


def _fillv(n, _y, _z, x, v):
    a = fake_cuda.ints(x, n)
    for i in range(n):
        a[i] = v


def _dbl(n, _y, _z, x):
    a = fake_cuda.ints(x, n)
    for i in range(n):
        a[i] *= 2


@pytest.fixture
def gpu(monkeypatch, tmp_path):
    fake, dev = fake_cuda.install(monkeypatch, lazy=True)
    fake.kernels.update({"fillv": (5, _fillv), "dbl": (4, _dbl)})
    (tmp_path / "p.ksl").write_text(KSL)
    return fake, dev, sycl.build_program(str(tmp_path / "p.ksl"))


def ints(q, value=0):
    a = sycl.malloc_shared(N, np.int32, q)
    np.asarray(a)[:] = value
    return a


# -- (a) device_global initial values (test_device_global.py::test_errors, ...) --------------

def test_a_device_global_read_before_any_kernel_has_its_initial_value(gpu):
    """The initial value is written with ``cuMemcpy`` (the legacy stream); the
    read is on the queue's non-blocking stream: ``driver.copy_now`` lands it first."""
    _, dev, prog = gpu
    q = sycl.queue(dev, context=sycl.context(dev))
    v = np.zeros(1, np.float32)
    q.copy(prog.device_global("ro"), v).wait()
    assert v[0] == 1.5
    host = np.zeros(4, np.int32)
    q.copy(np.array([70, 80], np.int32), prog.device_global("arr"), 2, start_index=2).wait()
    q.copy(prog.device_global("arr"), host).wait()
    assert host.tolist() == [1, 2, 70, 80]          # the late initial value did not overwrite the copy


def test_the_stand_in_driver_lands_cuMemcpy_only_on_the_legacy_stream(gpu):
    """What the test above relies on: the stand-in's model of ``cuMemcpy``."""
    fake, dev, _ = gpu
    from minisycl.runtime.cuda import driver
    q = sycl.queue(dev)
    d = sycl.malloc_device(1, np.int32, q)
    word = np.array([7], np.int32)
    driver.call("cuMemcpy", d.ptr, word.ctypes.data, 4)
    out = np.zeros(1, np.int32)
    q.memcpy(out, d, 4).wait()
    assert out[0] != 7                              # the queue's stream does not wait for it
    driver.copy_now(d.ptr, word.ctypes.data, 4, "a test")
    q.memcpy(out, d, 4).wait()
    assert out[0] == 7
