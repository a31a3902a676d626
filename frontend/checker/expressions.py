"""Expressions other than operators and calls: literals, names, members,
subscripts, dereference and address-of, assignment, increments, ``sizeof`` and
placement ``new``.  Each ``e_<Node>`` types one node in place (``ty``,
``lvalue``) and returns it, or the node that replaces it."""
from __future__ import annotations

import math

from .. import ast, types
from ..constants import const_fold, round_float
from ..data_layout import flat_fields
from ..symbols import ConstSym, DeviceGlobalSym, FuncSym, LocalSym, SpecIdSym, same_device_global_type
from ..types import BOOL, DOUBLE, FLOAT, GENERIC, HALF, INT, LOCAL, LONG, VOID, PointerType
from .calls import BUILTINS, constant_root, is_device_global
from .context import Part

#: bits -> the largest finite and the smallest positive value of that floating
#: type, as clang writes them in its warnings about out-of-range literals
_FLOAT_LIMITS = {16: ("6.5504E+4", "5.9604645E-8"), 32: ("3.40282347E+38", "1.40129846E-45"),
                 64: ("1.7976931348623157E+308", "4.9406564584124654E-324")}


def address_space(e) -> int:
    """The address space of lvalue ``e``'s storage: ``LOCAL`` for work-group memory
    (a ``local`` variable, or what a ``local T*`` points to), else ``GENERIC``."""
    t = type(e)
    while t is ast.Index and e.kind == "array" or t is ast.Member and not e.arrow:
        e = e.base
        t = type(e)
    if t is ast.Name:
        return LOCAL if isinstance(e.sym, LocalSym) and e.sym.workgroup else GENERIC
    pointer = e.base if t is ast.Index or t is ast.Member else e.operand if t is ast.Deref else None
    if pointer is not None and pointer.ty is not None and pointer.ty.is_ptr:
        return pointer.ty.space
    return GENERIC


def _spelling(e) -> str:
    return f"{e.cls}::{e.name}" if isinstance(e, ast.Scoped) else e.name


