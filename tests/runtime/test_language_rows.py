"""End to end: the language rows of issue 18 (points 11-15), each run through
the runtime."""
import pathlib

import numpy as np
import pytest

from minisycl import runtime as sycl
from minisycl.postlink.build import build

DISPATCH = """
class Base {
  int tag;
  virtual int f() [[indirectly_callable]] { return 1; }
};
class Derived : Base {
  int f() override [[indirectly_callable]] { return 2; }
};
kernel make(Derived* objs) { new ((Base*)&objs[0]) Derived(); new ((Base*)&objs[1]) Derived(); }
kernel calls(Base* p, int* out) [[calls_indirectly]] {
  out[0] = p->f();
  out[1] = (*p).f();
  out[2] = p[0].f();
  Base* q = p;
  out[3] = (*q).f();
  Base local;
  local.tag = 0;
  out[4] = local.f();            // a local's dynamic type is its static type
}
"""


def _program(tmp_path, name, text):
    (tmp_path / f"{name}.ksl").write_text(text)
    bundle, _ = build([str(tmp_path / f"{name}.ksl")])
    return sycl.program(bundle, name)


def test_virtual_call_however_the_object_is_reached(tmp_path):
    """Issue 18 point 15: ``p->f()``, ``(*p).f()`` and ``p[i].f()`` all dispatch
    through the vtable (the object is a Derived reached as a Base)."""
    prog = _program(tmp_path, "dispatch", DISPATCH)
    q = sycl.queue()
    objs = sycl.malloc_shared(64, np.uint8, q)
    out = sycl.malloc_shared(5, np.int32, q)
    q.single_task(prog.kernel("make"), objs).wait()
    q.single_task(prog.kernel("calls"), objs, out).wait()
    assert np.asarray(out).tolist() == [2, 2, 2, 2, 1]


PROPS = """
device_global<int[4]> arr [[host_access(read), device_image_scope]] = {1, 2, 3, 4};
device_global<int> plain;
device_global<int[2][3]> grid = {1, 2, 3, 4, 5, 6};
device_global<int> fpga [[init_mode(reset), implement_in_csr(true)]];
kernel k(int* o) {
  int* p = (int*)arr.get_multi_ptr();
  o[0] = p[2];
  o[1] = arr.has_property(host_access);
  o[2] = arr.get_property(host_access);
  o[3] = plain.has_property(host_access);
  o[4] = plain.has_property(device_image_scope) + arr.has_property(device_image_scope) * 10;
  o[5] = grid[1][0];
}
"""


def test_device_global_multi_ptr_and_properties(tmp_path):
    """Issue 18 point 12: ``get_multi_ptr()``, ``has_property``/``get_property``
    in the language and from Python, and a flat list for a 2-D array."""
    prog = _program(tmp_path, "props", PROPS)
    q = sycl.queue()
    out = sycl.malloc_shared(6, np.int32, q)
    q.single_task(prog.kernel("k"), out).wait()
    assert np.asarray(out).tolist() == [3, 1, 0, 0, 10, 4]
    arr, plain, fpga = (prog.device_global(n) for n in ("arr", "plain", "fpga"))
    assert arr.has_property("host_access") and arr.get_property("host_access") == "read"
    assert arr.has_property("device_image_scope") and arr.get_property("device_image_scope") is True
    assert not plain.has_property("host_access") and not plain.has_property("device_image_scope")
    assert fpga.get_property("init_mode") == "reset" and fpga.get_property("implement_in_csr") is True
    with pytest.raises(sycl.exception) as err:
        plain.get_property("host_access")
    assert err.value.code() == sycl.errc.invalid
    with pytest.raises(sycl.exception) as err:
        plain.has_property("colour")
    assert err.value.code() == sycl.errc.invalid


CONSTRUCTED = (pathlib.Path(__file__).parent / "data" / "constructed.ksl").read_text()


def test_device_global_constructed_at_compile_time(tmp_path):
    """Issue 18 point 11: a device_global's ``T`` holds what its constructor
    computes (evaluated by the compiler, arguments forwarded from the
    initialiser), base and member constructors included; a polymorphic ``T``
    gets its vtable pointer, so virtual calls through it dispatch, with and
    without ``device_image_scope`` and in arrays."""
    prog = _program(tmp_path, "constructed", CONSTRUCTED)
    q = sycl.queue()
    before = np.zeros(6, np.int32)      # a host copy before any kernel: the constructed value
    q.copy(prog.device_global("by_default"), before).wait()
    assert before[0] == 5 and before[2:].tolist() == [5, 6, 9, 14]
    out = sycl.malloc_shared(13, np.int32, q)
    q.single_task(prog.kernel("read"), out).wait()
    assert np.asarray(out).tolist() == [5, 14, 7, 49, 50, 4, 9, 9, 4, 7, 2, 9, 11]


def test_polymorphic_initial_value_is_relocated_not_an_address(tmp_path):
    """The bundle holds no build-machine address: the vtable pointer is a
    relocation against the vtable, and zero in the initial bytes, so two
    builds give the same bundle."""
    (tmp_path / "poly.ksl").write_text(CONSTRUCTED)
    first, _ = build([str(tmp_path / "poly.ksl")])
    second, _ = build([str(tmp_path / "poly.ksl")])
    assert first.to_bytes() == second.to_bytes()
    prog = sycl.program(first, "poly")
    square = next(i for i in prog.device_globals.values() if i["name"] == "square")
    assert square["relocations"] == [[0, "_ZTV6Square", 16]]
    assert bytes.fromhex(square["init"])[:8] == bytes(8)
    squares = next(i for i in prog.device_globals.values() if i["name"] == "squares")
    assert [r[0] for r in squares["relocations"]] == [0, squares["size"] // 2]
