"""Constant folding of checked expressions: the value C++ would compute at compile time.

Both the checker (array sizes, ``const`` initialisers, device-global
initialisers, division by zero, null pointer constants) and the emitter read
constants through ``const_fold``; it works on expressions the checker has typed
(``ty`` set), and gives ``None`` for anything that is not a constant.

The arithmetic of constant expressions is defined here once, for the folder and
for the compile-time interpreter of constructors (``constexpr``): integers are
Python ints wrapped to their type, floats rounded to their type's precision.
Undefined behaviour makes an expression not a constant expression (C++
[expr.const]): a signed result outside its type (``INT_MAX + 1``,
``-INT_MIN``, ``INT_MIN / -1``), division by zero, a shift count negative or
not below the width, a floating value converted to an integer type it does not
fit.  ``evaluate`` raises ``NotConstant`` (where, and why in words) for those,
which the checker reports wherever a constant expression is required;
``const_fold`` treats them as not constant.
"""
from __future__ import annotations

import math
import struct

from . import ast
from .symbols import ConstSym, LocalSym

__all__ = ["NotConstant", "const_fold", "evaluate", "convert_const", "is_null_constant",
           "round_float", "arith", "arith_result", "convert_value"]


class NotConstant(Exception):
    """``loc``: the construct that cannot be evaluated; ``reason``: why, in words."""

    def __init__(self, loc, reason: str):
        super().__init__(reason)
        self.loc, self.reason = loc, reason


def const_fold(e: ast.Expr):
    """Value of a constant expression (int/float), or None when it is not constant
    (undefined behaviour included)."""
    try:
        return evaluate(e)
    except NotConstant:
        return None


def evaluate(e: ast.Expr):
    """Value of ``e`` (int/float), None when ``e`` is not a constant expression by
    its form (a variable, a call...), ``NotConstant`` when it is one whose
    evaluation has undefined behaviour."""
    fold = _FOLD.get(type(e))
    return fold(e) if fold is not None else None


def _literal(e):
    return e.value


def _bool(e):
    return int(e.value)


def _name(e):
    if isinstance(e.sym, ConstSym) and not e.sym.ty.is_arith:
        return None             # a constant object (class, array): not an arithmetic value
    return e.sym.value if isinstance(e.sym, (ConstSym, LocalSym)) else None


def _cast(e):
    if e.ty is None or not e.ty.is_arith:
        return None
    v = evaluate(e.operand)
    if v is None:
        return None
    return convert_value(v, e.operand.ty, e.ty, e.loc)


def _unary(e):
    v = evaluate(e.operand)
    if v is None:
        return None
    op, ty = e.op, e.ty
    if op == "+":
        return v
    if op == "!":
        return int(not v)
    if ty is None or not ty.is_arith:
        return None
    if op == "~":
        return convert_const(~int(v), ty)
    return arith_result(-v, ty, e.loc)


def _binary(e):
    if e.kind not in ("arith", "cmp"):
        return None
    a = evaluate(e.lhs)
    if a is None:
        return None
    b = evaluate(e.rhs)
    if b is None:
        return None
    if e.kind == "cmp":
        return int(_COMPARE[e.op](a, b))
    ty = e.operand_ty
    if ty is None or not ty.is_arith or ty.is_bool:
        return None
    return arith(e.op, a, b, ty, e.loc)