class Expressions(Part):
    uses = {"scopes": ("lookup_local", "capture"), "conversions": ("convert",),
            "type_names": ("resolve_type", "is_complete", "note_type_aspects"),
            "operators": ("binary",),
            "groups": ("compound_update", "increment")}

    def connect(self):
        super().connect()
        self.sizeof = self.cx.sizeof
        self.dispatch = {}      # ast class -> its e_<Node> method, in this part or operators/calls
        for part in (self, self.cx.operators, self.cx.calls):
            for name in dir(type(part)):
                if name.startswith("e_"):
                    self.dispatch[getattr(ast, name[2:])] = getattr(part, name)

    def expr(self, e):
        """Type expression ``e`` (its ``e_<Node>`` method)."""
        return self.dispatch[type(e)](e)

    def this(self, loc):
        if self.cx.this_sym is None:
            self.error(loc, "'this' can only be used inside a method")
            return None
        self.capture(self.cx.this_sym)
        e = ast.This(loc)
        e.sym = self.cx.this_sym
        e.ty = self.cx.this_sym.ty
        e.lvalue = False
        return e

    def rvalue(self, e):
        """Array lvalues decay to a pointer to their first element."""
        if e.ty is not None and e.ty.is_array:
            return ast.Cast(e.loc, None, e, PointerType(e.ty.elem, address_space(e)), "decay")
        return e

    def set(self, e, ty, lvalue=False):
        e.ty, e.lvalue = ty, lvalue
        if (ty is DOUBLE or ty is HALF) and self.cx.fn is not None:     # the scalars with an aspect
            self.note_type_aspects(ty, e.loc, "an expression of type '{}'")
        return e

    def bad(self, e):
        e.ty, e.lvalue = types.ERROR, True
        return e

    def e_IntLit(self, e):
        v = e.value
        suffix = e.text.lower().lstrip("0123456789abcdefx")
        hexlike = e.text[:2].lower() in ("0x", "0b") or (len(e.text) > 1 and e.text[0] == "0")
        if "u" in suffix:
            ty = types.UINT if "l" not in suffix and v < 2 ** 32 else types.ULONG
        elif "l" in suffix:
            ty = LONG if v < 2 ** 63 else types.ULONG
        elif v < 2 ** 31:
            ty = INT
        elif hexlike and v < 2 ** 32:
            ty = types.UINT
        elif v < 2 ** 63:
            ty = LONG
        else:
            ty = types.ULONG
        if v >= 2 ** 64:
            self.error(e.loc, "integer literal is too large")
            e.value = 0
        return self.set(e, ty)

    def e_FloatLit(self, e):
        ty = {"f": FLOAT, "h": HALF}.get(e.suffix, DOUBLE)
        value = round_float(e.value, ty)
        if math.isinf(value):
            self.cx.diags.warning(e.loc, f"magnitude of floating-point constant too large for type '{ty}'; "
                                         f"maximum is {_FLOAT_LIMITS[ty.bits][0]}")
        elif value == 0 and any(c in "123456789" for c in e.text.lower().partition("e")[0]):
            self.cx.diags.warning(e.loc, f"magnitude of floating-point constant too small for type '{ty}'; "
                                         f"minimum is {_FLOAT_LIMITS[ty.bits][1]}")
        e.value = value         # what the constant is: infinity or zero after those warnings
        return self.set(e, ty)

    def e_BoolLit(self, e):
        return self.set(e, BOOL)

    def e_CharLit(self, e):
        return self.set(e, types.CHAR)

    def e_StrLit(self, e):
        self.error(e.loc, "a string literal can only be an argument of print")
        return self.bad(e)

    def print_text(self, e):
        """A string literal given to ``print`` (the one place strings may appear)."""
        return self.set(e, PointerType(types.CHAR))

    def e_NullLit(self, e):
        return self.set(e, PointerType(VOID))

    def e_This(self, e):
        return self.this(e.loc) or self.bad(e)

    def e_InitList(self, e):
        self.error(e.loc, "a brace list can only initialise a variable")
        return self.bad(e)

    def e_Name(self, e: ast.Name):
        sym = self.lookup_local(e.name)
        if sym is not None:
            e.sym = sym
            return self.set(e, sym.ty, lvalue=True)
        if self.cx.fn is not None and self.cx.fn.cls is not None:
            found = self.cx.fn.cls.find_field(e.name)
            if found is not None:
                self.check_access(self.cx.fn.cls, e.name, e.loc)
                this = self.this(e.loc)
                m = ast.Member(e.loc, this, e.name, True)
                m.path = found[0]
                return self.set(m, found[1], lvalue=True)
            cls = self.cx.fn.cls
            while cls is not None:
                if e.name in cls.statics:
                    return self.dg_ref(e, cls.statics[e.name])
                cls = cls.base
        sym = self.globals.get(e.name)
        if isinstance(sym, DeviceGlobalSym):
            return self.dg_ref(e, sym)
        if isinstance(sym, ConstSym):
            e.sym = sym
            # a constant of class or array type is a read-only object (members, elements)
            return self.set(e, sym.ty, lvalue=not sym.ty.is_arith)
        if isinstance(sym, FuncSym) or e.name in BUILTINS:
            self.error(e.loc, f"function '{e.name}' used as a value; call it with '()'")
            return self.bad(e)
        self.error(e.loc, f"use of undeclared identifier '{e.name}'")
        return self.bad(e)

    def e_SpecConstGet(self, e: ast.SpecConstGet):
        """``kh.get_specialization_constant<name>()``: ``kh`` the kernel's
        ``kernel_handler`` parameter, ``name`` a ``specialization_id``; the value has its ``T``."""
        h = e.handler = self.expr(e.handler)
        if h.ty is types.ERROR:
            return self.bad(e)
        if not h.ty.is_handler:
            self.error(h.loc, f"get_specialization_constant<{e.name}>() needs a kernel_handler (the last parameter "
                              f"of a kernel), not an expression of type '{h.ty}'")
            return self.bad(e)
        sym = self.globals.get(e.name)
        if sym is None:
            self.error(e.name_loc, f"unknown specialization constant '{e.name}'")
            return self.bad(e)
        if not isinstance(sym, SpecIdSym):
            self.error(e.name_loc, f"'{e.name}' is not a specialization_id")
            return self.bad(e)
        e.sym = sym
        return self.set(e, sym.ty)

    def check_access(self, cls, name, loc):
        """``private:`` members are for the methods of their class, ``protected:``
        ones for those of derived classes too (C++'s rule)."""
        owner = cls.owner_of(name)
        level = owner.access.get(name) if owner is not None else None
        if level is None:
            return
        here = self.cx.fn.cls if self.cx.fn is not None else None
        if here is owner or level == "protected" and here is not None and here.derives_from(owner):
            return
        self.error(loc, f"'{name}' is a {level} member of '{owner.name}'",
                   [self.note(owner.loc, f"'{owner.name}' is defined here")])

    def dg_ref(self, e, g):
        e.sym = g
        if self.cx.fn is not None and self.cx.fn.is_host and not self.cx.static_member_use:
            self.error(e.loc, f"device_global '{g.name}' cannot be accessed from host function '{self.cx.fn.display}'; use queue.copy/memcpy")
        return self.set(e, g.ty, lvalue=True)

    def dg_arrow(self, base, loc) -> bool:
        """``g->m`` on device global ``g``: ``device_global::operator->`` is available
        only when ``->`` is valid on ``T`` (the spec: "Available only when
        operator-> is valid for objects of type T"), and the language has no
        ``operator->``, so ``T`` must be a pointer to a class.  Whether ``base``
        may take ``->`` (an error, and False, when it is a device global that cannot)."""
        if not is_device_global(base) or base.ty.is_ptr or base.ty is types.ERROR:
            return True
        hint = f"; write '{_spelling(base)}.get().' or '{_spelling(base)}.' to reach a member" if base.ty.is_class else ""
        self.error(loc, f"device_global<{base.ty}>::operator-> is not available: '->' is not valid on '{base.ty}' "
                        f"(T must be a pointer to a class){hint}")
        return False

    def e_Scoped(self, e: ast.Scoped):
        cls = self.classes.get(e.cls)
        while cls is not None:
            if e.name in cls.statics:
                self.check_access(cls, e.name, e.loc)
                return self.dg_ref(e, cls.statics[e.name])
            cls = cls.base
        self.error(e.loc, f"'{e.cls}' has no static member '{e.name}'")
        return self.bad(e)

    def e_Unary(self, e: ast.Unary):
        x = self.rvalue(self.expr(e.operand))
        x = self.item_to_long(x)
        if x.ty is types.ERROR:
            return self.bad(e)
        if e.op == "!":
            e.operand = self.convert(x, BOOL, "operand of '!'")
            return self.set(e, BOOL)
        if not x.ty.is_arith or (e.op == "~" and not (x.ty.is_int or x.ty.is_bool)):
            self.error(e.loc, f"invalid operand type '{x.ty}' for unary '{e.op}'")
            return self.bad(e)
        ty = types.promote(x.ty) if not x.ty.is_float else x.ty
        e.operand = self.convert(x, ty, "operand")
        return self.set(e, ty)

    def e_Deref(self, e):
        x = self.rvalue(self.expr(e.operand))
        if x.ty is types.ERROR:
            return self.bad(e)
        if not x.ty.is_ptr or x.ty.pointee.is_void:
            self.error(e.loc, f"cannot dereference a value of type '{x.ty}'")
            return self.bad(e)
        e.operand = x
        return self.set(e, x.ty.pointee, lvalue=True)

    def e_AddrOf(self, e):
        x = self.expr(e.operand)
        root = constant_root(x)
        if root is not None:
            self.error(e.loc, f"cannot take the address of constant '{root.name}' (the language has no pointers "
                              f"to const objects); copy it into a variable first")
            return self.bad(e)
        if not x.lvalue:
            self.error(e.loc, "cannot take the address of an rvalue")
            return self.bad(e)
        e.operand = x
        return self.set(e, PointerType(x.ty, address_space(x)))

    def e_IncDec(self, e):
        x = self.expr(e.operand)
        if x.ty.is_reducer:
            return self.increment(e, x)
        if not x.lvalue or not (x.ty.is_arith or x.ty.is_ptr) or x.ty.is_bool:
            self.error(e.loc, f"'{e.op}' needs a modifiable arithmetic or pointer lvalue")
            return self.bad(e)
        self.check_modifiable(x, e.loc)
        e.operand = x
        return self.set(e, x.ty)

    def item_to_long(self, x):
        if x.ty.is_item and x.ty.dims == 1 and x.ty.kind != "nd_item":
            return ast.Cast(x.loc, None, x, LONG, "item")
        return x

    def check_modifiable(self, x, loc):
        root = constant_root(x)
        if isinstance(x, ast.Name) and isinstance(x.sym, LocalSym) and x.sym.const:
            self.error(loc, f"cannot assign to const variable '{x.name}'")
        elif root is not None:
            self.error(loc, f"cannot assign to constant '{root.name}'" if root is getattr(x, "sym", None)
                       else f"cannot assign to a part of constant '{root.name}'")

    def e_Assign(self, e: ast.Assign):
        target = self.expr(e.target)
        if not target.lvalue:
            self.error(e.loc, "expression is not assignable")
            return self.bad(e)
        if target.ty.is_array:
            self.error(e.loc, f"arrays cannot be assigned ('{target.ty}')")
            return self.bad(e)
        if target.ty.is_reducer:
            return self.compound_update(e, target)
        self.check_modifiable(target, e.loc)
        e.target = target
        value = self.expr(e.value)
        if e.op is None and is_device_global(target) and is_device_global(value) \
                and same_device_global_type(target.sym, value.sym):
            self.error(e.loc, f"'{_spelling(target)}' cannot be assigned from device_global '{_spelling(value)}': "
                              f"device_global's copy assignment is deleted; assign the value, "
                              f"'{_spelling(target)} = {_spelling(value)}.get()'")
            return self.bad(e)
        value = self.rvalue(value)
        if e.op is None:
            e.value = self.convert(value, target.ty, "assignment")
        else:
            placeholder = ast.Loaded(target.loc, target.ty)
            if target.ty.is_item:
                self.error(e.loc, f"compound assignment to '{target.ty}' is not supported")
                return self.bad(e)
            binary = ast.Binary(e.loc, e.op, placeholder, value)
            binary = self.binary(binary, placeholder, self.item_to_long(value))
            e.binary = self.convert(binary, target.ty, "assignment")
        return self.set(e, target.ty)

    def e_SizeofType(self, e):
        ty = self.resolve_type(e.spec, e.dims)
        if ty is None or not self.is_complete(ty, e.loc, "sizeof operand"):
            e.value = 1
        else:
            e.value = self.sizeof(ty)
        return self.set(e, types.ULONG)

    def e_SizeofExpr(self, e):
        x = self.expr(e.operand)
        e.value = self.sizeof(x.ty) if not x.ty.is_void else 1
        e.operand = x
        return self.set(e, types.ULONG)

    def e_New(self, e: ast.New):
        place = self.rvalue(self.expr(e.place))
        cls = self.classes.get(e.cls_name)
        if not place.ty.is_ptr:
            self.error(e.place.loc, f"placement new needs a pointer, not '{place.ty}'")
            return self.bad(e)
        e.place, e.cls = place, cls
        args = [self.item_to_long(self.rvalue(self.expr(a))) for a in (e.args or [])]
        ctor = next((c for c in cls.ctors if len(c.params) == len(args)), None)
        if ctor is not None:
            e.args = [self.convert(a, t, f"argument {i + 1} of constructor") for i, (a, (_, t)) in enumerate(zip(args, ctor.params))]
            e.ctor = ctor
        elif cls.ctors and args or cls.ctors and not any(len(c.params) == 0 for c in cls.ctors):
            self.error(e.loc, f"no constructor of '{cls.name}' takes {len(args)} argument(s)")
            return self.bad(e)
        else:
            flat = flat_fields(cls)
            if len(args) > len(flat):
                self.error(e.loc, f"too many initialisers for '{cls.name}' ({len(args)} given, {len(flat)} fields)")
                return self.bad(e)
            e.args = [self.convert(a, fty, f"initialiser of field '{fname}'") for a, (fname, fty) in zip(args, flat)]
        return self.set(e, PointerType(cls))

    def e_Index(self, e: ast.Index):
        base = self.expr(e.base)
        idx = self.item_to_long(self.rvalue(self.expr(e.index)))
        if base.ty is types.ERROR or idx.ty is types.ERROR:
            return self.bad(e)
        if base.ty.is_item:
            if base.ty.kind == "nd_item":
                self.error(e.loc, "nd_item cannot be indexed; use get_global_id(d)")
                return self.bad(e)
            e.base, e.index, e.kind = base, self.convert(idx, INT, "index"), "item"
            self.check_dim(e.index, base.ty.dims)
            return self.set(e, LONG, lvalue=base.lvalue)
        if not (idx.ty.is_int or idx.ty.is_bool):
            self.error(e.index.loc, f"array subscript is not an integer ('{idx.ty}')")
            return self.bad(e)
        if base.ty.is_array and base.lvalue:
            e.base, e.index, e.kind = base, self.convert(idx, LONG, "index"), "array"
            return self.set(e, base.ty.elem, lvalue=True)
        base = self.rvalue(base)
        if not base.ty.is_ptr or base.ty.pointee.is_void:
            self.error(e.loc, f"subscripted value of type '{base.ty}' is not an array or pointer")
            return self.bad(e)
        e.base, e.index, e.kind = base, self.convert(idx, LONG, "index"), "ptr"
        return self.set(e, base.ty.pointee, lvalue=True)

    def check_dim(self, idx, dims):
        v = const_fold(idx)
        if v is not None and not 0 <= v < dims:
            self.error(idx.loc, f"dimension {v} is out of range for {dims} dimension(s)")

    def e_Member(self, e: ast.Member):
        base = self.expr(e.base)
        ty = base.ty
        if ty is types.ERROR:
            return self.bad(e)
        if e.arrow and not self.dg_arrow(base, e.loc):
            return self.bad(e)
        if e.arrow:
            base = self.rvalue(base)
            if not base.ty.is_ptr or not base.ty.pointee.is_class:
                self.error(e.loc, f"member reference type '{base.ty}' is not a pointer to a class")
                return self.bad(e)
            cls = base.ty.pointee
        else:
            if not ty.is_class:
                self.error(e.loc, f"member reference base type '{ty}' is not a class"
                           + ("; did you mean '->'?" if ty.is_ptr else ""))
                return self.bad(e)
            cls = ty
        found = cls.find_field(e.name)
        if found is None:
            if cls.find_method(e.name) is not None:
                self.error(e.loc, f"method '{e.name}' must be called")
            else:
                self.error(e.loc, f"no member named '{e.name}' in '{cls.name}'")
            return self.bad(e)
        self.check_access(cls, e.name, e.loc)
        e.base = base
        e.path = found[0]
        return self.set(e, found[1], lvalue=e.arrow or base.lvalue)

