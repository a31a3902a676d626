"""The math built-ins NVPTX cannot select, as calls it can compile (``lower-to-nvptx`` step 5).

LLVM's NVPTX back end selects ``sqrt``, ``fabs``, ``floor``, ``fma`` and the
other intrinsics of ``lower_to_nvptx._SELECTABLE`` itself, but aborts on the
transcendental intrinsics (``llvm.sin.f32``, ``llvm.tanh.f32`` ...) and has no
C library for the calls the front end makes where LLVM has no intrinsic
(``cbrtf``, ``hypotf``).  ``MATH`` is the one table of those functions: every
math built-in of the kernel language (``docs/language.md``) that reaches the
device module as one of them is listed, with its arity.

``lower_math(text, libdevice)`` replaces each call by a call of an internal
``alwaysinline`` wrapper ``__minisycl_math.<fn>.<f32|f64|f16>`` and returns the
definitions to add:

* **With libdevice** (CUDA's ``libdevice.10.bc``, linked by the runtime) the
  wrapper calls ``__nv_<fn>f`` (float, and half computed in float) or
  ``__nv_<fn>`` (double): libdevice's documented accuracy.
* **Without it**, the wrapper calls this module's own single-precision
  implementation ``__minisycl_nv.<fn>`` (``OWN_F32``); double and half
  arguments go through float.  They are written on what NVPTX selects (fma,
  sqrt, ``ex2.approx`` for ``exp2``, bit operations), after Cephes' single-
  precision library, with the algorithm in each definition's comment:
  ``sin``/``cos``/``tan`` reduce by pi/2 in three parts (accurate for |x| below
  about 1e5), ``log``/``log2``/``log10`` split the bits into exponent and
  mantissa, ``exp`` reduces by ln 2 (Cody and Waite), ``atan`` is ``atanf``
  (three ranges, an odd polynomial) and ``atan2``/``asin``/``acos`` reduce to
  it, ``sinh``/``tanh`` use a Taylor polynomial below 1 (``tanh``: 0.5) and
  ``exp`` above, ``cbrt`` is ``exp2(log2|x|/3)`` and one Newton step,
  ``hypot`` scales by the larger magnitude, and ``pow`` is ``exp(y ln|x|)``
  in double (the GPU's fp64 units), rounded once.
  ``tests/runtime/test_math_builtins.py`` runs these definitions on the CPU
  and checks each against NumPy within the ulp bounds stated there (on a GPU
  without libdevice, the whole table runs within OpenCL's bounds too).
"""
from __future__ import annotations

import math
import re
import struct

from .ir.lexer import float_hex

__all__ = ["MATH", "OWN_F32", "OWN_NEEDS", "OWN_DECLS", "lower_math", "f32_const"]

#: every math function NVPTX cannot select -> its number of arguments.  An
#: intrinsic ``llvm.<fn>.<f32|f64|f16>`` or a C call ``<fn>f``/``<fn>`` (``LIBM``).
MATH = {"exp": 1, "log": 1, "log2": 1, "log10": 1, "sin": 1, "cos": 1, "tan": 1, "pow": 2, "exp2": 1,
        "tanh": 1, "asin": 1, "acos": 1, "atan": 1, "sinh": 1, "cosh": 1, "atan2": 2, "cbrt": 1, "hypot": 2}
#: the ones the front end calls as C's math library (LLVM has no intrinsic for them)
LIBM = ("cbrt", "hypot")
#: ``exp2`` NVPTX selects on float and half (``ex2.approx``); only double needs a call
_SELECTED_ON = {"exp2": ("f32", "f16")}
_FLOAT = {"f32": "float", "f64": "double", "f16": "half"}


def f32_const(value: float) -> str:
    """A float constant as LLVM spells a single-precision value (exactly)."""
    return float_hex(struct.unpack("<f", struct.pack("<f", value))[0])


_f = f32_const


_d = float_hex


def _horner(var: str, coefficients: list[float], ty: str = "float", name: str = "p") -> str:
    """Horner's rule over ``%var`` with fused multiply-adds, the coefficients
    from the highest power down: lines ``%<name>1 .. %<name>N`` (N = len - 1,
    the last holds the value)."""
    const, suffix = (_f, "f32") if ty == "float" else (_d, "f64")
    lines, acc = [], const(coefficients[0])
    for i, c in enumerate(coefficients[1:], 1):
        lines.append(f"  %{name}{i} = call {ty} @llvm.fma.{suffix}({ty} {acc}, {ty} %{var}, {ty} {const(c)})")
        acc = f"%{name}{i}"
    return "\n".join(lines)


