"""Constant evaluation in the checker: array sizes, file-scope ``const``
variables and device-global initialisers (values folded by ``frontend.constants``)."""
from __future__ import annotations

from .. import ast
from ..constants import NotConstant, evaluate
from ..constexpr import construct, needs_construction
from ..data_layout import flat_fields
from ..symbols import ConstSym, DeviceGlobalSym, FuncSym, same_device_global_type
from .brace_elision import nest
from .context import Part


class Constants(Part):
    uses = {"expressions": ("expr", "rvalue"), "conversions": ("convert", "convert_braced"),
            "declarations": ("define_global",), "scopes": ("lookup_local",)}

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

    def declare_constant(self, node: ast.VarDecl, dcl: ast.Declarator, ty, cls, constexpr=False) -> None:
        """A file-scope named constant: ``const``/``constexpr`` of arithmetic type,
        or ``constexpr`` of class or array type (``constexpr S s(1, 2);``,
        ``= {..}``, ``{..}``): usable in constant expressions (device_global
        initialisers among them: ``device_global<S> g{s};``) and, as a read-only
        object, in host and device code."""
        if cls is not None:
            self.error(dcl.loc, f"static member '{dcl.name}': only device_global static members are supported")
            return
        if not node.type.const and not constexpr:
            self.error(dcl.loc, f"file-scope variable '{dcl.name}' must be 'const', 'constexpr' or a device_global")
            return
        if ty is None:
            return
        if dcl.init is None:
            self.error(dcl.loc, f"constant '{dcl.name}' needs an initialiser")
            return
        if ty.is_arith:
            self.arith_constant(dcl, ty)
            return
        if not (ty.is_class or ty.is_array) or ty.is_array and _innermost(ty).is_ptr \
                or ty.is_class and any(_innermost(t).is_ptr or _innermost(t).is_item for _, t in flat_fields(ty)) \
                or _innermost(ty).is_item:
            self.error(dcl.loc, f"constant '{dcl.name}' needs an arithmetic type or a class or array of them, "
                                f"not '{ty}'")
            return
        if not constexpr:
            self.error(dcl.loc, f"constant '{dcl.name}' of type '{ty}' must be 'constexpr' (a 'const' object of "
                                f"class or array type is not a constant expression)")
            return
        if _polymorphic(ty):
            self.error(dcl.loc, f"constant '{dcl.name}': a constant of polymorphic class type is not supported")
            return
        sym = ConstSym(dcl.name, ty, None, dcl.loc)
        if not self.initialise(sym, dcl.init, f"constant '{dcl.name}'"):
            return
        if self.define_global(dcl.name, sym, dcl.loc):
            dcl.sym = sym
            self.prog.constants.append(sym)

    def arith_constant(self, dcl, ty):
        init = dcl.init
        if isinstance(init, ast.InitList):
            if len(init.items) != 1 or isinstance(init.items[0], ast.InitList):
                self.error(init.loc, f"initialiser for scalar constant '{dcl.name}' must have one element")
                return
            e = self.rvalue(self.expr(init.items[0]))
            e = self.convert(e, ty, "initialiser") if init.paren else self.convert_braced(e, ty, "initialiser")
        else:
            e = self.convert(self.expr(init), ty, "initialiser")
        v, why = self.fold(e)
        if v is None:
            self.error(init.loc, f"initialiser of constant '{dcl.name}' is not a constant expression", why)
            return
        self.define_global(dcl.name, ConstSym(dcl.name, ty, v, dcl.loc), dcl.loc)

    def names_whole(self, item, ty) -> bool:
        """Whether initialiser ``item`` names an object of type ``ty`` (a local, a
        named constant, a device global), which initialises a whole member of
        that type (``nest``'s ``whole``)."""
        if not isinstance(item, ast.Name):
            return False
        sym = self.lookup_local(item.name) or self.globals.get(item.name)
        return getattr(sym, "ty", None) == ty and not isinstance(sym, FuncSym)

    def named_constant(self, init, ty):
        """The ``ConstSym`` of type ``ty`` that initialiser ``init`` names
        (``TS1``, or ``{TS1}`` around it), or None."""
        if isinstance(init, ast.InitList) and len(init.items) == 1:
            init = init.items[0]
        if isinstance(init, ast.Name) and self.lookup_local(init.name) is None:
            sym = self.globals.get(init.name)
            if isinstance(sym, ConstSym) and sym.ty == ty:
                init.sym = sym
                return sym
        return None

    def initialise(self, sym, init, what) -> bool:
        """Set what initialises ``sym`` (a constant or a device global of class or
        array type): a value tree now (``sym.init``/``sym.value``), or a
        construction or copy that ``construct_device_globals`` evaluates once
        every body is checked (``sym.construct``)."""
        ty = sym.ty
        source = self.named_constant(init, ty)
        if source is not None:                  # a copy of a named constant: C++'s implicit copy constructor
            if source.construct is not None:
                sym.construct = ("copy", source)
            else:
                _set_value(sym, _copy(source.value))
            return True
        if not needs_construction(ty):
            if init is not None:
                _set_value(sym, self.const_initializer(init, ty, what=f"initialiser of {what}"))
            return True
        if init is None:
            elem = _innermost(ty)
            if elem.is_class and elem.ctors and not any(not c.params for c in elem.ctors):
                self.error(sym.loc, f"{what}: no constructor of '{elem.name}' takes 0 argument(s)")
                return False
            sym.construct = (None, [])
            return True
        if ty.is_array:
            return self.array_of_constants(sym, init, what)
        if not ty.is_class or not ty.ctors:
            self.error(init.loc, f"{what}: '{ty}' holds objects with constructors, so it can only be "
                                 f"default-initialised (no initialiser) or copied from a named constant")
            return False
        items = init.items if isinstance(init, ast.InitList) else [init]
        ctor = next((c for c in ty.ctors if len(c.params) == len(items)), None)
        if ctor is None:
            self.error(init.loc, f"no constructor of '{ty.name}' takes {len(items)} argument(s)")
            return False
        args = []
        for i, (a, (_, t)) in enumerate(zip(items, ctor.params)):
            if isinstance(a, ast.InitList):
                self.error(a.loc, f"argument {i + 1} of the constructor of '{ty.name}' cannot be a brace list")
                return False
            braced = isinstance(init, ast.InitList) and not init.paren
            convert = self.convert_braced if braced else self.convert
            args.append(convert(self.rvalue(self.expr(a)), t, f"argument {i + 1} of constructor"))
        sym.construct = (ctor, args)
        return True

    def array_of_constants(self, sym, init, what) -> bool:
        """``device_global<P[2]> g{p1, p2};`` where ``P`` has constructors: each
        element a copy of a named constant, the rest default-constructed."""
        elem = sym.ty.elem
        items = init.items if isinstance(init, ast.InitList) else [init]
        if len(items) > sym.ty.count:
            self.error(init.loc, f"too many initialisers for '{sym.ty}'")
            return False
        sources = []
        for item in items:
            source = self.named_constant(item, elem)
            if source is None:
                self.error(item.loc, f"{what}: an element of '{sym.ty}' (a class with constructors) can only be "
                                     f"initialised from a named constant of type '{elem}'")
                return False
            sources.append(source)
        sym.construct = ("elements", sources)
        return True

    def const_initializer(self, init, ty, braced=False, what="device_global initialiser"):
        """Constant value tree for a device_global initialiser (or ``what``): scalars, lists for
        arrays/classes (``braced``: ``init`` is an element of a brace list, where
        narrowing is an error)."""
        if isinstance(init, ast.InitList):
            return self.const_list(init, ty, what)
        if not ty.is_arith:
            source = self.named_constant(init, ty)
            if source is not None and source.construct is None:
                return _copy(source.value)
            if ty.is_ptr:
                e = self.convert(self.rvalue(self.expr(init)), ty, "initialiser")
                inner = e.operand if type(e) is ast.Cast else e
                if isinstance(inner, ast.NullLit) or isinstance(inner, ast.IntLit) and inner.value == 0:
                    return None             # a null pointer: the only pointer value a constant can hold
                self.error(init.loc, f"{what} must be a constant expression: a pointer initialiser can only be "
                                     f"a null pointer")
                return None
            self.error(init.loc, f"'{ty}' must be initialised with a brace list or a named constant of its type")
            return None
        e = self.rvalue(self.expr(init))
        e = self.convert_braced(e, ty, "initialiser") if braced else self.convert(e, ty, "initialiser")
        v, why = self.fold(e)
        if v is None:
            self.error(init.loc, f"{what} must be a constant expression", why)
        return v

    def const_list(self, init: ast.InitList, ty, what="device_global initialiser"):
        paren = init.paren
        init = nest(init, ty, self.names_whole)
        if ty.is_array:
            if len(init.items) > ty.count:
                self.error(init.loc, f"too many initialisers for '{ty}'")
                return None
            return [self.const_initializer(i, ty.elem, not paren, what) for i in init.items]
        if ty.is_class:
            flat = flat_fields(ty)
            if len(init.items) > len(flat):
                self.error(init.loc, f"too many initialisers for '{ty}'")
                return None
            if ty.polymorphic:
                self.error(init.loc, f"a device_global of polymorphic class '{ty}' cannot have an initialiser")
                return None
            return [self.const_initializer(i, fty, not paren, what) for i, (_, fty) in zip(init.items, flat)]
        if len(init.items) == 1:
            return self.const_initializer(init.items[0], ty, not paren, what)
        self.error(init.loc, f"brace initialiser for scalar type '{ty}' must have one element")
        return None

    # -- device globals whose T has constructors (C++20's consteval rule) -----------
    def device_global_init(self, g, init) -> None:
        """What initialises device global ``g`` (``initialise``).  The spec's rules:
        ``T`` is trivially destructible, and its constructor, given the
        initialiser's arguments, is evaluated at compile time; a device_global
        is never copied (its copy constructor is deleted)."""
        ty = g.ty
        owner = _destructor_owner(ty)
        if owner is not None:
            self.error(g.loc, f"device_global '{g.name}': T must be trivially destructible "
                              f"(sycl_ext_oneapi_device_global), but '{owner.name}' declares a destructor",
                       [self.note(owner.destructor, "declared here")])
        if isinstance(init, ast.InitList) and init.paren:
            init = ast.InitList(init.loc, init.items)   # device_global(args...) list-initialises T from args
        copied = init.items[0] if isinstance(init, ast.InitList) and len(init.items) == 1 else init
        if isinstance(copied, ast.Name) and isinstance(self.globals.get(copied.name), DeviceGlobalSym) \
                and self.lookup_local(copied.name) is None \
                and same_device_global_type(self.globals[copied.name], g):
            self.error(copied.loc, f"device_global '{g.name}' cannot be initialised from device_global "
                                   f"'{copied.name}': device_global's copy constructor is deleted")
            return
        self.initialise(g, init, f"device_global '{g.name}'")

    def _construct(self, g, how, what) -> None:
        if how == "copy":
            value = what.value
            if value is None and what.construct is not None:
                raise NotConstant(what.loc, f"constant '{what.name}' could not be constructed")
            _set_value(g, _copy(value))
        elif how == "elements":
            if any(s.value is None and s.construct is not None for s in what):
                raise NotConstant(g.loc, "a constant it copies could not be constructed")
            rest = construct(g.ty.elem, None, [], g.loc) if len(what) < g.ty.count else None
            _set_value(g, [_copy(s.value) for s in what] + [_copy(rest) for _ in range(g.ty.count - len(what))])
        else:
            _set_value(g, construct(g.ty, how, what, g.loc))

    def construct_device_globals(self) -> None:
        """Evaluate the constructions ``initialise`` left, of named constants (in
        source order: one may copy an earlier one), then of device globals
        (after every body is checked: a constructor may call functions defined later)."""
        for g in self.prog.constants + self.prog.device_globals:
            if g.construct is None or getattr(g, "is_extern", False):
                continue
            how, what = g.construct
            had_errors = self.cx.diags.has_errors
            try:
                self.cx.guarded(g.loc, g.name, self._construct, g, how, what)
            except (TypeError, AttributeError, KeyError, IndexError, ValueError):
                if not had_errors:
                    raise
                # a tree the checker already reported an error in: not evaluated
            except NotConstant as x:
                kind = "constant" if isinstance(g, ConstSym) else "device_global"
                self.error(g.loc, f"{kind} '{g.name}': constructing '{g.ty}' must be a constant expression "
                                  f"(sycl_ext_oneapi_device_global, C++20: the constructor is consteval), "
                                  f"but {x.reason}",
                           [self.note(x.loc, "evaluation stops here")] if x.loc != g.loc else None)
                continue
            if isinstance(g, ConstSym):
                g.construct = None


def _set_value(sym, value) -> None:
    """Store a value tree on a constant (``value``) or a device global (``init``)."""
    if isinstance(sym, ConstSym):
        sym.value = value
    else:
        sym.init = value


def _copy(v):
    return [_copy(x) for x in v] if isinstance(v, list) else v


def _innermost(ty):
    while ty.is_array:
        ty = ty.elem
    return ty


def _polymorphic(ty) -> bool:
    ty = _innermost(ty)
    return ty.is_class and (ty.polymorphic or any(_polymorphic(t) for _, t in flat_fields(ty)))


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
