"""Constant evaluation in the checker: array sizes, file-scope ``const``
variables and device-global initialisers (values folded by ``frontend.constants``)."""
from __future__ import annotations

from .. import ast
from ..constants import NotConstant, evaluate
from ..constexpr import construct, needs_construction
from ..data_layout import flat_fields
from ..symbols import ConstSym
from .brace_elision import nest
from .context import Part


class Constants(Part):
    uses = {"expressions": ("expr", "rvalue"), "conversions": ("convert", "convert_braced"), "declarations": ("define_global",)}

    def fold(self, e):
        """The value of ``e`` where a constant expression is required, and the
        notes that say why it is not one when its evaluation has undefined
        behaviour (``INT_MAX + 1``, a shift by 40 of an int...): ``(None, notes)``."""
        try:
            return evaluate(e), None
        except NotConstant as x:
            return None, [self.note(x.loc, x.reason)]

    def array_size(self, dim, loc):
        if dim is None:
            self.error(loc, "array size missing")
            return None
        e = self.expr(dim)
        v, why = self.fold(e)
        if not isinstance(v, int) or isinstance(v, bool) or not e.ty.is_int and not e.ty.is_bool:
            self.error(dim.loc, "array size must be an integer constant expression", why)
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
        v, why = self.fold(e)
        if v is None:
            self.error(dcl.init.loc, f"initialiser of constant '{dcl.name}' is not a constant expression", why)
            return
        self.define_global(dcl.name, ConstSym(dcl.name, ty, v, dcl.loc), dcl.loc)

    def const_initializer(self, init, ty, braced=False, what="device_global initialiser"):
        """Constant value tree for a device_global initialiser (or ``what``): scalars, lists for
        arrays/classes (``braced``: ``init`` is an element of a brace list, where
        narrowing is an error)."""
        if isinstance(init, ast.InitList):
            return self.const_list(init, ty, what)
        if not ty.is_arith:
            self.error(init.loc, f"'{ty}' must be initialised with a brace list")
            return None
        e = self.rvalue(self.expr(init))
        e = self.convert_braced(e, ty, "initialiser") if braced else self.convert(e, ty, "initialiser")
        v, why = self.fold(e)
        if v is None:
            self.error(init.loc, f"{what} must be a constant expression", why)
        return v

    def const_list(self, init: ast.InitList, ty, what="device_global initialiser"):
        init = nest(init, ty)
        if ty.is_array:
            if len(init.items) > ty.count:
                self.error(init.loc, f"too many initialisers for '{ty}'")
                return None
            return [self.const_initializer(i, ty.elem, True, what) for i in init.items]
        if ty.is_class:
            flat = flat_fields(ty)
            if len(init.items) > len(flat):
                self.error(init.loc, f"too many initialisers for '{ty}'")
                return None
            if ty.polymorphic:
                self.error(init.loc, f"a device_global of polymorphic class '{ty}' cannot have an initialiser")
                return None
            return [self.const_initializer(i, fty, True, what) for i, (_, fty) in zip(init.items, flat)]
        if len(init.items) == 1:
            return self.const_initializer(init.items[0], ty, True, what)
        self.error(init.loc, f"brace initialiser for scalar type '{ty}' must have one element")
        return None

    # -- device globals whose T has constructors (C++20's consteval rule) -----------
    def device_global_init(self, g, init) -> None:
        """What initialises device global ``g``: a value tree now (``g.init``), or a
        construction (``g.construct``: constructor and checked arguments) that
        ``construct_device_globals`` evaluates once every body is checked.
        The spec's rules: ``T`` is trivially destructible, and its constructor,
        given the initialiser's arguments, is evaluated at compile time."""
        ty = g.ty
        owner = _destructor_owner(ty)
        if owner is not None:
            self.error(g.loc, f"device_global '{g.name}': T must be trivially destructible "
                              f"(sycl_ext_oneapi_device_global), but '{owner.name}' declares a destructor",
                       [self.note(owner.destructor, "declared here")])
        if not needs_construction(ty):
            if init is not None:
                g.init = self.const_initializer(init, ty)
            return
        if init is None:
            elem = ty
            while elem.is_array:
                elem = elem.elem
            if elem.is_class and elem.ctors and not any(not c.params for c in elem.ctors):
                self.error(g.loc, f"device_global '{g.name}': no constructor of '{elem.name}' takes 0 argument(s)")
                return
            g.construct = (None, [])
            return
        if not ty.is_class or not ty.ctors:
            self.error(init.loc, f"device_global '{g.name}': '{ty}' holds objects with constructors, so it can "
                                 f"only be default-initialised (no initialiser)")
            return
        items = init.items if isinstance(init, ast.InitList) else [init]
        ctor = next((c for c in ty.ctors if len(c.params) == len(items)), None)
        if ctor is None:
            self.error(init.loc, f"no constructor of '{ty.name}' takes {len(items)} argument(s)")
            return
        args = []
        for i, (a, (_, t)) in enumerate(zip(items, ctor.params)):
            if isinstance(a, ast.InitList):
                self.error(a.loc, f"argument {i + 1} of the constructor of '{ty.name}' cannot be a brace list")
                return
            convert = self.convert_braced if isinstance(init, ast.InitList) else self.convert
            args.append(convert(self.rvalue(self.expr(a)), t, f"argument {i + 1} of constructor"))
        g.construct = (ctor, args)

    def _construct(self, g, ctor, args) -> None:
        g.init = construct(g.ty, ctor, args, g.loc)

    def construct_device_globals(self) -> None:
        """Evaluate the constructions ``device_global_init`` left (after every
        body is checked: a constructor may call functions defined later)."""
        for g in self.prog.device_globals:
            if g.construct is None or g.is_extern:
                continue
            ctor, args = g.construct
            had_errors = self.cx.diags.has_errors
            try:
                self.cx.guarded(g.loc, g.name, self._construct, g, ctor, args)
            except (TypeError, AttributeError, KeyError, IndexError, ValueError):
                if not had_errors:
                    raise
                # a tree the checker already reported an error in: not evaluated
            except NotConstant as x:
                self.error(g.loc, f"device_global '{g.name}': constructing '{g.ty}' must be a constant expression "
                                  f"(sycl_ext_oneapi_device_global, C++20: the constructor is consteval), "
                                  f"but {x.reason}",
                           [self.note(x.loc, "evaluation stops here")] if x.loc != g.loc else None)


def _destructor_owner(ty):
    """The class inside ``ty`` (itself, a base, a member, an element) that
    declares a destructor, or None."""
    while ty.is_array:
        ty = ty.elem
    if not ty.is_class:
        return None
    if ty.destructor is not None:
        return ty
    if ty.base is not None and (found := _destructor_owner(ty.base)) is not None:
        return found
    return next((c for c in (_destructor_owner(fty) for _, fty in ty.fields) if c is not None), None)