def _smaller_over_larger(a: str, b: str, a_larger: str, larger: str, smaller: str, ratio: str) -> str:
    """Lines putting the larger of ``|%a|``, ``|%b|`` in ``%larger``, the other in
    ``%smaller`` and their quotient (at most 1) in ``%ratio`` (``%a_larger``: which
    was larger), with ``%a``'s and ``%b``'s magnitudes in ``%a<a>``, ``%a<b>``
    (``atan2`` and ``hypot`` start so: no overflow or underflow in between)."""
    return f"""  %a{a} = call float @llvm.fabs.f32(float %{a})
  %a{b} = call float @llvm.fabs.f32(float %{b})
  %{a_larger} = fcmp ogt float %a{a}, %a{b}
  %{larger} = select i1 %{a_larger}, float %a{a}, float %a{b}
  %{smaller} = select i1 %{a_larger}, float %a{b}, float %a{a}
  %{ratio} = fdiv float %{smaller}, %{larger}"""


def _two_part(value: float) -> tuple[float, float]:
    """``value`` as a float and the double remainder: a constant of about 48 bits for fma chains."""
    hi = struct.unpack("<f", struct.pack("<f", value))[0]
    return hi, value - hi


_LN2_HI, _LN2_LO = _two_part(0.6931471805599453)
_TWO_PI_HI, _TWO_PI_LO = _two_part(6.283185307179586)
_PI_HI, _PI_LO = _two_part(3.141592653589793)
_HALF_PI_HI, _HALF_PI_LO = _two_part(1.5707963267948966)
_INF = _f(float("inf"))
#: sin, cos and tan start so: ``%r``, the argument reduced to [-pi/4, pi/4], and ``%q``, its quadrant
_REDUCED = """  %rq = call { float, float } @__minisycl_nv.reduce(float %x)
  %r = extractvalue { float, float } %rq, 0
  %q = extractvalue { float, float } %rq, 1"""
#: ... then sin and cos: ``%s`` and ``%c`` of ``%r``
_SIN_COS = """  %s = call float @__minisycl_nv.sin_poly(float %r)
  %c = call float @__minisycl_nv.cos_poly(float %r)"""
#: ``%odd``: the quadrant is 1 or 3
_ODD = f"""  %q1 = fcmp oeq float %q, {_f(1.0)}
  %q3 = fcmp oeq float %q, {_f(3.0)}
  %odd = or i1 %q1, %q3"""

