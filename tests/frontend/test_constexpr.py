"""``frontend/constexpr.py``: a device_global's constructor evaluated by the
compiler gives what the same code computes at run time (C's arithmetic, the
type's floating-point precision, control flow, calls, pointers into arrays)."""
import re

import pytest

from minisycl.frontend import CompileError, compile_source


def initial_value(body: str, fields: str = "int v[8];", extra: str = "") -> str:
    """The initialiser of ``device_global<S> g`` whose default constructor is ``body``."""
    src = f"{extra}\nstruct S {{ {fields} S() {{ {body} }} }};\ndevice_global<S> g [[device_image_scope]];\n"
    ir = compile_source(src, "c.ksl").ir
    return re.search(r"@g = global \{ %struct.S \} \{ %struct.S \{ (.*) \} \}", ir).group(1)


def test_integer_arithmetic_is_cs():
    got = initial_value("v[0] = -7 / 2; v[1] = -7 % 2; v[2] = 1 << 31 >> 31; v[3] = (int)3000000000u;"
                        "unsigned u = 0; u = u - 1; v[4] = (int)(u >> 28); v[5] = 7 & ~2; v[6] = (char)300;")
    assert got == "[8 x i32] [i32 -3, i32 -1, i32 -1, i32 -1294967296, i32 15, i32 5, i32 44, i32 0]"


def test_float_arithmetic_rounds_to_the_type():
    got = initial_value("f = 16777216.0f; f = f + 1.0f; f = f + 1.0f; d = 16777216.0; d = d + 1.0; d = d + 1.0;"
                        "h = 1.0f / 3.0f; i = (int)-2.9f;", "float f; double d; float h; int i;")
    # 2^24 + 1 rounds back to 2^24 in float at each step (not 2^24 + 2 computed in double)
    assert got == ("float 0x4170000000000000, double 0x4170000020000000, float 0x3FD5555560000000, i32 -2")


def test_control_flow_and_calls():
    extra = "int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }"
    got = initial_value("int i = 0; while (true) { if (i == 2) { i++; continue; } v[i] = fact(i); if (++i > 4) break; }"
                        "int k = 5; do { v[k] = k; k++; } while (k < 8); v[2] = -1;", extra=extra)
    assert got == "[8 x i32] [i32 1, i32 1, i32 -1, i32 6, i32 24, i32 5, i32 6, i32 7]"


def test_pointers_into_arrays_and_short_circuit():
    got = initial_value("int* p = &v[1]; *p = 3; p += 2; *p = 4; p[1] = 5; v[7] = (int)(p - &v[0]);"
                        "int* q = nullptr; v[0] = (q != nullptr && *q == 1) ? 9 : 8; v[6] = q == nullptr;")
    assert got == "[8 x i32] [i32 8, i32 3, i32 0, i32 4, i32 5, i32 0, i32 1, i32 3]"


def test_members_methods_and_compound_assignment():
    extra = "struct P { int x; int y; int sum() { return x + y; } };"
    got = initial_value("P p = {2, 3}; p.x *= 4; p.y <<= 1; a = p.sum(); P q = p; q.x = 0; b = q.sum() + p.x;",
                        "int a; int b;", extra=extra)
    assert got == "i32 14, i32 14"


def test_errors_name_the_rule():
    with pytest.raises(CompileError) as err:
        initial_value("v[0] = 1 / 0;")
    assert "must be a constant expression (sycl_ext_oneapi_device_global, C++20: the constructor is consteval)" \
        in str(err.value)
    assert "division by zero" in str(err.value)
