"""device_global declarations of sycl_ext_oneapi_device_global (issue 30, points 7-11):
the spec's constant-initialisation examples compile and the kernels read the
values they give; has_property/get_property in host code; static members found
by their source names.  Runs on every device (``tests/runtime/conftest.py``)."""
import numpy as np
import pytest

from minisycl import runtime as sycl

# The spec's "Constant initialization of device_globals" example, in the kernel
# language (properties as [[...]], C++20's parenthesised aggregate initialisation).
SPEC_EXAMPLES = """
device_global<int> no_device_image_dg {3};
device_global<int> dg_int [[device_image_scope]] {5};
device_global<int[3]> dg_int_arr [[device_image_scope]] {5, 2, 3};
device_global<char> dg_char [[device_image_scope]] {'f'};
device_global<char[3]> dg_char_arr [[device_image_scope]] {'d', '4', 'S'};
device_global<int[3][2]> dg_multi_dim_arr [[device_image_scope]] {3, 4, 5, 6, 7, 8};
device_global<float> dg_float [[device_image_scope]] {4.5};
device_global<float[6]> dg_float_arr [[device_image_scope]] {4.5, 2.1, 3.5, 9.33, 2.33, 2.1};
device_global<bool> dg_bool [[device_image_scope]] {true};
device_global<bool[3]> dg_bool_arr [[device_image_scope]] {true, false, true};

struct TestStruct {
  int field1;
  bool field2;
  float field3;
  int field4[4];
};
constexpr TestStruct TS1(5, true, 2.1, {1, 2, 3, 4});
constexpr TestStruct TS2(7, false, 2.4, {1, 2, 3, 4});
constexpr TestStruct TS3(6, false, 4.34534, {5, 6, 7, 8});
device_global<TestStruct> dg_struct [[device_image_scope]] {TS3};
device_global<TestStruct[2]> dg_struct_arr [[device_image_scope]] {TS1, TS2};

class Point { int x; int y; Point(int a, int b) { x = a; y = a * b; } };
constexpr Point P1(2, 3);
constexpr Point P2{4, 5};
device_global<Point[2]> dg_points{P1, P2};
constexpr int TABLE[4] = {10, 20, 30, 40};

struct Foo { static device_global<int> d; };
inline device_global<int> c = 9;

kernel read_ints(int* out) {
  out[0] = no_device_image_dg; out[1] = dg_int; out[2] = dg_int_arr[2];
  out[3] = dg_char; out[4] = dg_char_arr[1]; out[5] = dg_multi_dim_arr[2][1];
  out[6] = dg_bool; out[7] = dg_bool_arr[1]; out[8] = dg_bool_arr[2];
  out[9] = dg_struct.field1; out[10] = dg_struct.field4[3]; out[11] = dg_struct_arr[1].field1;
  out[12] = dg_struct_arr[0].field4[1]; out[13] = dg_points[1].y; out[14] = TS2.field1 + TABLE[3];
  out[15] = Foo::d + c;
}
kernel read_floats(float* out) {
  out[0] = dg_float; out[1] = dg_float_arr[3]; out[2] = dg_struct.field3; out[3] = dg_struct_arr[0].field3;
}
kernel bump_foo(int* out) { Foo::d = Foo::d + 1; out[0] = Foo::d; }

host int properties() {
  return (dg_int.has_property(device_image_scope) ? 1 : 0) + (c.has_property(host_access) ? 10 : 0)
         + 100 * Foo::d.has_property(device_image_scope);
}
"""


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    src = tmp_path_factory.mktemp("dgdecl") / "spec_examples.ksl"
    src.write_text(SPEC_EXAMPLES)
    return sycl.build_program([str(src)])


def test_the_specs_constant_initialisers_reach_the_kernel(prog):
    q = sycl.queue()
    ints = sycl.malloc_shared(16, np.int32, q)
    floats = sycl.malloc_shared(4, np.float32, q)
    q.single_task(prog.kernel("read_ints"), ints).wait()
    q.single_task(prog.kernel("read_floats"), floats).wait()
    assert np.asarray(ints).tolist() == [3, 5, 3, ord("f"), ord("4"), 8, 1, 0, 1, 6, 8, 7, 2, 20, 47, 9]
    assert np.asarray(floats).tolist() == pytest.approx([4.5, 9.33, 4.34534, 2.1], rel=1e-6)


def test_struct_initialisers_read_back_from_python(prog):
    q = sycl.queue()
    layout = prog.dtype("TestStruct")
    host = np.zeros(2, layout)
    q.memcpy(host, prog.device_global("dg_struct_arr")).wait()
    assert host["field1"].tolist() == [5, 7] and host["field4"].tolist() == [[1, 2, 3, 4]] * 2
    points = np.zeros(4, np.int32)
    q.memcpy(points, prog.device_global("dg_points")).wait()
    assert points.tolist() == [2, 6, 4, 20]          # each Point made by its constructor in the compiler


def test_properties_in_host_code(prog):
    assert prog.host_function("properties")() == 1


def test_static_member_by_its_source_name(prog):
    q = sycl.queue()
    d = prog.device_global("Foo::d")
    assert d.source_name == "Foo::d" and "Foo::d" in prog.device_global_names()
    q.copy(np.array([41], np.int32), d).wait()
    out = sycl.malloc_shared(1, np.int32, q)
    q.single_task(prog.kernel("bump_foo"), out).wait()
    assert out[0] == 42
    with pytest.raises(sycl.exception) as err:
        prog.device_global("Foo::nope")
    assert err.value.code() == sycl.errc.invalid and "Foo::d" in str(err.value)