#: this module's own single-precision implementations (see the docstring)
OWN_F32 = {
    # x - k pi/2 with k = rint(2x/pi), pi/2 in three parts (Cephes' DP1-3, fma),
    # and k mod 4 (a float: no poison for NaN or huge x); accurate for |x| < 1e5
    "reduce": f"""define internal {{ float, float }} @__minisycl_nv.reduce(float %x) alwaysinline {{
  %t = fmul float %x, {_f(0.6366197723675814)}
  %k = call float @llvm.rint.f32(float %t)
  %nk = fneg float %k
  %r1 = call float @llvm.fma.f32(float %nk, float {_f(1.5703125)}, float %x)
  %r2 = call float @llvm.fma.f32(float %nk, float {_f(4.837512969970703125e-4)}, float %r1)
  %r = call float @llvm.fma.f32(float %nk, float {_f(7.54978995489188216e-8)}, float %r2)
  %k4 = fmul float %k, {_f(0.25)}
  %f4 = call float @llvm.floor.f32(float %k4)
  %q = call float @llvm.fma.f32(float %f4, float {_f(-4.0)}, float %k)
  %v0 = insertvalue {{ float, float }} poison, float %r, 0
  %v = insertvalue {{ float, float }} %v0, float %q, 1
  ret {{ float, float }} %v
}}""",
    # Cephes sinf's polynomial on [-pi/4, pi/4]
    "sin_poly": f"""define internal float @__minisycl_nv.sin_poly(float %r) alwaysinline {{
  %z = fmul float %r, %r
{_horner("z", [-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1])}
  %pz = fmul float %p2, %z
  %s = call float @llvm.fma.f32(float %pz, float %r, float %r)
  ret float %s
}}""",
    # Cephes cosf's polynomial on [-pi/4, pi/4]
    "cos_poly": f"""define internal float @__minisycl_nv.cos_poly(float %r) alwaysinline {{
  %z = fmul float %r, %r
{_horner("z", [2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2])}
  %zz = fmul float %z, %z
  %h = call float @llvm.fma.f32(float %z, float {_f(-0.5)}, float {_f(1.0)})
  %c = call float @llvm.fma.f32(float %p2, float %zz, float %h)
  ret float %c
}}""",
    # quadrant q: sin, cos, -sin, -cos of the reduced argument
    "sin": f"""define internal float @__minisycl_nv.sin(float %x) alwaysinline {{
{_REDUCED}
{_SIN_COS}
{_ODD}
  %v = select i1 %odd, float %c, float %s
  %neg = fcmp oge float %q, {_f(2.0)}
  %nv = fneg float %v
  %res = select i1 %neg, float %nv, float %v
  ret float %res
}}""",
    # quadrant q: cos, -sin, -cos, sin of the reduced argument
    "cos": f"""define internal float @__minisycl_nv.cos(float %x) alwaysinline {{
{_REDUCED}
{_SIN_COS}
  %q1 = fcmp oeq float %q, {_f(1.0)}
  %q2 = fcmp oeq float %q, {_f(2.0)}
  %q3 = fcmp oeq float %q, {_f(3.0)}
  %odd = or i1 %q1, %q3
  %v = select i1 %odd, float %s, float %c
  %neg = or i1 %q1, %q2
  %nv = fneg float %v
  %res = select i1 %neg, float %nv, float %v
  ret float %res
}}""",
    # Cephes tanf's polynomial; -1/t in odd quadrants
    "tan": f"""define internal float @__minisycl_nv.tan(float %x) alwaysinline {{
{_REDUCED}
  %z = fmul float %r, %r
{_horner("z", [9.38540185543e-3, 3.11992232697e-3, 2.44301354525e-2, 5.34112807005e-2, 1.33387994085e-1,
             3.33331568548e-1])}
  %pz = fmul float %p5, %z
  %t = call float @llvm.fma.f32(float %pz, float %r, float %r)
{_ODD}
  %inv = fdiv float {_f(-1.0)}, %t
  %res = select i1 %odd, float %inv, float %t
  ret float %res
}}""",
    # Cody-Waite: n = rint(x log2 e), r = x - n ln 2 in two parts (fma), then
    # ex2.approx(r log2 e) * 2^n, 2^n built from bits in two halves (n clamped
    # to [-252, 254]: overflow and underflow come out as inf and 0)
    "exp": f"""define internal float @__minisycl_nv.exp(float %x) alwaysinline {{
  %t = fmul float %x, {_f(1.4426950408889634)}
  %n = call float @llvm.rint.f32(float %t)
  %nn = fneg float %n
  %r1 = call float @llvm.fma.f32(float %nn, float {_f(_LN2_HI)}, float %x)
  %r = call float @llvm.fma.f32(float %nn, float {_f(_LN2_LO)}, float %r1)
  %rt = fmul float %r, {_f(1.4426950408889634)}
  %p = call float @llvm.exp2.f32(float %rt)
  %lo = call float @llvm.maxnum.f32(float %n, float {_f(-252.0)})
  %nc = call float @llvm.minnum.f32(float %lo, float {_f(254.0)})
  %ni = fptosi float %nc to i32
  %n1 = ashr i32 %ni, 1
  %n2 = sub i32 %ni, %n1
  %e1 = add i32 %n1, 127
  %e2 = add i32 %n2, 127
  %b1 = shl i32 %e1, 23
  %b2 = shl i32 %e2, 23
  %s1 = bitcast i32 %b1 to float
  %s2 = bitcast i32 %b2 to float
  %ps = fmul float %p, %s1
  %v = fmul float %ps, %s2
  %over = fcmp ogt float %x, {_f(89.0)}
  %under = fcmp olt float %x, {_f(-104.0)}
  %v1 = select i1 %over, float {_INF}, float %v
  %v2 = select i1 %under, float {_f(0.0)}, float %v1
  ret float %v2
}}""",
    # frexp of x > 0 by its bits (subnormals scaled by 2^23 first): x = 2^e (1 + f)
    # with 1 + f in [sqrt(1/2), sqrt(2)); y = Cephes logf's polynomial of f minus f^2/2
    "log_reduce": f"""define internal {{ float, float, float }} @__minisycl_nv.log_reduce(float %x) alwaysinline {{
  %small = fcmp olt float %x, {_f(1.1754943508222875e-38)}
  %xs = fmul float %x, {_f(8388608.0)}
  %xx = select i1 %small, float %xs, float %x
  %adj = select i1 %small, float {_f(-23.0)}, float {_f(0.0)}
  %bits = bitcast float %xx to i32
  %ex = lshr i32 %bits, 23
  %exm = and i32 %ex, 255
  %eb = sub i32 %exm, 126
  %mb = and i32 %bits, 8388607
  %mbits = or i32 %mb, 1056964608
  %m = bitcast i32 %mbits to float
  %ef0 = sitofp i32 %eb to float
  %ef = fadd float %ef0, %adj
  %lt = fcmp olt float %m, {_f(0.7071067811865476)}
  %m2 = fadd float %m, %m
  %f1 = fsub float %m2, {_f(1.0)}
  %f2 = fsub float %m, {_f(1.0)}
  %f = select i1 %lt, float %f1, float %f2
  %e1 = fsub float %ef, {_f(1.0)}
  %e = select i1 %lt, float %e1, float %ef
  %z = fmul float %f, %f
{_horner("f", [7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
             -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1])}
  %pf = fmul float %p8, %f
  %y0 = fmul float %pf, %z
  %y = call float @llvm.fma.f32(float %z, float {_f(-0.5)}, float %y0)
  %v0 = insertvalue {{ float, float, float }} poison, float %f, 0
  %v1 = insertvalue {{ float, float, float }} %v0, float %e, 1
  %v = insertvalue {{ float, float, float }} %v1, float %y, 2
  ret {{ float, float, float }} %v
}}""",
    # the special values of every logarithm: NaN below 0, -inf at 0, inf at inf, NaN at NaN
    "log_special": f"""define internal float @__minisycl_nv.log_special(float %x, float %r) alwaysinline {{
  %inf = fcmp oeq float %x, {_INF}
  %r1 = select i1 %inf, float {_INF}, float %r
  %zero = fcmp oeq float %x, {_f(0.0)}
  %r2 = select i1 %zero, float {_f(float("-inf"))}, float %r1
  %neg = fcmp olt float %x, {_f(0.0)}
  %r3 = select i1 %neg, float {_f(float("nan"))}, float %r2
  %nan = fcmp uno float %x, %x
  %r4 = select i1 %nan, float %x, float %r3
  ret float %r4
}}""",
    # Cephes log2f: (f + y) log2 e + e, log2 e = 1 + LOG2EA
    "log2": f"""define internal float @__minisycl_nv.log2(float %x) alwaysinline {{
  %p = call {{ float, float, float }} @__minisycl_nv.log_reduce(float %x)
  %f = extractvalue {{ float, float, float }} %p, 0
  %e = extractvalue {{ float, float, float }} %p, 1
  %y = extractvalue {{ float, float, float }} %p, 2
  %z1 = fmul float %y, {_f(0.44269504088896340736)}
  %z2 = call float @llvm.fma.f32(float %f, float {_f(0.44269504088896340736)}, float %z1)
  %z3 = fadd float %z2, %y
  %z4 = fadd float %z3, %f
  %z5 = fadd float %z4, %e
  %r = call float @__minisycl_nv.log_special(float %x, float %z5)
  ret float %r
}}""",
    # Cephes logf: f + y + e ln 2, ln 2 in two parts
    "log": f"""define internal float @__minisycl_nv.log(float %x) alwaysinline {{
  %p = call {{ float, float, float }} @__minisycl_nv.log_reduce(float %x)
  %f = extractvalue {{ float, float, float }} %p, 0
  %e = extractvalue {{ float, float, float }} %p, 1
  %y = extractvalue {{ float, float, float }} %p, 2
  %a = call float @llvm.fma.f32(float %e, float {_f(-2.12194440e-4)}, float %y)
  %b = fadd float %f, %a
  %l = call float @llvm.fma.f32(float %e, float {_f(0.693359375)}, float %b)
  %r = call float @__minisycl_nv.log_special(float %x, float %l)
  ret float %r
}}""",
    # Cephes log10f: (f + y) log10 e + e log10 2, both constants in two parts
    "log10": f"""define internal float @__minisycl_nv.log10(float %x) alwaysinline {{
  %p = call {{ float, float, float }} @__minisycl_nv.log_reduce(float %x)
  %f = extractvalue {{ float, float, float }} %p, 0
  %e = extractvalue {{ float, float, float }} %p, 1
  %y = extractvalue {{ float, float, float }} %p, 2
  %z1 = fmul float %y, {_f(7.00731903251827651129e-4)}
  %z2 = call float @llvm.fma.f32(float %f, float {_f(7.00731903251827651129e-4)}, float %z1)
  %z3 = call float @llvm.fma.f32(float %e, float {_f(2.48745663981195213739e-4)}, float %z2)
  %z4 = call float @llvm.fma.f32(float %y, float {_f(4.3359375e-1)}, float %z3)
  %z5 = call float @llvm.fma.f32(float %f, float {_f(4.3359375e-1)}, float %z4)
  %z6 = call float @llvm.fma.f32(float %e, float {_f(3.0078125e-1)}, float %z5)
  %r = call float @__minisycl_nv.log_special(float %x, float %z6)
  ret float %r
}}""",
    # ln|x| in double for pow: x's frexp (exact), ln m = 2 atanh((m-1)/(m+1)) to s^17
    "ln_d": f"""define internal double @__minisycl_nv.ln_d(float %x) alwaysinline {{
  %p = call {{ float, float, float }} @__minisycl_nv.log_reduce(float %x)
  %f = extractvalue {{ float, float, float }} %p, 0
  %e = extractvalue {{ float, float, float }} %p, 1
  %fd = fpext float %f to double
  %ed = fpext float %e to double
  %den = fadd double %fd, 2.0
  %s = fdiv double %fd, %den
  %s2 = fmul double %s, %s
{_horner("s2", [1 / k for k in range(17, 0, -2)], "double", "q")}
  %s2x = fmul double %s, 2.0
  %lm = fmul double %s2x, %q8
  %l = call double @llvm.fma.f64(double %ed, double {_d(0.6931471805599453)}, double %lm)
  %inf = fcmp oeq float %x, {_INF}
  %l1 = select i1 %inf, double 0x7FF0000000000000, double %l
  %zero = fcmp oeq float %x, {_f(0.0)}
  %l2 = select i1 %zero, double 0xFFF0000000000000, double %l1
  %nan = fcmp uno float %x, %x
  %l3 = select i1 %nan, double 0x7FF8000000000000, double %l2
  ret double %l3
}}""",
    # exp in double for pow: t - k ln 2 (two parts), Taylor to r^13, times 2^k
    # from bits (k clamped to [-300, 300]: the float result is 0 or inf beyond)
    "exp_d": f"""define internal double @__minisycl_nv.exp_d(double %t) alwaysinline {{
  %u = fmul double %t, {_d(1.4426950408889634)}
  %k = call double @llvm.rint.f64(double %u)
  %nk = fneg double %k
  %r1 = call double @llvm.fma.f64(double %nk, double {_d(0.6931471805599453)}, double %t)
  %r = call double @llvm.fma.f64(double %nk, double {_d(2.3190468138462996e-17)}, double %r1)
{_horner("r", [1 / math.factorial(k) for k in range(13, -1, -1)], "double", "q")}
  %lo = call double @llvm.maxnum.f64(double %k, double -300.0)
  %kc = call double @llvm.minnum.f64(double %lo, double 300.0)
  %ki = fptosi double %kc to i64
  %eb = add i64 %ki, 1023
  %bits = shl i64 %eb, 52
  %scale = bitcast i64 %bits to double
  %v = fmul double %q13, %scale
  ret double %v
}}""",
    # exp(y ln|x|) in double, rounded once to float; the sign of odd integer
    # powers of negative x, NaN for other negative x, 1 for y = 0
    "pow": f"""define internal float @__minisycl_nv.pow(float %x, float %y) alwaysinline {{
  %ax = call float @llvm.fabs.f32(float %x)
  %l = call double @__minisycl_nv.ln_d(float %ax)
  %yd = fpext float %y to double
  %t = fmul double %yd, %l
  %md = call double @__minisycl_nv.exp_d(double %t)
  %m = fptrunc double %md to float
  %yint = call float @llvm.trunc.f32(float %y)
  %isint = fcmp oeq float %yint, %y
  %half = fmul float %y, {_f(0.5)}
  %hint = call float @llvm.trunc.f32(float %half)
  %even = fcmp oeq float %hint, %half
  %neg = fcmp olt float %x, {_f(0.0)}
  %negm = fneg float %m
  %odd = select i1 %even, float %m, float %negm
  %signed = select i1 %isint, float %odd, float {_f(float("nan"))}
  %r1 = select i1 %neg, float %signed, float %m
  %y0 = fcmp oeq float %y, {_f(0.0)}
  %r = select i1 %y0, float {_f(1.0)}, float %r1
  ret float %r
}}""",
    # Cephes atanf: |x| > tan(3pi/8): pi/2 + atan(-1/|x|); > tan(pi/8): pi/4 +
    # atan((|x|-1)/(|x|+1)); the reduced argument's odd polynomial; x's sign.
    "atan": f"""define internal float @__minisycl_nv.atan(float %x) alwaysinline {{
  %a = call float @llvm.fabs.f32(float %x)
  %big = fcmp ogt float %a, {_f(2.414213562373095)}
  %mid = fcmp ogt float %a, {_f(0.4142135623730950)}
  %inv = fdiv float {_f(-1.0)}, %a
  %am1 = fsub float %a, {_f(1.0)}
  %ap1 = fadd float %a, {_f(1.0)}
  %mr = fdiv float %am1, %ap1
  %t1 = select i1 %mid, float %mr, float %a
  %t = select i1 %big, float %inv, float %t1
  %b1 = select i1 %mid, float {_f(0.7853981633974483)}, float {_f(0.0)}
  %b = select i1 %big, float {_f(1.5707963267948966)}, float %b1
  %z = fmul float %t, %t
{_horner("z", [8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1])}
  %pz = fmul float %p3, %z
  %r0 = call float @llvm.fma.f32(float %pz, float %t, float %t)
  %r = fadd float %b, %r0
  %s = call float @llvm.copysign.f32(float %r, float %x)
  ret float %s
}}""",
    # atan of min/max(|y|,|x|) in [0, 1], then pi/2 - r (|y| > |x|) and pi - r
    # (x negative, -0 included), the sign of y; both infinite: pi/4, both zero: 0.
    "atan2": f"""define internal float @__minisycl_nv.atan2(float %y, float %x) alwaysinline {{
{_smaller_over_larger("y", "x", "ylarger", "hi", "lo", "q0")}
  %zero = fcmp oeq float %hi, {_f(0.0)}
  %iy = fcmp oeq float %ay, {_INF}
  %ix = fcmp oeq float %ax, {_INF}
  %both = and i1 %iy, %ix
  %q1 = select i1 %zero, float {_f(0.0)}, float %q0
  %q = select i1 %both, float {_f(1.0)}, float %q1
  %r0 = call float @__minisycl_nv.atan(float %q)
  %c0 = fsub float {_f(_HALF_PI_HI)}, %r0
  %c1 = fadd float %c0, {_f(_HALF_PI_LO)}
  %r1 = select i1 %ylarger, float %c1, float %r0
  %xbits = bitcast float %x to i32
  %xneg = icmp slt i32 %xbits, 0
  %d0 = fsub float {_f(_PI_HI)}, %r1
  %d1 = fadd float %d0, {_f(_PI_LO)}
  %r2 = select i1 %xneg, float %d1, float %r1
  %nan = fcmp uno float %x, %y
  %sum = fadd float %x, %y
  %r3 = select i1 %nan, float %sum, float %r2
  %s = call float @llvm.copysign.f32(float %r3, float %y)
  ret float %s
}}""",
    # sqrt((1-x)(1+x)) = sqrt(1 - x^2) without cancellation near |x| = 1; NaN outside [-1, 1]
    "sqrt_one_minus_square": f"""define internal float @__minisycl_nv.sqrt_one_minus_square(float %x) alwaysinline {{
  %m = fsub float {_f(1.0)}, %x
  %p = fadd float {_f(1.0)}, %x
  %c2 = fmul float %m, %p
  %c = call float @llvm.sqrt.f32(float %c2)
  ret float %c
}}""",
    # asin(x) = atan2(x, sqrt(1 - x^2))
    "asin": """define internal float @__minisycl_nv.asin(float %x) alwaysinline {
  %c = call float @__minisycl_nv.sqrt_one_minus_square(float %x)
  %r = call float @__minisycl_nv.atan2(float %x, float %c)
  ret float %r
}""",
    # acos(x) = atan2(sqrt(1 - x^2), x)
    "acos": """define internal float @__minisycl_nv.acos(float %x) alwaysinline {
  %s = call float @__minisycl_nv.sqrt_one_minus_square(float %x)
  %r = call float @__minisycl_nv.atan2(float %s, float %x)
  ret float %r
}""",
    # the odd Taylor polynomial of sinh to x^11 (|x| < 1: error below 2^-32)
    "sinh_small": f"""define internal float @__minisycl_nv.sinh_small(float %a) alwaysinline {{
  %z = fmul float %a, %a
{_horner("z", [1 / 39916800, 1 / 362880, 1 / 5040, 1 / 120, 1 / 6])}
  %pz = fmul float %p4, %z
  %r = call float @llvm.fma.f32(float %pz, float %a, float %a)
  ret float %r
}}""",
    # |x| < 1: the polynomial; else h*e - 1/(4*h*e) with e = exp(|x|/2),
    # h = e/2 (no overflow before sinh itself overflows); x's sign
    "sinh": f"""define internal float @__minisycl_nv.sinh(float %x) alwaysinline {{
  %a = call float @llvm.fabs.f32(float %x)
  %small = fcmp olt float %a, {_f(1.0)}
  %ps = call float @__minisycl_nv.sinh_small(float %a)
  %e2 = call float @__minisycl_nv.exp_half_twice(float %a)
  %q = fdiv float {_f(0.25)}, %e2
  %big = fsub float %e2, %q
  %r = select i1 %small, float %ps, float %big
  %s = call float @llvm.copysign.f32(float %r, float %x)
  ret float %s
}}""",
    # exp(a)/2 as (exp(a/2)/2) * exp(a/2): finite up to a = 89.4, where cosh is
    "exp_half_twice": f"""define internal float @__minisycl_nv.exp_half_twice(float %a) alwaysinline {{
  %h = fmul float %a, {_f(0.5)}
  %e = call float @__minisycl_nv.exp(float %h)
  %eh = fmul float %e, {_f(0.5)}
  %r = fmul float %eh, %e
  ret float %r
}}""",
    # exp(|x|)/2 + 1/(4 * exp(|x|)/2)
    "cosh": f"""define internal float @__minisycl_nv.cosh(float %x) alwaysinline {{
  %a = call float @llvm.fabs.f32(float %x)
  %e2 = call float @__minisycl_nv.exp_half_twice(float %a)
  %q = fdiv float {_f(0.25)}, %e2
  %r = fadd float %e2, %q
  ret float %r
}}""",
    # |x| < 0.5: s / sqrt(1 + s^2) with s the sinh polynomial; else
    # (1 - t) / (1 + t), t = exp(-2|x|); x's sign
    "tanh": f"""define internal float @__minisycl_nv.tanh(float %x) alwaysinline {{
  %a = call float @llvm.fabs.f32(float %x)
  %small = fcmp olt float %a, {_f(0.5)}
  %s = call float @__minisycl_nv.sinh_small(float %a)
  %c2 = call float @llvm.fma.f32(float %s, float %s, float {_f(1.0)})
  %c = call float @llvm.sqrt.f32(float %c2)
  %ts = fdiv float %s, %c
  %m2 = fmul float %a, {_f(-2.0)}
  %t = call float @__minisycl_nv.exp(float %m2)
  %n = fsub float {_f(1.0)}, %t
  %d = fadd float {_f(1.0)}, %t
  %tb = fdiv float %n, %d
  %r = select i1 %small, float %ts, float %tb
  %sg = call float @llvm.copysign.f32(float %r, float %x)
  ret float %sg
}}""",
    # y = exp2(log2|x| / 3), one Newton step y = (2y + |x|/y^2) / 3; zero,
    # infinity and NaN are their own cube roots; x's sign
    "cbrt": f"""define internal float @__minisycl_nv.cbrt(float %x) alwaysinline {{
  %a = call float @llvm.fabs.f32(float %x)
  %l = call float @__minisycl_nv.log2(float %a)
  %l3 = fmul float %l, {_f(1 / 3)}
  %y = call float @llvm.exp2.f32(float %l3)
  %yy = fmul float %y, %y
  %q = fdiv float %a, %yy
  %y2 = fadd float %y, %y
  %s = fadd float %y2, %q
  %y1 = fmul float %s, {_f(1 / 3)}
  %nz = fcmp one float %a, {_f(0.0)}
  %fin = fcmp one float %a, {_INF}
  %ok = and i1 %nz, %fin
  %r = select i1 %ok, float %y1, float %a
  %sg = call float @llvm.copysign.f32(float %r, float %x)
  ret float %sg
}}""",
    # m * sqrt(1 + (n/m)^2) for m = max(|x|,|y|), n = min: no overflow or
    # underflow in between; an infinite argument gives infinity (NaN or not),
    # else a NaN gives NaN; both zero: 0
    "hypot": f"""define internal float @__minisycl_nv.hypot(float %x, float %y) alwaysinline {{
{_smaller_over_larger("x", "y", "xl", "m", "n", "r")}
  %s2 = call float @llvm.fma.f32(float %r, float %r, float {_f(1.0)})
  %s = call float @llvm.sqrt.f32(float %s2)
  %h0 = fmul float %m, %s
  %zero = fcmp oeq float %m, {_f(0.0)}
  %h1 = select i1 %zero, float {_f(0.0)}, float %h0
  %nan = fcmp uno float %x, %y
  %sum = fadd float %ax, %ay
  %h2 = select i1 %nan, float %sum, float %h1
  %ix = fcmp oeq float %ax, {_INF}
  %iy = fcmp oeq float %ay, {_INF}
  %inf = or i1 %ix, %iy
  %h = select i1 %inf, float {_INF}, float %h2
  ret float %h
}}""",
}
#: the own implementations each one calls
OWN_NEEDS = {"sin": ["reduce", "sin_poly", "cos_poly"], "cos": ["reduce", "sin_poly", "cos_poly"], "tan": ["reduce"],
             "log": ["log_reduce", "log_special"], "log2": ["log_reduce", "log_special"],
             "log10": ["log_reduce", "log_special"], "ln_d": ["log_reduce"], "pow": ["ln_d", "exp_d"],
             "atan2": ["atan"], "asin": ["atan2", "sqrt_one_minus_square"], "acos": ["atan2", "sqrt_one_minus_square"],
             "sinh": ["sinh_small", "exp_half_twice"], "cosh": ["exp_half_twice"], "exp_half_twice": ["exp"],
             "tanh": ["sinh_small", "exp"], "cbrt": ["log2"]}
