"""Device selection by SYCL device type and ONEAPI_DEVICE_SELECTOR-style terms, and
``device.get_info`` (issue 29 point 6): on the CPU devices, and on a CUDA device
through the stand-in driver (``fake_cuda``)."""
import string
import sys

import pytest
from hypothesis import given, settings, strategies as st

from minisycl import runtime as sycl
from minisycl.runtime.device import CPU_MAX_WORK_GROUP_SIZE, info, select_devices

import fake_cuda

device_mod = sys.modules["minisycl.runtime.device"]     # (``runtime.device`` is the class)


def names(devices):
    return [d.name for d in devices]


@pytest.fixture
def cpu_devices_only(monkeypatch):
    """The devices of this runtime without GPU hardware (on a machine with a GPU too)."""
    monkeypatch.setattr(device_mod, "_HARDWARE", [])
    device_mod._scan.cache_clear()
    yield
    device_mod._scan.cache_clear()


@pytest.mark.parametrize("spec, expected", [
    ("cpu", ["minisycl_cpu"]), ("gpu", ["intel_gpu_pvc", "intel_gpu_tgllp"]), ("gpu:0", ["intel_gpu_pvc"]),
    ("gpu:1", ["intel_gpu_tgllp"]), ("gpu:2", []), ("GPU", ["intel_gpu_pvc", "intel_gpu_tgllp"]),
    ("cpu:0", ["minisycl_cpu"]), ("accelerator", []), ("*:gpu", ["intel_gpu_pvc", "intel_gpu_tgllp"]),
    ("*:cpu", ["minisycl_cpu"]), ("*:*", ["minisycl_cpu", "intel_gpu_pvc", "intel_gpu_tgllp"]),
    ("native_cpu:1", ["intel_gpu_pvc"]), ("native_cpu:gpu", ["intel_gpu_pvc", "intel_gpu_tgllp"]),
    ("cuda:0", []), ("cuda:*", []), ("level_zero:gpu", []), ("intel_gpu_tgllp", ["intel_gpu_tgllp"]),
    (" gpu:1 ", ["intel_gpu_tgllp"]), ("nope", []),
])
def test_selection_on_the_cpu_devices(spec, expected, cpu_devices_only):
    assert names(select_devices(spec)) == expected


@pytest.mark.parametrize("spec", ["gpu:x", "foo:0", "gpu:1:2", ":0", "cuda:", "gpu:-1", "cuda:tpu",
                                  "gpu:99999999999999"])
def test_malformed_selectors_are_invalid(spec):
    with pytest.raises(sycl.exception) as err:
        select_devices(spec)
    assert err.value.code() == sycl.errc.invalid
    assert spec.strip() in str(err.value)


def test_environment_selects_by_type(monkeypatch, cpu_devices_only):
    monkeypatch.setenv("MINISYCL_DEVICE", "gpu")
    assert sycl.queue().device.name == "intel_gpu_pvc"
    monkeypatch.setenv("MINISYCL_DEVICE", "gpu:1")
    assert sycl.queue().device.name == "intel_gpu_tgllp"
    monkeypatch.setenv("MINISYCL_DEVICE", "cpu")
    assert sycl.queue().device.name == sycl.HOST_CPU
    monkeypatch.setenv("MINISYCL_DEVICE", "*:gpu")
    assert sycl.default_device().name == "intel_gpu_pvc"
    monkeypatch.setenv("MINISYCL_DEVICE", "gpu:7")
    with pytest.raises(sycl.exception) as err:
        sycl.queue()
    assert err.value.code() == sycl.errc.runtime and "selects no device" in str(err.value)
    assert sycl.queue("gpu:1").device.name == "intel_gpu_tgllp"       # an explicit selector wins


@given(st.text(alphabet=string.ascii_letters + string.digits + ":*_ .-@", max_size=16))
@settings(max_examples=300, deadline=None)
def test_any_selector_selects_or_raises_a_sycl_exception(spec):
    """Every string a user can put in MINISYCL_DEVICE gives devices or ``sycl.exception``."""
    try:
        found = select_devices(spec)
    except sycl.exception as err:
        assert err.code() == sycl.errc.invalid
        return
    assert all(isinstance(d, sycl.device) for d in found)
    try:
        assert sycl.default_device(spec) in (found[:1] or [None])
    except sycl.exception as err:
        assert not found and err.code() == sycl.errc.runtime


