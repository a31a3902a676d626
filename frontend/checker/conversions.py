"""Implicit conversions (C's rules): arithmetic conversions, conversion to
``bool``, pointer conversions (``void*``, derived-to-base, null pointer
constants), 1-dimensional ``id``/``range`` to ``long``, array decay."""
from __future__ import annotations

from .. import ast, types
from ..constants import is_null_constant
from ..types import BOOL, LONG
from .context import Part


class Conversions(Part):
    uses = {"expressions": ("expr", "rvalue")}

    def convert(self, e, to, what):
        """Implicit conversion of rvalue ``e`` to type ``to`` (C rules), or an error."""
        src = e.ty
        if src is None or to is None or src == to or src is to or src is types.ERROR or to is types.ERROR:
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