#: declarations of the intrinsics the own implementations call
OWN_DECLS = {
    "llvm.rint.f32": "declare float @llvm.rint.f32(float)",
    "llvm.fma.f32": "declare float @llvm.fma.f32(float, float, float)",
    "llvm.exp2.f32": "declare float @llvm.exp2.f32(float)",
    "llvm.fabs.f32": "declare float @llvm.fabs.f32(float)",
    "llvm.trunc.f32": "declare float @llvm.trunc.f32(float)",
    "llvm.sqrt.f32": "declare float @llvm.sqrt.f32(float)",
    "llvm.copysign.f32": "declare float @llvm.copysign.f32(float, float)",
    "llvm.maxnum.f32": "declare float @llvm.maxnum.f32(float, float)",
    "llvm.floor.f32": "declare float @llvm.floor.f32(float)",
    "llvm.rint.f64": "declare double @llvm.rint.f64(double)",
    "llvm.fma.f64": "declare double @llvm.fma.f64(double, double, double)",
    "llvm.maxnum.f64": "declare double @llvm.maxnum.f64(double, double)",
    "llvm.minnum.f64": "declare double @llvm.minnum.f64(double, double)",
    "llvm.minnum.f32": "declare float @llvm.minnum.f32(float, float)",
}

_INTRINSIC = re.compile(r"@llvm\.(%s)\.(f32|f64|f16)\b" % "|".join(sorted(set(MATH) - set(LIBM))))
_LIBM_CALL = re.compile(r"@(%s)(f?)(?=\()" % "|".join(LIBM))


