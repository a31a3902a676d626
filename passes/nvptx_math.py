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
  arguments go through float.  ``sin``/``cos``/``tan``/``log*``/``pow`` use the
  PTX approximate instructions (``sin.approx``, ``lg2.approx``); ``exp`` is
  ``ex2.approx`` of the argument reduced by ``ln 2`` (Cody and Waite) times
  ``2^n``.  The others are written on those and on what NVPTX
  selects, with the algorithms named in each definition's comment:
  ``atan`` is Cephes' ``atanf`` (three argument ranges, a degree-9 odd
  polynomial), ``atan2``/``asin``/``acos`` reduce to it, ``sinh``/``tanh`` use
  a Taylor polynomial below 1 (``tanh``: 0.5) and ``exp`` above, ``cbrt`` is ``exp2(log2|x|/3)``
  refined by one Newton step, ``hypot`` scales by the larger magnitude.
  ``tests/runtime/test_math_builtins.py`` runs these definitions on the CPU
  (with exact ``exp``/``log2`` in place of the approximate instructions) and
  checks each against NumPy within the ulp bounds stated there.
"""
from __future__ import annotations

import re
import struct

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
    d = struct.unpack("<f", struct.pack("<f", value))[0]
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", d))[0]


_f = f32_const


def _two_part(value: float) -> tuple[float, float]:
    """``value`` as a float and the double remainder: a constant of about 48 bits for fma chains."""
    hi = struct.unpack("<f", struct.pack("<f", value))[0]
    return hi, value - hi


_LN2_HI, _LN2_LO = _two_part(0.6931471805599453)
_TWO_PI_HI, _TWO_PI_LO = _two_part(6.283185307179586)
_PI_HI, _PI_LO = _two_part(3.141592653589793)
_HALF_PI_HI, _HALF_PI_LO = _two_part(1.5707963267948966)
_INF = _f(float("inf"))

#: this module's own single-precision implementations (see the docstring)
OWN_F32 = {
    "reduce": f"""define internal float @__minisycl_nv.reduce(float %x) alwaysinline {{
  %k = fmul float %x, {_f(0.15915494309189535)}
  %kr = call float @llvm.rint.f32(float %k)
  %nk = fneg float %kr
  %r1 = call float @llvm.fma.f32(float %nk, float {_f(_TWO_PI_HI)}, float %x)
  %r = call float @llvm.fma.f32(float %nk, float {_f(_TWO_PI_LO)}, float %r1)
  ret float %r
}}""",
    "sin": """define internal float @__minisycl_nv.sin(float %x) alwaysinline {
  %r = call float @__minisycl_nv.reduce(float %x)
  %s = call float @llvm.nvvm.sin.approx.f(float %r)
  ret float %s
}""",
    "cos": """define internal float @__minisycl_nv.cos(float %x) alwaysinline {
  %r = call float @__minisycl_nv.reduce(float %x)
  %c = call float @llvm.nvvm.cos.approx.f(float %r)
  ret float %c
}""",
    "tan": """define internal float @__minisycl_nv.tan(float %x) alwaysinline {
  %r = call float @__minisycl_nv.reduce(float %x)
  %s = call float @llvm.nvvm.sin.approx.f(float %r)
  %c = call float @llvm.nvvm.cos.approx.f(float %r)
  %t = fdiv float %s, %c
  ret float %t
}""",
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
    "log2": """define internal float @__minisycl_nv.log2(float %x) alwaysinline {
  %l = call float @llvm.nvvm.lg2.approx.f(float %x)
  ret float %l
}""",
    "log": f"""define internal float @__minisycl_nv.log(float %x) alwaysinline {{
  %l = call float @llvm.nvvm.lg2.approx.f(float %x)
  %r = fmul float %l, {_f(0.6931471805599453)}
  ret float %r
}}""",
    "log10": f"""define internal float @__minisycl_nv.log10(float %x) alwaysinline {{
  %l = call float @llvm.nvvm.lg2.approx.f(float %x)
  %r = fmul float %l, {_f(0.30102999566398120)}
  ret float %r
}}""",
    "pow": f"""define internal float @__minisycl_nv.pow(float %x, float %y) alwaysinline {{
  %ax = call float @llvm.fabs.f32(float %x)
  %l = call float @llvm.nvvm.lg2.approx.f(float %ax)
  %yl = fmul float %y, %l
  %m = call float @llvm.exp2.f32(float %yl)
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
  %p1 = call float @llvm.fma.f32(float {_f(8.05374449538e-2)}, float %z, float {_f(-1.38776856032e-1)})
  %p2 = call float @llvm.fma.f32(float %p1, float %z, float {_f(1.99777106478e-1)})
  %p3 = call float @llvm.fma.f32(float %p2, float %z, float {_f(-3.33329491539e-1)})
  %pz = fmul float %p3, %z
  %r0 = call float @llvm.fma.f32(float %pz, float %t, float %t)
  %r = fadd float %b, %r0
  %s = call float @llvm.copysign.f32(float %r, float %x)
  ret float %s
}}""",
    # atan of min/max(|y|,|x|) in [0, 1], then pi/2 - r (|y| > |x|) and pi - r
    # (x negative, -0 included), the sign of y; both infinite: pi/4, both zero: 0.
    "atan2": f"""define internal float @__minisycl_nv.atan2(float %y, float %x) alwaysinline {{
  %ay = call float @llvm.fabs.f32(float %y)
  %ax = call float @llvm.fabs.f32(float %x)
  %ylarger = fcmp ogt float %ay, %ax
  %hi = select i1 %ylarger, float %ay, float %ax
  %lo = select i1 %ylarger, float %ax, float %ay
  %q0 = fdiv float %lo, %hi
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
    # asin(x) = atan2(x, sqrt((1-x)(1+x))); NaN outside [-1, 1] from the sqrt
    "asin": f"""define internal float @__minisycl_nv.asin(float %x) alwaysinline {{
  %m = fsub float {_f(1.0)}, %x
  %p = fadd float {_f(1.0)}, %x
  %c2 = fmul float %m, %p
  %c = call float @llvm.sqrt.f32(float %c2)
  %r = call float @__minisycl_nv.atan2(float %x, float %c)
  ret float %r
}}""",
    # acos(x) = atan2(sqrt((1-x)(1+x)), x)
    "acos": f"""define internal float @__minisycl_nv.acos(float %x) alwaysinline {{
  %m = fsub float {_f(1.0)}, %x
  %p = fadd float {_f(1.0)}, %x
  %s2 = fmul float %m, %p
  %s = call float @llvm.sqrt.f32(float %s2)
  %r = call float @__minisycl_nv.atan2(float %s, float %x)
  ret float %r
}}""",
    # the odd Taylor polynomial of sinh to x^11 (|x| < 1: error below 2^-32)
    "sinh_small": f"""define internal float @__minisycl_nv.sinh_small(float %a) alwaysinline {{
  %z = fmul float %a, %a
  %p0 = call float @llvm.fma.f32(float {_f(1 / 39916800)}, float %z, float {_f(1 / 362880)})
  %p1 = call float @llvm.fma.f32(float %p0, float %z, float {_f(1 / 5040)})
  %p2 = call float @llvm.fma.f32(float %p1, float %z, float {_f(1 / 120)})
  %p3 = call float @llvm.fma.f32(float %p2, float %z, float {_f(1 / 6)})
  %pz = fmul float %p3, %z
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
  %ax = call float @llvm.fabs.f32(float %x)
  %ay = call float @llvm.fabs.f32(float %y)
  %xl = fcmp ogt float %ax, %ay
  %m = select i1 %xl, float %ax, float %ay
  %n = select i1 %xl, float %ay, float %ax
  %r = fdiv float %n, %m
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
OWN_NEEDS = {"sin": ["reduce"], "cos": ["reduce"], "tan": ["reduce"], "atan2": ["atan"], "asin": ["atan", "atan2"],
             "acos": ["atan", "atan2"], "sinh": ["sinh_small", "exp_half_twice"], "cosh": ["exp_half_twice"],
             "exp_half_twice": ["exp"],
             "tanh": ["sinh_small", "exp"], "cbrt": ["log2"]}
#: declarations of the intrinsics the own implementations call
OWN_DECLS = {
    "llvm.rint.f32": "declare float @llvm.rint.f32(float)",
    "llvm.fma.f32": "declare float @llvm.fma.f32(float, float, float)",
    "llvm.nvvm.sin.approx.f": "declare float @llvm.nvvm.sin.approx.f(float)",
    "llvm.nvvm.cos.approx.f": "declare float @llvm.nvvm.cos.approx.f(float)",
    "llvm.nvvm.lg2.approx.f": "declare float @llvm.nvvm.lg2.approx.f(float)",
    "llvm.exp2.f32": "declare float @llvm.exp2.f32(float)",
    "llvm.fabs.f32": "declare float @llvm.fabs.f32(float)",
    "llvm.trunc.f32": "declare float @llvm.trunc.f32(float)",
    "llvm.sqrt.f32": "declare float @llvm.sqrt.f32(float)",
    "llvm.copysign.f32": "declare float @llvm.copysign.f32(float, float)",
    "llvm.maxnum.f32": "declare float @llvm.maxnum.f32(float, float)",
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
