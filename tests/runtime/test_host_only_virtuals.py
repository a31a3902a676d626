"""Virtual methods without ``indirectly_callable`` are host code (issue 18 point 13):
built from source, run through the runtime.  Their device vtable slots hold a
stub that stops the kernel with ``errc::runtime`` naming the method; what their
bodies use (``print``, ``double``) is no device code and no kernel's requirement."""
import numpy as np
import pytest

from minisycl import runtime as sycl
from minisycl.passes.ir import parse_bitcode
from minisycl.postlink.build import build, run_stages
from minisycl.postlink.propertyset import u32_values

SOURCE = """
class Tally {
  int n;
  virtual int bump() [[indirectly_callable]] { n = n + 1; return n; }
  // host code: print and double are fine, and no kernel needs fp64 for them
  virtual double report() { print("tally", n); double d = n; return d / 2.0; }
};
class Other {
  int n;
  virtual int first() { print("only on the host"); return -1; }
};

kernel make(Tally* t) { new (t) Tally(); t->n = 40; }
kernel bump(Tally* t, int* out) [[calls_indirectly]] { out[0] = t->bump(); out[1] = out[0] + 1; }

// Slot 0 of an Other is its host-only first(): the virtual call reaches the stub.
kernel make_other(Other* o) { new (o) Other(); }
kernel confused(Other* o, int* out) [[calls_indirectly]] { Tally* t = (Tally*)o; out[0] = t->bump(); out[1] = 7; }
"""

MESSAGE = ("kernel 'confused' called virtual method 'Other::first', which is not indirectly_callable "
           "and exists on the host only")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    path = tmp_path_factory.mktemp("host_only_virtuals") / "hov.ksl"
    path.write_text(SOURCE)
    b, warnings = build([str(path)], targets=["intel_gpu_pvc"])
    assert warnings == []
    return b


@pytest.fixture(scope="module")
def prog(bundle):
    return sycl.program(bundle, "hov")


@pytest.mark.parametrize("dev", ["minisycl_cpu", "intel_gpu_pvc"])
def test_indirectly_callable_method_works_as_before(prog, dev):
    q = sycl.queue(dev)
    t, out = sycl.malloc_shared(16, np.uint8, q), sycl.malloc_shared(2, np.int32, q)
    q.single_task(prog.kernel("make"), t).wait()
    q.single_task(prog.kernel("bump"), t, out).wait()
    q.wait()
    assert list(np.asarray(out)) == [41, 42]


@pytest.mark.parametrize("dev", ["minisycl_cpu", "intel_gpu_pvc"])   # JIT image, then an AOT one
def test_calling_the_host_only_method_raises_runtime_naming_it(prog, dev):
    q = sycl.queue(dev)
    o, out = sycl.malloc_shared(16, np.uint8, q), sycl.malloc_shared(2, np.int32, q)
    q.single_task(prog.kernel("make_other"), o).wait()
    with pytest.raises(sycl.exception) as err:
        q.single_task(prog.kernel("confused"), o, out).wait()
        q.wait()
    assert err.value.code() == sycl.errc.runtime
    assert str(err.value) == MESSAGE
    assert np.asarray(out)[0] == 0          # the stub's result, never the host body's -1
    # the queue is still usable, and the message is not raised again
    t = sycl.malloc_shared(16, np.uint8, q)
    q.single_task(prog.kernel("make"), t).wait()
    q.single_task(prog.kernel("bump"), t, out).wait()
    q.wait()
    assert np.asarray(out)[0] == 41


def test_double_in_host_only_method_is_no_kernel_requirement(bundle):
    for im in bundle.images:
        raw = im.properties.get("SYCL/device requirements", "aspects")
        assert raw is not None, im.name
        assert u32_values(raw) == [], f"{im.name} ({im.entry_points}) needs aspects {u32_values(raw)}"


def test_constructing_kernel_runs_on_a_device_without_fp64(prog):
    q = sycl.queue("intel_gpu_tgllp")
    assert not q.device.has(sycl.aspect.fp64)
    t, out = sycl.malloc_shared(16, np.uint8, q), sycl.malloc_shared(2, np.int32, q)
    q.single_task(prog.kernel("make"), t).wait()
    q.single_task(prog.kernel("bump"), t, out).wait()
    q.wait()
    assert list(np.asarray(out)) == [41, 42]


def test_device_images_hold_no_host_only_body(bundle):
    for im in bundle.images:
        text = str(parse_bitcode(im.ir))
        assert "define linkonce_odr spir_func double @_ZN5Tally6reportEv" not in text
        assert "@_ZN5Other5firstEv" not in text and "printf" not in text
        if "make" in im.entry_points:
            assert "@__minisycl_host_only_virtual._ZN5Tally6reportEv" in text



def test_stub_reports_through_the_flag_in_ptx(tmp_path):
    """The GPU path (lower-to-nvptx, then LLVM's NVPTX back end) compiles an
    image holding a stub: it records its message's address in the module's
    visible flag with an atomic compare-and-swap (no ``trap``, which would lose
    the CUDA context)."""
    from minisycl.passes.ir import emit_ptx
    from minisycl.passes.lower_to_nvptx import lower_to_nvptx
    from minisycl.postlink.split import split_module
    path = tmp_path / "ptx.ksl"
    path.write_text("class U { int v; virtual double f() { double d = v; return d * 0.5; } };\n"
                    "kernel make(U* p) { new (p) U(); p->v = 3; }\n")
    products, _ = run_stages([str(path)], stop_after="opt")
    (image,) = split_module(products["device"], mode="none")
    lower_to_nvptx(image.module)
    ptx = emit_ptx([image.module.text()], "sm_80", "+ptx75", keep=["make"])
    assert ".visible .global .align 8 .u64 __minisycl_assert_message" in ptx
    stub = ptx[ptx.index("__minisycl_host_only_virtual_$__ZN1U1fEv(\n"):]
    assert "global.cas.b64" in stub[:stub.index("}")] and "[__minisycl_assert_message]" in stub[:stub.index("}")]
    assert "trap;" not in ptx
