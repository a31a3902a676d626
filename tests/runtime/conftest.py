"""Every runtime test runs on every device present (issue 31 point 1).

The tests of this folder are parametrised over the devices of this machine:
the host CPU always, and each NVIDIA GPU when the CUDA driver offers one.  For
each device, ``MINISYCL_DEVICE`` names it for the module's tests, so
``sycl.queue()`` and ``sycl.default_device()`` are that device, whatever a test
builds on them (module-scoped fixtures included: the parameter is module-scoped
and autouse, so it is set before any of them).  The other CPU devices of the
device configs (``intel_gpu_pvc``, ``intel_gpu_tgllp``) run the same code as the
host CPU; tests that are about them name them.

A test, or a module through ``pytestmark``, that cannot apply to a device says
why: ``@pytest.mark.cpu_only("a host read of malloc_device memory")`` skips it
on every device but the host CPU, with that reason.  On a machine without a GPU
(CI) nothing is skipped by this, and each test runs once, as
``test_x[minisycl_cpu]``.  ``python -m pytest tests/runtime`` on a machine with
a GPU runs the whole suite on both.
"""
import pytest

from minisycl import runtime as sycl
from minisycl.runtime import host_access


def _device_names() -> list[str]:
    from minisycl.runtime.cuda.device import cuda_devices
    return [sycl.HOST_CPU] + [d.name for d in cuda_devices()]


def pytest_generate_tests(metafunc):
    if "test_device" in metafunc.fixturenames:
        metafunc.parametrize("test_device", _device_names(), indirect=True, scope="module")


@pytest.fixture(scope="module", autouse=True)
def test_device(request):
    """The device the module's tests run on (``MINISYCL_DEVICE`` names it); the
    host CPU for what pytest does not parametrise (``unittest``-style classes)."""
    name = getattr(request, "param", sycl.HOST_CPU)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MINISYCL_DEVICE", name)
        yield sycl.default_device(name)


@pytest.fixture(autouse=True)
def _commands_of_earlier_tests_are_forgotten():
    """Each test starts with no command waiting to be waited for (``host_access``)."""
    host_access.forget()


@pytest.fixture(autouse=True)
def _skip_where_it_cannot_apply(request, test_device):
    marker = request.node.get_closest_marker("cpu_only")
    if marker is not None and test_device.name != sycl.HOST_CPU:
        pytest.skip(f"not on {test_device.name}: {marker.args[0]}")