def own_closure(fn: str) -> list[str]:
    """``fn``'s own implementation after those it calls, each once (definition order)."""
    order: list[str] = []

    def visit(name):
        for dep in OWN_NEEDS.get(name, []):
            visit(dep)
        if name not in order:
            order.append(name)
    visit(fn)
    return order


def lower_math(text: str, libdevice: bool) -> tuple[str, list[str]]:
    """Calls of ``MATH`` functions in ``text`` replaced by their wrappers; returns
    the new text and the definitions and declarations to add (see the docstring)."""
    found = {(fn, suffix, f"@llvm.{fn}.{suffix}") for fn, suffix in _INTRINSIC.findall(text)
             if suffix not in _SELECTED_ON.get(fn, ())}
    found |= {(fn, "f32" if f else "f64", f"@{fn}{f}") for fn, f in _LIBM_CALL.findall(text)}
    extra: list[str] = []
    own: list[str] = []
    for fn, suffix, callee_ref in sorted(found):
        ty = _FLOAT[suffix]
        nargs = MATH[fn]
        new = f"__minisycl_math.{fn}.{suffix}"
        text = re.sub(r"(?m)^declare [^\n]*%s\([^\n]*\n" % re.escape(callee_ref), "", text)
        text = re.sub(re.escape(callee_ref) + r"(?=\()", "@" + new, text)
        params = ", ".join(f"{ty} %x{i}" for i in range(nargs))
        body = [f"define internal {ty} @{new}({params}) alwaysinline {{"]
        if libdevice and suffix == "f64":
            callee = f"__nv_{fn}"
            extra.append(f"declare double @{callee}({', '.join(['double'] * nargs)})")
            body += [f"  %r = call double @{callee}({params})", "  ret double %r", "}"]
        else:
            if libdevice:
                callee = f"__nv_{fn}f"
                extra.append(f"declare float @{callee}({', '.join(['float'] * nargs)})")
            elif fn == "exp2":
                callee = "llvm.exp2.f32"
            else:
                callee = f"__minisycl_nv.{fn}"
                own += [name for name in own_closure(fn) if name not in own]
            conv = [] if ty == "float" else [f"  %y{i} = fp{'trunc' if ty == 'double' else 'ext'} {ty} %x{i} to float"
                                              for i in range(nargs)]
            names = [f"float %x{i}" if ty == "float" else f"float %y{i}" for i in range(nargs)]
            body += conv + [f"  %r = call float @{callee}({', '.join(names)})"]
            if ty == "float":
                body += ["  ret float %r", "}"]
            else:
                body += [f"  %rr = fp{'ext' if ty == 'double' else 'trunc'} float %r to {ty}", f"  ret {ty} %rr", "}"]
        extra.append("\n".join(body))
    extra = [OWN_F32[name] for name in own] + list(dict.fromkeys(extra))
    return text, extra
