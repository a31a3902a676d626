"""GPU tests (issue 20): every test here is marked ``gpu`` and is skipped when
the CUDA driver offers no GPU.  Run them with ``python -m pytest tests/gpu -m gpu``.

``dev`` parametrises a test over the host CPU and the first NVIDIA GPU, so the
same program is checked to give the same results on both."""
import pytest

from minisycl import runtime as sycl
from minisycl.runtime.cuda import driver
from minisycl.runtime.cuda.device import cuda_devices


def gpus():
    return cuda_devices()


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason=f"no NVIDIA GPU ({driver.why_unavailable() or 'the driver lists none'})")
    have = bool(gpus())
    for item in items:
        if "tests/gpu/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.gpu)
            if not have:
                item.add_marker(skip)


@pytest.fixture
def gpu():
    found = gpus()
    if not found:
        pytest.skip("no NVIDIA GPU")
    return found[0]


@pytest.fixture(params=["cpu", "gpu"])
def dev(request):
    if request.param == "cpu":
        return sycl.default_device(sycl.HOST_CPU)
    found = gpus()
    if not found:
        pytest.skip("no NVIDIA GPU")
    return found[0]
