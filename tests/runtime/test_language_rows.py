"""End to end: the language rows of issue 18 (points 11-15), each run through
the runtime."""
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
    q.single_task(prog.kernel("make"), objs)
    q.single_task(prog.kernel("calls"), objs, out)
    assert np.asarray(out).tolist() == [2, 2, 2, 2, 1]
