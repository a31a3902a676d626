"""The kernel language's math built-in functions: one table for the checker
(which names exist, how many arguments, what type they compute in) and the
emitter (what each becomes in LLVM IR).

Each takes and returns floating-point values of one type (``half``, ``float``,
``double``).  Most are one LLVM intrinsic ``llvm.<intrinsic>.<f16|f32|f64>``
(``INTRINSIC``); LLVM has none for ``cbrt`` and ``hypot``, which call C's math
library (``LIBM``: ``cbrtf``/``cbrt``); ``rsqrt`` is written out as
``1 / sqrt(x)``.  On an NVIDIA GPU the ``lower-to-nvptx`` pass replaces the ones
NVPTX cannot select (``passes/nvptx_math.py``).
"""
from __future__ import annotations

__all__ = ["MATH_1", "MATH_2", "MATH_3", "MATH_CLASSIFY", "INTRINSIC", "LIBM", "WRITTEN_OUT"]

#: floating-point functions of one argument
MATH_1 = ("sqrt", "exp", "log", "sin", "cos", "fabs", "floor", "ceil", "exp2", "log2", "log10", "tan", "round", "trunc",
          "tanh", "rsqrt", "asin", "acos", "atan", "sinh", "cosh", "cbrt")
#: floating-point functions of two and three arguments (computed in the arguments' common type)
MATH_2 = ("pow", "fmin", "fmax", "atan2", "hypot", "copysign")
MATH_3 = ("fma", "mad")
#: classification: a floating-point argument, a ``bool`` result
MATH_CLASSIFY = ("isnan", "isinf")

#: built-ins that C's math library computes (LLVM has no intrinsic for them)
LIBM = frozenset(("cbrt", "hypot"))
#: built-ins the emitter writes out in other operations
WRITTEN_OUT = frozenset(("rsqrt",))
#: every other math built-in -> its LLVM intrinsic (of the result type, one to three operands)
INTRINSIC = {**{name: name for name in MATH_1 if name not in LIBM | WRITTEN_OUT},
             "pow": "pow", "fmin": "minnum", "fmax": "maxnum", "atan2": "atan2", "copysign": "copysign",
             "fma": "fma", "mad": "fmuladd"}
