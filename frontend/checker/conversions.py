"""Implicit conversions (C's rules): arithmetic conversions, conversion to
``bool``, pointer conversions (``void*``, derived-to-base, null pointer
constants), 1-dimensional ``id``/``range`` to ``long``, array decay; and
C++11's rule for the elements of a brace list: no narrowing conversion
([dcl.init.list])."""
from __future__ import annotations

import math

from .. import ast, types
from ..constants import NotConstant, evaluate, is_null_constant, round_float
from ..types import BOOL, LONG
from .context import Part


class Conversions(Part):
    uses = {"expressions": ("expr", "rvalue")}

    def convert(self, e, to, what):
        """Implicit conversion of rvalue ``e`` to type ``to`` (C rules), or an error."""
        src = e.ty
        if src is to or src is None or to is None or src == to or src is types.ERROR or to is types.ERROR:
            return e
        if src.is_array:
            e = self.rvalue(e)
            src = e.ty
            if src == to:
                return e
        if to.is_bool and (src.is_arith or src.is_ptr):
            return ast.Cast(e.loc, None, e, to, "tobool")
        if to.is_arith and src.is_item and src.dims == 1 and src.kind != "nd_item":
            return self.convert(ast.Cast(e.loc, None, e, LONG, "item"), to, what)
        if to.is_arith and src.is_arith:
            return ast.Cast(e.loc, None, e, to, "conv")
        if to.is_ptr:
            kind = _pointer_conversion(e, src, to)
            if kind is not None:
                return ast.Cast(e.loc, None, e, to, kind)
        if src.is_void:
            self.error(e.loc, f"{what}: a void value cannot be used")
        else:
            self.error(e.loc, f"{what}: cannot convert '{src}' to '{to}'")
        return ast.Cast(e.loc, None, e, to, "invalid")

    def convert_braced(self, e, to, what):
        """``convert`` for an element of a brace list (``T x{v}``, ``T x = {v}``,
        aggregate members, ``device_global<T> g{v}``, constructor arguments in
        braces): a narrowing conversion is an error, as in C++11."""
        reason = narrowing(e, to)
        if reason is not None:
            self.error(e.loc, reason)
        return self.convert(e, to, what)

    def cond(self, e):
        """A condition: ``e`` converted to ``bool``."""
        e = self.rvalue(self.expr(e))
        return self.convert(e, BOOL, "condition")


def _pointer_conversion(e, src, to) -> str | None:
    """The cast kind of an implicit conversion of ``e`` (type ``src``) to pointer
    type ``to``, or None when there is none."""
    if src.is_ptr:
        if src.space != to.space:
            # work-group memory is also reachable through a generic pointer (OpenCL's
            # generic address space); a generic pointer never becomes a local one
            same = to.pointee == src.pointee or to.pointee.is_void
            return "generic" if to.space == 0 and same else None
        if to.pointee == src.pointee or to.pointee.is_void or src.pointee.is_void:
            return "ptr"
        if src.pointee.is_class and to.pointee.is_class and src.pointee.derives_from(to.pointee):
            return "upcast"
        return None
    if is_null_constant(e):
        return "null"
    return None


def narrowing(e, to) -> str | None:
    """Why converting rvalue ``e`` to ``to`` in a brace list is a narrowing
    conversion (C++11 [dcl.init.list]: floating to integer; floating to a
    narrower floating type, integer to floating, or integer to an integer type
    that cannot hold all of the source type's values, unless ``e`` is a
    constant whose value survives the conversion), in clang's words; None when
    it is not one."""
    src = e.ty
    if src is None or to is None or src is types.ERROR or to is types.ERROR or not to.is_arith:
        return None
    if src.is_item:
        src = types.LONG
    if not src.is_arith or src == to:
        return None
    if src.is_float and not to.is_float:
        return f"type '{src}' cannot be narrowed to '{to}' in initializer list"
    if src.is_float and to.bits >= src.bits or not src.is_float and not to.is_float and _holds(to, src):
        return None
    try:
        v = evaluate(e)
    except NotConstant:
        v = None
    if v is None:
        return f"non-constant-expression cannot be narrowed from type '{src}' to '{to}' in initializer list"
    if _survives(v, src, to):
        return None
    shown = repr(v) if isinstance(v, float) else str(v)
    return f"constant expression evaluates to {shown} which cannot be narrowed to type '{to}'"


def _holds(to, src) -> bool:
    """Whether integer (or bool) type ``to`` can represent every value of ``src``."""
    if src.is_bool:
        return True
    if to.is_bool:
        return False
    lo, hi = _bounds(src)
    tlo, thi = _bounds(to)
    return tlo <= lo and hi <= thi


def _bounds(ty):
    return (-(1 << (ty.bits - 1)), (1 << (ty.bits - 1)) - 1) if ty.signed else (0, (1 << ty.bits) - 1)


def _survives(v, src, to) -> bool:
    """Whether constant ``v`` of type ``src`` converts to ``to`` without narrowing."""
    if src.is_float:                     # to a narrower floating type: in range (inexact is fine)
        return not math.isfinite(v) or math.isfinite(round_float(v, to))
    if to.is_float:                      # an integer: exactly representable
        converted = round_float(v, to)
        return math.isfinite(converted) and int(converted) == v
    if to.is_bool:
        return v in (0, 1)
    lo, hi = _bounds(to)
    return lo <= v <= hi
