"""Constant evaluation in the checker: array sizes, file-scope ``const``
variables and device-global initialisers (values folded by ``frontend.constants``)."""
from __future__ import annotations

from .. import ast
from ..constants import const_fold
from ..data_layout import flat_fields
from ..symbols import ConstSym
from .brace_elision import nest
from .context import Part


class Constants(Part):
    uses = {"expressions": ("expr",), "conversions": ("convert",), "declarations": ("define_global",)}

    def array_size(self, dim, loc):
        if dim is None:
            self.error(loc, "array size missing")
            return None
        e = self.expr(dim)
        v = const_fold(e)
        if not isinstance(v, int) or isinstance(v, bool) or not e.ty.is_int and not e.ty.is_bool:
            self.error(dim.loc, "array size must be an integer constant expression")
            return None
        if v <= 0:
            self.error(dim.loc, f"array size must be positive, not {v}")
            return None
        return v

    def declare_constant(self, node: ast.VarDecl, dcl: ast.Declarator, ty, cls) -> None:
        """A file-scope ``const`` variable: a named arithmetic constant."""
        if cls is not None:
            self.error(dcl.loc, f"static member '{dcl.name}': only device_global static members are supported")
            return
        if not node.type.const:
            self.error(dcl.loc, f"file-scope variable '{dcl.name}' must be 'const' or a device_global")
            return
        if ty is None:
            return
        if dcl.init is None or not ty.is_arith:
            self.error(dcl.loc, f"constant '{dcl.name}' needs an arithmetic type and an initialiser")
            return
        e = self.convert(self.expr(dcl.init), ty, "initialiser")
        v = const_fold(e)
        if v is None:
            self.error(dcl.init.loc, f"initialiser of constant '{dcl.name}' is not a constant expression")
            return
        self.define_global(dcl.name, ConstSym(dcl.name, ty, v, dcl.loc), dcl.loc)

    def const_initializer(self, init, ty):
        """Constant value tree for a device_global initialiser: scalars, lists for arrays/classes."""
        if isinstance(init, ast.InitList):
            return self.const_list(init, ty)
        if not ty.is_arith:
            self.error(init.loc, f"'{ty}' must be initialised with a brace list")
            return None
        e = self.convert(self.expr(init), ty, "initialiser")
        v = const_fold(e)
        if v is None:
            self.error(init.loc, "device_global initialiser must be a constant expression")
        return v

    def const_list(self, init: ast.InitList, ty):
        init = nest(init, ty)
        if ty.is_array:
            if len(init.items) > ty.count:
                self.error(init.loc, f"too many initialisers for '{ty}'")
                return None
            return [self.const_initializer(i, ty.elem) for i in init.items]
        if ty.is_class:
            flat = flat_fields(ty)
            if len(init.items) > len(flat):
                self.error(init.loc, f"too many initialisers for '{ty}'")
                return None
            if ty.polymorphic:
                self.error(init.loc, f"a device_global of polymorphic class '{ty}' cannot have an initialiser")
                return None
            return [self.const_initializer(i, fty) for i, (_, fty) in zip(init.items, flat)]
        if len(init.items) == 1:
            return self.const_initializer(init.items[0], ty)
        self.error(init.loc, f"brace initialiser for scalar type '{ty}' must have one element")
        return None