_COMPARE = {"<": lambda a, b: a < b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b,
            ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def _ternary(e):
    c = evaluate(e.cond)
    if c is None:
        return None
    return evaluate(e.then if c else e.other)


def _logical(e):
    a = evaluate(e.lhs)
    if a is None:
        return None
    if e.op == "&&" and not a or e.op == "||" and a:        # the right side is not evaluated
        return int(bool(a))
    b = evaluate(e.rhs)
    return None if b is None else int(bool(b))


_FOLD = {ast.IntLit: _literal, ast.CharLit: _literal, ast.FloatLit: _literal, ast.BoolLit: _bool,
         ast.SizeofType: _literal, ast.SizeofExpr: _literal, ast.Name: _name, ast.Cast: _cast,
         ast.Unary: _unary, ast.Binary: _binary, ast.Ternary: _ternary, ast.Logical: _logical}


# -- the arithmetic of constant expressions (shared with ``constexpr``) -------------
def round_float(value, ty):
    """``value`` rounded to floating type ``ty``'s precision (overflow: infinity)."""
    try:
        value = float(value)            # (an integer converts through double, as struct.pack does)
    except OverflowError:
        return math.copysign(math.inf, value)
    if ty.bits == 64:
        return value
    fmt = "f" if ty.bits == 32 else "e"
    try:
        return struct.unpack(fmt, struct.pack(fmt, value))[0]
    except (OverflowError, struct.error):
        return math.copysign(math.inf, value)


def arith_result(v, ty, loc):
    """``v`` as a ``ty``: floats rounded, unsigned integers wrapped, a signed
    result outside the type refused (undefined behaviour is not a constant)."""
    if ty.is_float:
        return round_float(v, ty)
    if ty.is_bool:
        return int(bool(v))
    wrapped = convert_const(v, ty)
    if ty.signed and wrapped != v:
        raise NotConstant(loc, f"value {v} is outside the range of representable values of type '{ty}'")
    return wrapped


def arith(op, a, b, ty, loc):
    """``a op b`` for operands converted to ``ty`` (a shift: ``ty`` is the
    promoted left operand's type)."""
    if ty.is_float:
        if op == "/":
            if b == 0:
                raise NotConstant(loc, "division by zero")
            return round_float(a / b, ty)
        return round_float({"+": a + b, "-": a - b, "*": a * b}[op], ty)
    if op in ("/", "%"):
        if b == 0:
            raise NotConstant(loc, "division by zero")
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)     # C truncates towards zero
        return arith_result(q if op == "/" else a - q * b, ty, loc)
    if op in ("<<", ">>"):
        if b < 0:
            raise NotConstant(loc, f"negative shift count {b}")
        if b >= ty.bits:
            raise NotConstant(loc, f"shift count {b} >= width of type '{ty}' ({ty.bits} bits)")
        return a >> b if op == ">>" else convert_const(a << b, ty)     # C++20: both defined
    return arith_result({"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b}[op], ty, loc)


def convert_value(v, src, ty, loc):
    """Constant ``v`` of arithmetic type ``src`` converted to ``ty`` (an implicit
    or explicit conversion): a floating value must fit an integer type."""
    if ty.is_float:
        return round_float(v, ty)
    if src is not None and src.is_float and not ty.is_bool:
        if not math.isfinite(v) or convert_const(int(v), ty) != int(v):
            raise NotConstant(loc, f"value {_float_text(v)} is outside the range of representable values of "
                                   f"type '{ty}'")
    return convert_const(v, ty)


def _float_text(v) -> str:
    return repr(v) if math.isfinite(v) else ("-inf" if v < 0 else "inf")


def convert_const(v, ty):
    """``v`` converted to arithmetic type ``ty`` as C converts (integers wrap)."""
    if ty.is_bool:
        return int(bool(v))
    if ty.is_int:
        try:
            v = int(v)
        except (OverflowError, ValueError):
            return None
        v &= (1 << ty.bits) - 1
        if ty.signed and v >= 1 << (ty.bits - 1):
            v -= 1 << ty.bits
        return v
    if ty.is_float:
        return float(v)
    return v


def is_null_constant(e) -> bool:
    """Whether ``e`` is a null pointer constant: ``nullptr`` or an integer constant 0
    (not a ``const`` variable that holds 0)."""
    if isinstance(e, ast.NullLit):
        return True
    return (e.ty.is_int or e.ty.is_bool) and const_fold(e) == 0 and not isinstance(e, ast.Name)