@pytest.fixture
def with_fake_gpu(monkeypatch):
    fake, gpu = fake_cuda.install(monkeypatch)
    monkeypatch.setattr(device_mod, "_HARDWARE", [lambda: (gpu,)])
    device_mod._scan.cache_clear()
    yield fake, gpu
    device_mod._scan.cache_clear()


def test_selection_prefers_the_real_gpu(with_fake_gpu):
    _, gpu = with_fake_gpu
    assert select_devices("gpu")[0] is gpu
    assert names(select_devices("gpu:1")) == ["intel_gpu_pvc"]
    assert select_devices("cuda:0") == [gpu] and select_devices("cuda:gpu") == [gpu]
    assert select_devices("cuda:1") == [] and select_devices("cuda:cpu") == []
    assert select_devices("*:gpu")[0] is gpu
    assert names(select_devices("native_cpu:gpu")) == ["intel_gpu_pvc", "intel_gpu_tgllp"]
    assert select_devices(gpu.name) == [gpu]


def test_cpu_device_info():
    dev = sycl.default_device(sycl.HOST_CPU)
    got = {p: dev.get_info(p) for p in info.DEVICE}
    assert got["name"] and isinstance(got["name"], str)
    assert got["vendor"] == dev.vendor
    assert got["driver_version"].startswith("minisycl ") and "LLVM" in got["driver_version"]
    assert got["device_type"] == "cpu"
    assert got["max_work_group_size"] == CPU_MAX_WORK_GROUP_SIZE
    from minisycl.runtime.native import WORKERS
    assert got["max_compute_units"] == WORKERS >= 1
    assert got["global_mem_size"] > 1 << 20
    assert got["local_mem_size"] == dev.local_mem_size == 65536
    assert got["sub_group_sizes"] == list(dev.config.sub_group_sizes)
    assert dev.get_info(sycl.info.device.name) == got["name"]
    pvc = sycl.default_device("intel_gpu_pvc")
    assert pvc.get_info("name") == "intel_gpu_pvc" and pvc.get_info("device_type") == "gpu"
    assert pvc.get_info("sub_group_sizes") == [16, 32]


@pytest.mark.parametrize("param", ["nope", 3, None, "get_info", "_info_name"])
def test_unknown_info_is_invalid(param):
    with pytest.raises(sycl.exception) as err:
        sycl.default_device().get_info(param)
    assert err.value.code() == sycl.errc.invalid


def test_cuda_device_info_from_the_driver(with_fake_gpu):
    fake, gpu = with_fake_gpu
    got = {p: gpu.get_info(p) for p in info.DEVICE}
    assert got == {"name": "Fake H100", "vendor": "NVIDIA Corporation", "driver_version": "12.8",
                   "device_type": "gpu", "max_work_group_size": 1024, "max_compute_units": 132,
                   "global_mem_size": 80 << 30, "local_mem_size": gpu.local_mem_size, "sub_group_sizes": [32]}
    assert fake.calls["cuDriverGetVersion"] == 1


def test_a_work_group_above_the_cpu_maximum_is_refused(tmp_path):
    import numpy as np
    src = tmp_path / "wg.ksl"
    src.write_text("kernel k(nd_item<1> it, float* x) {\n  float a = x[it.get_global_id(0)];\n"
                   "  group_barrier(it);\n  x[it.get_global_id(0)] = a + 1.0f;\n}\n")
    prog = sycl.build_program([str(src)])
    q = sycl.queue(sycl.HOST_CPU)
    n = 2 * CPU_MAX_WORK_GROUP_SIZE
    x = sycl.malloc_shared(n, np.float32, q)
    np.asarray(x)[:] = 1
    with pytest.raises(sycl.exception) as err:
        q.parallel_for(prog.kernel("k"), sycl.nd_range(n, n), x).wait()
    assert err.value.code() == sycl.errc.nd_range and "max_work_group_size" in str(err.value)
    assert np.asarray(x)[0] == 1                    # nothing ran
    q.parallel_for(prog.kernel("k"), sycl.nd_range(n, CPU_MAX_WORK_GROUP_SIZE), x).wait()
    assert np.asarray(x).min() == 2
