"""The device back-end interface (issue 29 point 4): ``runtime/backend.py``
defines it, the CPU JIT and CUDA implement all of it, every device reaches its
back end through ``device.impl``, and nothing in the runtime probes an object
for a back end's capability with ``getattr``/``hasattr``."""
import ast
import inspect
import os

import pytest

from minisycl import runtime as sycl
from minisycl.runtime import backend
from minisycl.runtime.device import BACKENDS
from minisycl.runtime.cuda.backend import CudaBackend
from minisycl.runtime.host_backend import HostBackend

import fake_cuda

pytestmark = pytest.mark.cpu_only("about the interface itself, not a device")

RUNTIME = os.path.dirname(inspect.getfile(backend))


@pytest.mark.parametrize("impl", [HostBackend, CudaBackend])
def test_each_back_end_implements_the_whole_interface(impl):
    assert issubclass(impl, backend.Backend) and not inspect.isabstract(impl)
    assert impl.name in BACKENDS


def test_every_device_has_its_back_end(monkeypatch):
    for d in sycl.get_devices():
        assert isinstance(d.impl, backend.Backend) and d.impl.name == d.backend
        assert issubclass(d.impl.queue_class, sycl.queue)
    _, gpu = fake_cuda.install(monkeypatch)
    assert isinstance(gpu.impl, CudaBackend) and gpu.impl.name == gpu.backend == "cuda"
    assert type(sycl.queue(gpu)) is gpu.impl.queue_class


def test_the_queue_hooks_exist_on_the_base_queue():
    for name in backend.QUEUE_HOOKS:
        assert callable(getattr(sycl.queue, name)), name


#: what the interface names: probing an object for one of these is what the interface replaced
CAPABILITIES = {n for n, _ in inspect.getmembers(backend.Backend) if not n.startswith("__")} | set(backend.QUEUE_HOOKS) \
    | {"_release", "host_accessible", "impl"}


def _probes(path):
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") \
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                and node.args[1].value in CAPABILITIES:
            yield f"{os.path.relpath(path, RUNTIME)}:{node.lineno}: {node.func.id}(..., {node.args[1].value!r})"


def test_no_module_probes_for_a_back_end_capability():
    found = []
    for folder, _, files in os.walk(RUNTIME):
        found += [p for f in sorted(files) if f.endswith(".py") for p in _probes(os.path.join(folder, f))]
    assert found == []


def test_the_probe_finder_finds_a_probe(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(d):\n    return getattr(d, 'queue_class', None)\n")
    assert len(list(_probes(str(bad)))) == 1
