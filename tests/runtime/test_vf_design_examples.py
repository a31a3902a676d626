"""The two examples of DPC++'s virtual-functions design ("Overview" and "Device
code split"), built in every split mode, with and without AOT targets, and run
on a device with fp64 and on one without (issue 30, point 12).

The design: "This example should work regardless of whether target device
supports 'fp64' aspect or not".  So on every device the constructing kernel
and the kernels calling sets without optional features run, and a kernel
calling the fp64 set runs where fp64 is and is refused
(``errc::kernel_not_supported``) where it is not; whatever the split mode,
``none`` included (``postlink/grouping.py``: ``-split=none`` still keeps
kernels with different optional features in different images).
"""
import numpy as np
import pytest

from minisycl import runtime as sycl
from minisycl.postlink.build import SPLIT_MODES, build

OVERVIEW = """
class Base {
  int tag;
  virtual int foo() [[indirectly_callable]] { return 1; }
  virtual double bar() [[indirectly_callable("set_fp64")]] { double d = 3.14; return d; }
};
kernel Constructor(Base* obj) { new (obj) Base(); }
kernel Use(Base* obj, int* out) [[calls_indirectly]] { out[0] = obj->foo(); }
kernel UseFP64(Base* obj, double* out) [[calls_indirectly("set_fp64")]] { out[0] = obj->bar(); }
"""

DEVICE_SPLIT = """
class Foo {
  int tag;
  virtual double foo() [[indirectly_callable("fp64_set")]] { double d = 3.14; return d; }
  virtual int bar() [[indirectly_callable("regular_set")]] { return 7; }
};
kernel construct(Foo* storage) { new (storage) Foo(); }
kernel call_foo(Foo* storage, double* out) [[calls_indirectly("fp64_set")]] { out[0] = storage->foo(); }
kernel call_bar(Foo* storage, int* out) [[calls_indirectly("regular_set")]] { out[0] = storage->bar(); }
"""

#: example -> (source, constructing kernel, kernel of the plain set and its result, kernel of the fp64 set)
EXAMPLES = {"overview": (OVERVIEW, "Constructor", "Use", 1, "UseFP64"),
            "device-split": (DEVICE_SPLIT, "construct", "call_bar", 7, "call_foo")}
TARGETS = {"jit": [], "aot": ["intel_gpu_tgllp", "intel_gpu_pvc"]}


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    cache = {}

    def get(example, split, targets):
        if (example, split, targets) not in cache:
            path = tmp_path_factory.mktemp("vf") / f"{example}.ksl"
            path.write_text(EXAMPLES[example][0])
            bundle, _ = build([str(path)], split=split, targets=TARGETS[targets])
            cache[example, split, targets] = sycl.program(bundle, example)
        return cache[example, split, targets]
    return get


@pytest.mark.parametrize("device", ["default", "intel_gpu_pvc", "intel_gpu_tgllp"])
@pytest.mark.parametrize("targets", sorted(TARGETS))
@pytest.mark.parametrize("split", SPLIT_MODES)
@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_design_example_runs_with_and_without_fp64(programs, example, split, targets, device):
    prog = programs(example, split, targets)
    _, construct, plain, value, fp64 = EXAMPLES[example]
    q = sycl.queue() if device == "default" else sycl.queue(device)
    obj = sycl.malloc_shared(16, np.uint8, q)
    out = sycl.malloc_shared(1, np.int32, q)
    dout = sycl.malloc_shared(1, np.float64, q)
    q.single_task(prog.kernel(construct), obj).wait()
    q.single_task(prog.kernel(plain), obj, out).wait()
    assert out[0] == value
    if q.device.has(sycl.aspect.fp64):
        q.single_task(prog.kernel(fp64), obj, dout).wait()
        assert dout[0] == 3.14
    else:
        with pytest.raises(sycl.exception) as err:
            q.single_task(prog.kernel(fp64), obj, dout).wait()
        assert err.value.code() == sycl.errc.kernel_not_supported
        assert str(err.value) == "Required aspect fp64 is not supported on the device"
        q.single_task(prog.kernel(plain), obj, out).wait()      # the queue goes on
        assert out[0] == value
