"""NVIDIA GPU discovery (issue 20 point 1) where there is no GPU: nothing
changes and nothing fails, and the config choice by compute capability."""
import warnings

import pytest

from minisycl.runtime.cuda import device as cuda_device_mod, driver


@pytest.fixture
def fresh_driver(monkeypatch):
    """The driver module as if never loaded; discovery's cache emptied."""
    monkeypatch.setattr(driver, "_tried", False)
    monkeypatch.setattr(driver, "_lib", None)
    monkeypatch.setattr(driver, "_why", None)
    monkeypatch.setattr(driver, "_functions", {})
    cuda_device_mod.cuda_devices.cache_clear()
    yield
    cuda_device_mod.cuda_devices.cache_clear()


def test_no_library_means_no_gpu_and_no_warning(fresh_driver, monkeypatch):
    monkeypatch.setattr(driver, "_open", lambda: None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cuda_device_mod.cuda_devices() == ()
    assert driver.why_unavailable() == "libcuda.so.1 not found"


class _NoDeviceDriver:
    """A libcuda whose cuInit says CUDA_ERROR_NO_DEVICE (100)."""

    def __getattr__(self, name):
        class Fn:
            def __call__(self, *args):
                return 100 if name in ("cuInit", "cuGetErrorName", "cuGetErrorString") else 0
        fn = Fn()
        setattr(self, name, fn)
        return fn


def test_cuinit_failure_means_no_gpu(fresh_driver, monkeypatch):
    monkeypatch.setattr(driver, "_open", lambda: _NoDeviceDriver())
    assert cuda_device_mod.cuda_devices() == ()
    assert driver.why_unavailable() == "cuInit failed: CUresult 100"


def test_calls_without_a_driver_raise_a_sycl_exception(fresh_driver, monkeypatch):
    from minisycl import runtime as sycl
    monkeypatch.setattr(driver, "_open", lambda: None)
    with pytest.raises(sycl.exception) as info:
        driver.call("cuCtxSynchronize")
    assert info.value.code() == sycl.errc.runtime
    assert "libcuda.so.1 not found" in str(info.value)


def test_runtime_devices_unchanged_without_a_gpu():
    from minisycl import runtime as sycl
    names = [d.name for d in sycl.get_devices()]
    if not cuda_device_mod.cuda_devices():
        assert not any(n.startswith("nvidia_gpu") for n in names)
    assert names[0] == sycl.HOST_CPU


@pytest.mark.parametrize("cc, expected", [((9, 0), "nvidia_gpu_sm_90"), ((8, 0), "nvidia_gpu_sm_80"),
                                          ((8, 9), "nvidia_gpu_sm_89"), ((10, 0), "nvidia_gpu_sm_90"),
                                          ((7, 1), "nvidia_gpu_sm_70"), ((3, 5), None)])
def test_config_by_compute_capability(cc, expected):
    assert cuda_device_mod.config_for(*cc) == expected
