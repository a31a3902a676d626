"""Compiled code really computes: kernels, host functions and virtual dispatch, run on LLVM's JIT."""
import ctypes

import llvmlite.binding as llvm
import numpy as np
import pytest

from minisycl.frontend import compile_source

SRC = r"""
class Shape {
  float scale;
  virtual float area() [[indirectly_callable]] { return 0.0f; }
};
class Square : Shape {
  float side;
  float area() override [[indirectly_callable]] { return side * side * scale; }
};
class Circle : Shape {
  float r;
  Circle(float radius) { r = radius; scale = 1.0f; }
  float area() override [[indirectly_callable]] { return 3.0f * r * r * scale; }
};

kernel make(Shape* a, Shape* b, float side) {
  Square* sq = new (a) Square();
  sq->side = side;
  sq->scale = 2.0f;
  new (b) Circle(side);
}
kernel areas(Shape* a, Shape* b, float* out) [[calls_indirectly]] {
  Shape* shapes[2] = {a, b};
  for (int i = 0; i < 2; i++) out[i] = shapes[i]->area();
}

kernel saxpy(id<1> i, float a, float* x, float* y) { y[i] = a * x[i] + y[i]; }

kernel c_semantics(int* out) {
  char c = 127;
  c++;                       // wraps to -128
  out[0] = c;
  uint u = 1;
  out[1] = -1 < u;           // 0: -1 converts to a large unsigned
  out[2] = 7 / -2;           // -3: truncation toward zero
  out[3] = -7 % 3;           // -1
  int n = 0;
  bool t = (n != 0) && (10 / n > 1);   // short-circuit: no division by zero
  out[4] = t ? 1 : 2;
  out[5] = (int)sizeof(Square);
}

struct Pair { int a; int b[2]; };
Pair pair(int x) { Pair p; p.a = x; p.b[1] = x * 3; return p; }
int members_of_values(int x) { return pair(x).a + pair(x + 1).b[1]; }   // fields of returned objects

int local_const_array() {   // a const local is a constant expression, as in C++
  const int n = 2 + 1;
  int a[n * 2];
  for (int i = 0; i < n * 2; i++) a[i] = i;
  return a[n * 2 - 1] * 100 + (int)sizeof(a);
}

int fib(int n) { int a = 0; int b = 1; for (int i = 0; i < n; i++) { int t = a + b; a = b; b = t; } return a; }

float clamp01(float x) {
  float r = x;
  if_device { r = min(max(x, 0.0f), 1.0f); }
  otherwise { r = x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
  return r;
}
"""


@pytest.fixture(scope="module")
def engine():
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    result = compile_source(SRC, "jit.ksl")
    mod = llvm.parse_assembly(result.ir)
    target = llvm.Target.from_default_triple()
    tm = target.create_target_machine()
    mod.triple = llvm.get_default_triple()
    mod.data_layout = str(tm.target_data)
    mod.verify()
    ee = llvm.create_mcjit_compiler(mod, tm)
    ee.finalize_object()
    ee._keep = mod
    return ee


def fn(ee, name, restype, *argtypes):
    return ctypes.CFUNCTYPE(restype, *argtypes)(ee.get_function_address(name))


def test_virtual_dispatch_through_vtables(engine):
    a = np.zeros(32, dtype=np.uint8)
    b = np.zeros(32, dtype=np.uint8)
    out = np.zeros(2, dtype=np.float32)
    P = ctypes.c_void_p
    fn(engine, "make", None, P, P, ctypes.c_float)(a.ctypes.data, b.ctypes.data, 3.0)
    fn(engine, "areas", None, P, P, P)(a.ctypes.data, b.ctypes.data, out.ctypes.data)
    assert out.tolist() == [18.0, 27.0]     # 3*3*2 and 3*3*3*1


class Id1(ctypes.Structure):
    _fields_ = [("i", ctypes.c_int64)]


def test_parallel_for_kernel_body(engine):
    x = np.arange(8, dtype=np.float32)
    y = np.ones(8, dtype=np.float32)
    k = fn(engine, "saxpy", None, Id1, ctypes.c_float, ctypes.c_void_p, ctypes.c_void_p)
    for i in range(8):
        k(Id1(i), 2.0, x.ctypes.data, y.ctypes.data)
    assert y.tolist() == (2 * np.arange(8) + 1).tolist()


def test_c_semantics(engine):
    out = np.zeros(6, dtype=np.int32)
    fn(engine, "c_semantics", None, ctypes.c_void_p)(out.ctypes.data)
    assert out.tolist() == [-128, 0, -3, -1, 2, 24]   # base subobject is not tail-padded into (LLVM struct layout)


def test_host_functions(engine):
    assert fn(engine, "fib", ctypes.c_int, ctypes.c_int)(10) == 55
    assert fn(engine, "members_of_values", ctypes.c_int, ctypes.c_int)(4) == 4 + 15
    assert fn(engine, "local_const_array", ctypes.c_int)() == 5 * 100 + 24
    clamp = fn(engine, "clamp01", ctypes.c_float, ctypes.c_float)
    # Unsplit module: both branches run (device clamps, host clamps too).
    assert [clamp(v) for v in (-1.0, 0.25, 3.0)] == [0.0, 0.25, 1.0]
