"""The math built-ins are one table (``frontend/math_builtins.py``) for the
checker and the emitter: every name the checker accepts is emitted exactly one
way, and each compiles to the IR its table entry names."""
from minisycl.frontend import compile_source
from minisycl.frontend.math_builtins import INTRINSIC, LIBM, MATH_1, MATH_2, MATH_3, WRITTEN_OUT


def test_every_math_builtin_is_emitted_one_way():
    names = set(MATH_1 + MATH_2 + MATH_3)
    assert set(INTRINSIC) | LIBM | WRITTEN_OUT == names
    assert not (set(INTRINSIC) & LIBM) and not (set(INTRINSIC) & WRITTEN_OUT) and not (LIBM & WRITTEN_OUT)


def test_each_builtin_compiles_to_its_table_entry():
    for name in MATH_1 + MATH_2 + MATH_3:
        arity = 1 if name in MATH_1 else 2 if name in MATH_2 else 3
        args = ", ".join(["x"] * arity)
        ir = compile_source(f"kernel k(id<1> i, float* p) {{ float x = p[i]; p[i] = {name}({args}); }}\n").ir
        if name in INTRINSIC:
            assert f"@llvm.{INTRINSIC[name]}.f32(" in ir, name
        elif name in LIBM:
            assert f"@{name}f(" in ir, name
        else:
            assert "@llvm.sqrt.f32(" in ir and "fdiv" in ir, name
