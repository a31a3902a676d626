"""Operators: binary arithmetic, shifts, comparisons and pointer arithmetic
(C's usual arithmetic conversions), ``&&``/``||``, ``?:`` and explicit casts."""
from __future__ import annotations

from .. import ast, types
from ..constants import const_fold, is_null_constant
from ..types import BOOL, LONG
from .context import Part

_COMPARISONS = ("==", "!=", "<", ">", "<=", ">=")


class Operators(Part):
    uses = {"expressions": ("expr", "rvalue", "set", "bad", "item_to_long"), "conversions": ("convert", "cond"),
            "type_names": ("resolve_type",)}

    def e_Binary(self, e: ast.Binary):
        a = self.item_to_long(self.rvalue(self.expr(e.lhs)))
        b = self.item_to_long(self.rvalue(self.expr(e.rhs)))
        return self.binary(e, a, b)

    def binary(self, e, a, b):
        """Type binary operator ``e`` on already-typed operands ``a`` and ``b``
        (compound assignments call this with the loaded target as ``a``)."""
        op = e.op
        ta, tb = a.ty, b.ty
        if ta is types.ERROR or tb is types.ERROR:
            return self.bad(e)
        if op in ("+", "-") and (ta.is_ptr or tb.is_ptr):
            return self.pointer_arithmetic(e, a, b)
        if op in _COMPARISONS and (ta.is_ptr or tb.is_ptr):
            return self.pointer_comparison(e, a, b)
        if not ta.is_arith or not tb.is_arith:
            return self.invalid_operands(e, ta, tb)
        if op in ("<<", ">>"):
            if ta.is_float or tb.is_float:
                return self.invalid_operands(e, ta, tb)
            ty = types.promote(ta)
            e.lhs, e.rhs, e.kind, e.operand_ty = self.convert(a, ty, "operand"), self.convert(b, ty, "operand"), "arith", ty
            return self.set(e, ty)
        ty = types.usual_arithmetic(ta, tb)
        if op in ("%", "&", "|", "^") and ty.is_float:
            return self.invalid_operands(e, ta, tb)
        e.lhs, e.rhs, e.operand_ty = self.convert(a, ty, "operand"), self.convert(b, ty, "operand"), ty
        if op in _COMPARISONS:
            e.kind = "cmp"
            return self.set(e, BOOL)
        e.kind = "arith"
        if op in ("/", "%") and ty.is_int and const_fold(e.rhs) == 0:
            self.error(e.loc, "division by zero")
        return self.set(e, ty)

    def invalid_operands(self, e, ta, tb):
        self.error(e.loc, f"invalid operands to binary '{e.op}' ('{ta}' and '{tb}')")
        return self.bad(e)

    def pointer_arithmetic(self, e, a, b):
        """``p - q``, ``p + n``, ``n + p``, ``p - n``."""
        op = e.op
        ta, tb = a.ty, b.ty
        if ta.is_ptr and tb.is_ptr and op == "-":
            if ta.pointee != tb.pointee:
                self.error(e.loc, f"cannot subtract '{tb}' from '{ta}'")
                return self.bad(e)
            e.lhs, e.rhs, e.kind = a, b, "ptr_diff"
            return self.set(e, LONG)
        if ta.is_ptr and (tb.is_int or tb.is_bool) or op == "+" and tb.is_ptr and (ta.is_int or ta.is_bool):
            ptr, idx = (a, b) if ta.is_ptr else (b, a)
            if ptr.ty.pointee.is_void or ptr.ty.pointee.is_class and not ptr.ty.pointee.complete:
                self.error(e.loc, f"arithmetic on a pointer to incomplete type '{ptr.ty.pointee}'")
                return self.bad(e)
            e.lhs, e.rhs, e.kind = ptr, self.convert(idx, LONG, "offset"), "ptr_add" if op == "+" else "ptr_sub"
            return self.set(e, ptr.ty)
        return self.invalid_operands(e, ta, tb)

    def pointer_comparison(self, e, a, b):
        """Comparing two pointers, or a pointer with a null pointer constant."""
        ta, tb = a.ty, b.ty
        if ta.is_ptr and tb.is_ptr:
            if not (ta == tb or ta.pointee.is_void or tb.pointee.is_void):
                self.error(e.loc, f"comparison of distinct pointer types ('{ta}' and '{tb}')")
            e.lhs, e.rhs = a, b
        elif is_null_constant(a) or is_null_constant(b):
            e.lhs = self.convert(a, tb if tb.is_ptr else ta, "operand")
            e.rhs = self.convert(b, tb if tb.is_ptr else ta, "operand")
        else:
            self.error(e.loc, f"comparison between pointer and integer ('{ta}' and '{tb}')")
            return self.bad(e)
        e.kind = "ptr_cmp"
        return self.set(e, BOOL)

    def e_Logical(self, e):
        e.lhs = self.cond(e.lhs)
        e.rhs = self.cond(e.rhs)
        return self.set(e, BOOL)

    def e_Ternary(self, e):
        e.cond = self.cond(e.cond)
        a = self.item_to_long(self.rvalue(self.expr(e.then)))
        b = self.item_to_long(self.rvalue(self.expr(e.other)))
        if a.ty.is_arith and b.ty.is_arith:
            ty = types.usual_arithmetic(a.ty, b.ty) if not (a.ty.is_bool and b.ty.is_bool) else BOOL
        elif a.ty == b.ty:
            ty = a.ty
        elif a.ty.is_ptr and is_null_constant(b):
            ty = a.ty
        elif b.ty.is_ptr and is_null_constant(a):
            ty = b.ty
        else:
            self.error(e.loc, f"incompatible operand types in '?:' ('{a.ty}' and '{b.ty}')")
            return self.bad(e)
        if ty.is_void:
            self.error(e.loc, "'?:' operands cannot be void")
            return self.bad(e)
        e.then, e.other = self.convert(a, ty, "operand"), self.convert(b, ty, "operand")
        return self.set(e, ty)

    def e_Cast(self, e: ast.Cast):
        ty = self.resolve_type(e.spec)
        x = self.item_to_long(self.rvalue(self.expr(e.operand)))
        if ty is None:
            return self.bad(e)
        e.operand = x
        src = x.ty
        if ty.is_void:
            e.kind = "void"
        elif ty == src:
            e.kind = "noop"
        elif ty.is_arith and src.is_arith:
            e.kind = "conv"
        elif ty.is_ptr and src.is_ptr and ty.space != src.space:
            if ty.space != 0:
                self.error(e.loc, f"cannot cast '{src}' to '{ty}': only work-group memory itself is local")
                return self.bad(e)
            e.kind = "generic"
        elif ty.is_ptr and src.is_ptr:
            e.kind = "ptr"
        elif ty.is_ptr and (src.is_int or src.is_bool):
            e.kind = "int2ptr"
        elif (ty.is_int or ty.is_bool) and src.is_ptr:
            e.kind = "ptr2int" if ty.is_int else "tobool"
        else:
            self.error(e.loc, f"cannot cast '{src}' to '{ty}'")
            return self.bad(e)
        e.ty, e.lvalue = ty, False
        return e

