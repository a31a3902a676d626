"""Constant folding of checked expressions: the value C would compute at compile time.

Both the checker (array sizes, ``const`` initialisers, division by zero, null
pointer constants) and the emitter read constants through ``const_fold``; it
works on expressions the checker has typed (``ty`` set), and gives ``None``
for anything that is not a constant.
"""
from __future__ import annotations

from . import ast
from .symbols import ConstSym, LocalSym

_UNARY = {"-": lambda x: -x, "+": lambda x: x, "~": lambda x: ~int(x), "!": lambda x: int(not x)}
_BINARY = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
           "/": lambda a, b: a / b, "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
           "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
           "<": lambda a, b: int(a < b), ">": lambda a, b: int(a > b), "<=": lambda a, b: int(a <= b),
           ">=": lambda a, b: int(a >= b), "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b)}


def const_fold(e: ast.Expr):
    """Value of a constant expression (int/float/bool), or None when it is not constant."""
    fold = _FOLD.get(type(e))
    return fold(e) if fold is not None else None


def _literal(e):
    return e.value


def _bool(e):
    return int(e.value)


def _name(e):
    return e.sym.value if isinstance(e.sym, (ConstSym, LocalSym)) else None


def _cast(e):
    if e.ty is None or not e.ty.is_arith:
        return None
    v = const_fold(e.operand)
    return None if v is None else convert_const(v, e.ty)


def _unary(e):
    v = const_fold(e.operand)
    return None if v is None else _UNARY[e.op](v)


def _binary(e):
    if e.kind not in ("arith", "cmp"):
        return None
    a, b = const_fold(e.lhs), const_fold(e.rhs)
    if a is None or b is None:
        return None
    both_int = isinstance(a, int) and isinstance(b, int)
    try:
        if e.op == "/" and both_int:          # C truncates towards zero
            return int(a / b) if b else None
        if e.op == "%" and both_int:
            return a - int(a / b) * b if b else None
        v = _BINARY[e.op](a, b)
    except (ZeroDivisionError, TypeError, ValueError, OverflowError):
        return None
    return convert_const(v, e.ty) if e.ty is not None and e.ty.is_arith else v


def _ternary(e):
    c = const_fold(e.cond)
    if c is None:
        return None
    return const_fold(e.then if c else e.other)


def _logical(e):
    a, b = const_fold(e.lhs), const_fold(e.rhs)
    if a is None or b is None:
        return None
    return int(bool(a) and bool(b)) if e.op == "&&" else int(bool(a) or bool(b))


_FOLD = {ast.IntLit: _literal, ast.CharLit: _literal, ast.FloatLit: _literal, ast.BoolLit: _bool,
         ast.SizeofType: _literal, ast.SizeofExpr: _literal, ast.Name: _name, ast.Cast: _cast,
         ast.Unary: _unary, ast.Binary: _binary, ast.Ternary: _ternary, ast.Logical: _logical}


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
