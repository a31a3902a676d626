"""Semantic analysis: names, C types and conversions, properties, language rules.

Input: the ``ast.Unit`` of each source file.  Output: the same trees annotated in
place (every expression gets ``ty`` and ``lvalue``; implicit conversions become
``Cast`` nodes; names point to their symbols) plus a ``Program`` holding the
classes, functions and device globals in declaration order.  Errors go to the
``DiagnosticSink``; checking continues after an error so one run reports many.
Device-code rules that need the whole call graph live in ``device_rules.py``.
"""
from __future__ import annotations

from . import ast as A
from . import types as T
from ..device_configs.aspects import Aspect, lookup as lookup_aspect
from ..passes.support.diagnostics import DiagnosticSink, SourceLoc, too_deep
from .constants import const_fold, is_null_constant
from .data_layout import flat_fields
from .item_queries import item_query
from .symbols import ConstSym, DeviceGlobalSym, FuncSym, LocalSym, Program, set_symbol
from .types import BOOL, DOUBLE, FLOAT, HALF, INT, LONG, VOID, ArrayType, ClassType, ItemType, PointerType

MATH_1 = ("sqrt", "exp", "log", "sin", "cos", "fabs", "floor", "ceil", "exp2", "log2", "log10", "tan", "round", "trunc")
ATOMIC_RMW = ("atomic_fetch_add", "atomic_fetch_sub", "atomic_fetch_min", "atomic_fetch_max",
              "atomic_fetch_and", "atomic_fetch_or", "atomic_fetch_xor", "atomic_exchange")
BUILTINS = set(MATH_1) | {"pow", "min", "max", "abs", "print", "atomic_load", "atomic_store",
                          "atomic_compare_exchange"} | set(ATOMIC_RMW)
HOST_ACCESS = {"read": 0, "write": 1, "read_write": 2, "none": 3}
INIT_MODE = {"reprogram": 0, "reset": 1}
PROPERTIES = {
    "function": ("indirectly_callable", "device_has"),
    "kernel": ("calls_indirectly", "device_has", "reqd_work_group_size"),
    "device_global": ("device_image_scope", "host_access", "init_mode", "implement_in_csr"),
}


class _Scope(dict):
    __slots__ = ("boundary",)


class _Boundary:
    """A function body or an if_device/if_host block: the unit that captures outer locals."""
    __slots__ = ("captures", "loops", "kind")

    def __init__(self, kind):
        self.kind, self.captures, self.loops = kind, [], 0


class Checker:
    """Checks one translation unit (see module docstring)."""

    def __init__(self, unit: A.Unit, diags: DiagnosticSink, sizeof=None):
        self.unit = unit
        self.file = unit.file
        self.d = diags
        self.sizeof = sizeof        # callable(Type) -> int, from codegen's data layout
        self.prog = Program(unit.file)
        self.classes: dict[str, ClassType] = {}
        self.globals: dict[str, object] = {}
        self.fn: FuncSym | None = None
        self.scopes: list[_Scope] = []
        self.bounds: list[_Boundary] = []
        self.region: str | None = None
        self.this_sym: LocalSym | None = None

    # ------------------------------------------------------------------ driver
    def run(self) -> Program:
        bodies = []
        for item in self.unit.items:
            if isinstance(item, A.ClassDef):
                bodies.extend(self.guarded(item.loc, item.name, self.declare_class, item) or [])
            elif isinstance(item, A.FuncDef):
                sym = self.guarded(item.loc, item.name, self.declare_function, item, None)
                if sym is not None and item.body is not None:
                    bodies.append((item, sym))
            elif isinstance(item, A.VarDecl):
                self.guarded(item.loc, item.decls[0].name, self.declare_global, item, None)
        for node, sym in bodies:
            self.guarded(node.loc, sym.name, self.check_body, node, sym)
        return self.prog

    def guarded(self, loc, name, work, *args):
        """``work(*args)``, or the too-deep error at ``loc`` when the construct
        nests deeper than the checker's recursion can follow."""
        try:
            return work(*args)
        except RecursionError:
            self.error(loc, too_deep(name))
            return None

    def error(self, loc, msg, notes=None):
        self.d.error(loc, msg, notes)

    # ------------------------------------------------------------------ types
    def resolve_type(self, spec: A.TypeSpec, dims=(), what="variable", allow_dg=False) -> T.Type | None:
        if spec.kind == "prim":
            ty = T.primitive(spec.words)
            if ty is None:
                self.error(spec.loc, f"invalid type '{' '.join(spec.words)}'")
                return None
        elif spec.kind == "named":
            ty = self.classes.get(spec.name)
            if ty is None:
                self.error(spec.loc, f"unknown type '{spec.name}'")
                return None
        elif spec.kind == "item":
            if spec.dims not in (1, 2, 3):
                self.error(spec.loc, f"{spec.name}<{spec.dims}>: dimensions must be 1, 2 or 3")
                return None
            ty = ItemType(spec.name, spec.dims)
        else:  # device_global<T>
            if not allow_dg or spec.ptr:
                self.error(spec.loc, "device_global<T> can only be the type of a file-scope variable or a static class member")
                return None
            inner = self.resolve_type(spec.inner, spec.inner_dims, "device_global element")
            if inner is None:
                return None
            if inner.is_void or inner.is_item:
                self.error(spec.inner.loc, f"device_global<{inner}> is not allowed")
                return None
            return inner
        if ty is HALF:
            self.prog.uses_half = True
        for _ in range(spec.ptr):
            ty = PointerType(ty)
        for dim in reversed(dims):
            n = self.array_size(dim, spec.loc)
            if n is None:
                return None
            if ty.is_void:
                self.error(spec.loc, "array of void")
                return None
            ty = ArrayType(ty, n)
        return ty

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

    def is_complete(self, ty, loc, what):
        if ty.is_void:
            self.error(loc, f"{what} cannot have type void")
            return False
        if ty.is_class and not ty.complete:
            self.error(loc, f"{what} has incomplete type '{ty}'")
            return False
        return True

    # ------------------------------------------------------------------ declarations
    def declare_class(self, node: A.ClassDef):
        if node.name in self.classes:
            self.error(node.loc, f"redefinition of class '{node.name}'",
                       [self.d.note(self.classes[node.name].loc, "previous definition is here")])
            return []
        cls = ClassType(node.name, node.kind, node.loc)
        self.classes[node.name] = cls
        if node.base is not None:
            base = self.classes.get(node.base[1])
            loc = self.tok_loc(node.base)
            if base is None:
                self.error(loc, f"unknown base class '{node.base[1]}'")
            elif base is cls or not base.complete:
                self.error(loc, f"base class '{base.name}' is incomplete")
            else:
                cls.base = base
        methods = []
        for m in node.members:
            if isinstance(m, A.VarDecl):
                if any(s[1] == "static" for s in m.specs):
                    self.declare_global(m, cls)
                    continue
                for s in m.specs:
                    self.error(self.tok_loc(s), f"'{s[1]}' is not allowed on a field")
                if m.type.kind == "dg":
                    self.error(m.type.loc, "device_global can only be a static class member, not a non-static member")
                    continue
                for dcl in m.decls:
                    ty = self.resolve_type(m.type, dcl.dims)
                    if ty is None:
                        continue
                    if dcl.props:
                        self.error(dcl.props[0].loc, f"properties are not allowed on field '{dcl.name}'")
                    if dcl.init is not None:
                        self.error(dcl.init.loc, f"default member initialisers are not supported (field '{dcl.name}')")
                    if not self.is_complete(ty, dcl.loc, f"field '{dcl.name}'"):
                        continue
                    if ty.is_item and ty.kind == "nd_item":
                        self.error(dcl.loc, "nd_item cannot be a field")
                        continue
                    if dcl.name in cls.field_index or cls.find_field(dcl.name):
                        self.error(dcl.loc, f"duplicate field '{dcl.name}'")
                        continue
                    cls.fields.append((dcl.name, ty))
            elif isinstance(m, A.FuncDef):
                sym = self.declare_function(m, cls)
                if sym is not None:
                    methods.append((m, sym))
        # vtable: inherit the base's slots, override by name, append new virtuals.
        slots = list(cls.base.vslots) if cls.base else []
        for m, sym in methods:
            if sym.is_ctor:
                continue
            inherited = cls.base.find_method(sym.name) if cls.base else None
            if inherited is not None and inherited.is_virtual:
                sym.is_virtual = True
                if [p for _, p in inherited.params] != [p for _, p in sym.params] or inherited.ret != sym.ret:
                    self.error(m.loc, f"'{sym.display}' overrides '{inherited.display}' with a different signature")
                if inherited.set_name is not None and sym.set_name != inherited.set_name:
                    what = "is not indirectly_callable" if sym.set_name is None else "is in another virtual-function set"
                    self.error(m.loc, f"'{sym.display}' overrides an indirectly_callable method but {what}",
                               [self.d.note(inherited.loc, "overridden method is here")])
                slots[slots.index(inherited) if inherited in slots else _slot_of(slots, sym.name)] = sym
            elif m.override is not None:
                self.error(m.override, f"'{sym.display}' marked 'override' but does not override a virtual method")
            elif sym.is_virtual:
                slots.append(sym)
            if sym.set_name is not None and not sym.is_virtual:
                self.error(m.loc, "indirectly_callable can only be applied to virtual methods")
        cls.vslots = slots
        cls.own_vptr = bool(slots) and (cls.base is None or not cls.base.polymorphic)
        offset = (1 if cls.own_vptr else 0) + (1 if cls.base else 0)
        cls.field_index = {name: offset + i for i, (name, _) in enumerate(cls.fields)}
        cls.complete = True
        self.prog.classes.append(cls)
        return [(m, s) for m, s in methods if m.body is not None]

    def declare_function(self, node: A.FuncDef, cls: ClassType | None) -> FuncSym | None:
        specs = {s[1]: s for s in node.specs}
        loc = node.loc
        if node.is_kernel and cls is not None:
            self.error(loc, "kernels must be declared at file scope")
            return None
        for bad in ("virtual",) if cls is None else ("extern", "SYCL_EXTERNAL"):
            if bad in specs:
                self.error(self.tok_loc(specs[bad]), f"'{bad}' is not allowed here")
        if node.is_kernel:
            for bad in ("host", "virtual", "static", "extern", "inline"):
                if bad in specs:
                    self.error(self.tok_loc(specs[bad]), f"a kernel cannot be '{bad}'")
        if "static" in specs and cls is not None:
            self.error(self.tok_loc(specs["static"]), "static member functions are not supported")
        if node.is_ctor:
            if cls is None or node.name != cls.name:
                self.error(loc, f"function '{node.name}' needs a return type")
                return None
            ret = VOID
        elif node.is_kernel:
            ret = VOID
        else:
            ret = self.resolve_type(node.ret)
            if ret is None:
                ret = VOID
            elif ret.is_array:
                self.error(node.ret.loc, "functions cannot return arrays")
        params = []
        seen = set()
        plist = node.params
        if len(plist) == 1 and plist[0].name is None and plist[0].type.kind == "prim" \
                and plist[0].type.words == ("void",) and not plist[0].type.ptr and not plist[0].dims:
            plist = []
        for i, p in enumerate(plist):
            pty = self.resolve_type(p.type, p.dims[1:] if p.dims else ())
            if pty is None:
                params.append((p.name, INT))
                continue
            if p.dims:
                pty = PointerType(pty)      # array parameters are pointers, as in C
            if pty.is_void:
                self.error(p.loc, "parameter cannot have type void")
            elif pty.is_class and not pty.complete:
                self.error(p.loc, f"parameter has incomplete type '{pty}'")
            if pty.is_item and not (node.is_kernel and i == 0 and pty.kind != "range"):
                self.error(p.loc, f"{pty} can only be the first parameter of a kernel")
            if p.name in seen:
                self.error(p.loc, f"redefinition of parameter '{p.name}'")
            seen.add(p.name)
            params.append((p.name, pty))
        if cls is not None and not node.is_ctor:
            llname = f"_ZN{cls.mangled}{len(node.name)}{node.name}E{_mangle_params(params)}"
        elif node.is_ctor:
            llname = f"_ZN{cls.mangled}C2E{_mangle_params(params)}"
        else:
            llname = node.name
        sym = FuncSym(node.name, llname, ret, params, loc)
        sym.node = node
        sym.cls = cls
        sym.is_kernel = node.is_kernel
        sym.is_ctor = node.is_ctor
        sym.is_host = "host" in specs
        sym.is_static = "static" in specs and cls is None
        sym.is_external = "SYCL_EXTERNAL" in specs
        sym.is_virtual = "virtual" in specs
        sym.defined = node.body is not None
        sym.module_id = self.file
        if sym.is_host and sym.is_external:
            self.error(self.tok_loc(specs["host"]), "a SYCL_EXTERNAL function cannot be 'host'")
        if node.is_kernel and params and params[0][1].is_item:
            sym.launch = "nd_range" if params[0][1].kind == "nd_item" else "range"
        self.apply_function_props(node, sym)
        if cls is not None:
            if node.is_ctor:
                if any(len(c.params) == len(params) for c in cls.ctors):
                    self.error(loc, f"constructor of '{cls.name}' with {len(params)} parameter(s) already declared")
                    return None
                cls.ctors.append(sym)
            else:
                if node.name in cls.methods or cls.find_field(node.name):
                    self.error(loc, f"redefinition of '{cls.name}::{node.name}'")
                    return None
                cls.methods[node.name] = sym
            if node.body is None and not sym.is_virtual:
                self.error(loc, f"method '{sym.display}' must be defined in its class")
            elif node.body is None:
                self.error(loc, f"method '{sym.display}' must be defined in its class (pure virtual methods are not supported)")
            self.prog.functions.append(sym)
            return sym
        prev = self.globals.get(node.name)
        if prev is not None:
            if isinstance(prev, FuncSym) and not prev.is_kernel and not sym.is_kernel:
                if [t for _, t in prev.params] != [t for _, t in params] or prev.ret != ret:
                    self.error(loc, f"conflicting declaration of '{node.name}'",
                               [self.d.note(prev.loc, "previous declaration is here")])
                    return None
                if prev.defined and sym.defined:
                    self.error(loc, f"redefinition of '{node.name}'", [self.d.note(prev.loc, "previous definition is here")])
                    return None
                # merge declaration and definition into the first symbol
                prev.is_external |= sym.is_external
                prev.is_host |= sym.is_host
                if sym.defined:
                    prev.defined, prev.node, prev.loc = True, node, loc
                    prev.params = params
                    prev.device_has = sym.device_has if sym.device_has is not None else prev.device_has
                return prev
            self.error(loc, f"redefinition of '{node.name}'", [self.d.note(prev.loc, "previous definition is here")])
            return None
        if node.name in BUILTINS:
            self.error(loc, f"'{node.name}' is a builtin function and cannot be redefined")
            return None
        self.globals[node.name] = sym
        self.prog.functions.append(sym)
        return sym

    def tok_loc(self, tok):
        """Where a token (``lexer.Token``) of this file is."""
        return SourceLoc(self.file, tok[2], tok[3], len(tok[1]))

    # properties ----------------------------------------------------------
    def check_props(self, props, kind, entity):
        seen = {}
        allowed = PROPERTIES[kind]
        for p in props:
            if p.name not in allowed:
                known = [n for ks in PROPERTIES.values() for n in ks]
                if p.name in known:
                    self.error(p.loc, f"property '{p.name}' cannot be applied to {entity}")
                else:
                    self.error(p.loc, f"unknown property '{p.name}'; {entity} accepts {', '.join(allowed)}")
                continue
            if p.name in seen:
                self.error(p.loc, f"property '{p.name}' given twice")
                continue
            seen[p.name] = p
        return seen

    def aspect_args(self, p):
        out = []
        if not p.args:
            self.error(p.loc, "device_has needs at least one aspect")
        for kind, value, loc in p.args:
            a = lookup_aspect(value) if kind in ("NAME", "PRIM") else None
            if a is None:
                self.error(loc, f"unknown aspect '{value}'" if kind in ("NAME", "PRIM")
                           else f"device_has takes aspect names, not {value}")
            elif a not in out:
                out.append(a)
        return out

    def set_args(self, p, many):
        if not p.args:
            return [set_symbol(None)]
        if not many and len(p.args) > 1:
            self.error(p.args[1][2], f"{p.name} takes at most one set name")
        out = []
        for kind, value, loc in p.args[: None if many else 1]:
            if kind != "STRING":
                self.error(loc, f"{p.name} takes set names as string literals, like {p.name}(\"my_set\")")
                continue
            name = value[1:-1]
            if not name or not (name[0].isalpha() or name[0] == "_") or not all(c.isalnum() or c == "_" for c in name):
                self.error(loc, f"virtual-function set name {value} must be an identifier")
                continue
            s = set_symbol(name)
            if s not in out:
                out.append(s)
        return out

    def apply_function_props(self, node, sym):
        kind = "kernel" if node.is_kernel else "function"
        props = self.check_props(node.props, kind, "a kernel" if node.is_kernel else "a function")
        if "indirectly_callable" in props:
            sets = self.set_args(props["indirectly_callable"], many=False)
            sym.set_name = sets[0] if sets else None
            if sym.cls is None:
                self.error(props["indirectly_callable"].loc, "indirectly_callable can only be applied to virtual methods")
        if "calls_indirectly" in props:
            sym.calls_sets = sorted(self.set_args(props["calls_indirectly"], many=True))
        if "device_has" in props:
            sym.device_has = self.aspect_args(props["device_has"])
        if "reqd_work_group_size" in props:
            p = props["reqd_work_group_size"]
            vals = []
            if not 1 <= len(p.args) <= 3:
                self.error(p.loc, "reqd_work_group_size takes 1 to 3 sizes")
            for kind_, value, loc in p.args:
                if kind_ != "INT" or int(value, 0) <= 0:
                    self.error(loc, f"reqd_work_group_size: '{value}' is not a positive integer")
                else:
                    vals.append(int(value, 0))
            sym.reqd_wg = vals

    def dg_props(self, dcl, g: DeviceGlobalSym):
        props = self.check_props(dcl.props, "device_global", "a device_global")

        def one_name(p, table):
            if len(p.args) != 1 or p.args[0][0] not in ("NAME", "PRIM") or p.args[0][1] not in table:
                self.error(p.args[0][2] if p.args else p.loc,
                           f"{p.name} takes one of: {', '.join(table)}")
                return None
            return table[p.args[0][1]]

        if "device_image_scope" in props:
            if props["device_image_scope"].args:
                self.error(props["device_image_scope"].args[0][2], "device_image_scope takes no arguments")
            g.image_scope = True
        if "host_access" in props:
            g.host_access = one_name(props["host_access"], HOST_ACCESS)
        if "init_mode" in props:
            g.init_mode = one_name(props["init_mode"], INIT_MODE)
        if "implement_in_csr" in props:
            p = props["implement_in_csr"]
            if not p.args:
                g.implement_in_csr = True
            elif len(p.args) == 1 and p.args[0][0] == "BOOL":
                g.implement_in_csr = p.args[0][1] == "true"
            else:
                self.error(p.args[0][2], "implement_in_csr takes true or false")

    def declare_global(self, node: A.VarDecl, cls: ClassType | None):
        specs = {s[1]: s for s in node.specs}
        is_dg = node.type.kind == "dg"
        for bad in ("virtual", "host", "inline"):
            if bad in specs:
                self.error(self.tok_loc(specs[bad]), f"'{bad}' is not allowed on a variable")
        for dcl in node.decls:
            if not is_dg:
                ty = self.resolve_type(node.type, dcl.dims)
                if cls is not None:
                    self.error(dcl.loc, f"static member '{dcl.name}': only device_global static members are supported")
                    continue
                if not node.type.const:
                    self.error(dcl.loc, f"file-scope variable '{dcl.name}' must be 'const' or a device_global")
                    continue
                if ty is None:
                    continue
                if dcl.init is None or not ty.is_arith:
                    self.error(dcl.loc, f"constant '{dcl.name}' needs an arithmetic type and an initialiser")
                    continue
                e = self.convert(self.expr(dcl.init), ty, "initialiser")
                v = const_fold(e)
                if v is None:
                    self.error(dcl.init.loc, f"initialiser of constant '{dcl.name}' is not a constant expression")
                    continue
                self.define_global(dcl.name, ConstSym(dcl.name, ty, v, dcl.loc), dcl.loc)
                continue
            if dcl.dims:
                self.error(dcl.loc, "an array of device_global is not allowed; use device_global<T[N]>")
                continue
            ty = self.resolve_type(node.type, (), allow_dg=True)
            if ty is None:
                continue
            if not self.is_complete(ty, dcl.loc, f"device_global '{dcl.name}'"):
                continue
            if cls is not None:
                llname = f"_ZN{cls.mangled}{len(dcl.name)}{dcl.name}E"
            else:
                llname = dcl.name
            g = DeviceGlobalSym(dcl.name, llname, ty, dcl.loc)
            g.cls = cls
            g.is_static = "static" in specs and cls is None
            g.is_extern = "extern" in specs
            self.dg_props(dcl, g)
            if g.is_extern and dcl.init is not None:
                self.error(dcl.init.loc, f"extern device_global '{dcl.name}' cannot have an initialiser")
            if g.is_extern and g.is_static:
                self.error(dcl.loc, f"device_global '{dcl.name}' cannot be both static and extern")
            if dcl.init is not None:
                g.init = self.const_initializer(dcl.init, ty)
            g.unique_id = _unique_id(self.file, llname) if g.is_static else llname
            if cls is not None:
                if dcl.name in cls.statics:
                    self.error(dcl.loc, f"redefinition of '{cls.name}::{dcl.name}'")
                    continue
                cls.statics[dcl.name] = g
            else:
                prev = self.globals.get(dcl.name)
                if isinstance(prev, DeviceGlobalSym) and (prev.is_extern or g.is_extern) and prev.ty == g.ty:
                    if not g.is_extern:          # definition after an extern declaration
                        prev.is_extern, prev.init = False, g.init
                        prev.image_scope |= g.image_scope
                    dcl.sym = prev
                    continue
                if not self.define_global(dcl.name, g, dcl.loc):
                    continue
            dcl.sym = g
            self.prog.device_globals.append(g)

    def define_global(self, name, sym, loc) -> bool:
        if name in self.globals:
            self.error(loc, f"redefinition of '{name}'", [self.d.note(self.globals[name].loc, "previous definition is here")])
            return False
        self.globals[name] = sym
        return True

    def const_initializer(self, init, ty):
        """Constant value tree for a device_global initialiser: scalars, lists for arrays/classes."""
        if isinstance(init, A.InitList):
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
        if not ty.is_arith:
            self.error(init.loc, f"'{ty}' must be initialised with a brace list")
            return None
        e = self.convert(self.expr(init), ty, "initialiser")
        v = const_fold(e)
        if v is None:
            self.error(init.loc, "device_global initialiser must be a constant expression")
        return v

    # ------------------------------------------------------------------ bodies
    def check_body(self, node: A.FuncDef, sym: FuncSym):
        self.fn = sym
        self.region = None
        body_bound = _Boundary("function")
        self.bounds = [body_bound]
        self.scopes = [_Scope()]
        self.scopes[0].boundary = body_bound
        self.this_sym = None
        if sym.cls is not None:
            self.this_sym = LocalSym("this", PointerType(sym.cls), True, body_bound, True, node.loc)
        for (pname, pty), p in zip(sym.params, node.params if sym.params else []):
            if pname is not None:
                local = LocalSym(pname, pty, False, body_bound, True, p.loc)
                self.scopes[-1][pname] = local
            self.note_type_aspects(pty, p.loc, f"parameter of type '{pty}'")
        self.note_type_aspects(sym.ret, node.loc, f"return type '{sym.ret}'")
        node.body = self.block(node.body, new_scope=False)
        self.fn = None

    def push(self):
        s = _Scope()
        s.boundary = self.bounds[-1]
        self.scopes.append(s)

    def block(self, b: A.Block, new_scope=True):
        if new_scope:
            self.push()
        b.stmts = [self.stmt(s) for s in b.stmts]
        if new_scope:
            self.scopes.pop()
        return b

    def stmt(self, s):
        m = getattr(self, "s_" + type(s).__name__)
        return m(s)

    def s_Block(self, s):
        return self.block(s)

    def s_Empty(self, s):
        return s

    def s_ExprStmt(self, s):
        s.expr = self.expr(s.expr)
        return s

    def s_VarDecl(self, s: A.VarDecl):
        if s.type.kind == "dg":
            self.error(s.type.loc, "device_global variables must be declared at file scope or as static class members, not as local variables")
            return A.Empty(s.loc)
        for dcl in s.decls:
            ty = self.resolve_type(s.type, dcl.dims)
            if dcl.props:
                self.error(dcl.props[0].loc, f"properties are not allowed on local variable '{dcl.name}'")
            if ty is None:
                ty = INT
            elif not self.is_complete(ty, dcl.loc, f"variable '{dcl.name}'"):
                ty = INT
            elif ty.is_item and ty.kind == "nd_item":
                self.error(dcl.loc, "nd_item variables cannot be declared; use the kernel's parameter")
            if dcl.name in self.scopes[-1]:
                self.error(dcl.loc, f"redefinition of '{dcl.name}'",
                           [self.d.note(self.scopes[-1][dcl.name].loc, "previous definition is here")])
            self.note_type_aspects(ty, dcl.loc, f"variable of type '{ty}'")
            if dcl.init is not None:
                if isinstance(dcl.init, A.InitList):
                    dcl.init = self.init_list(dcl.init, ty)
                else:
                    dcl.init = self.convert(self.rvalue(self.expr(dcl.init)), ty, "initialiser")
            elif s.type.const:
                self.error(dcl.loc, f"const variable '{dcl.name}' needs an initialiser")
            local = LocalSym(dcl.name, ty, s.type.const and not s.type.ptr, self.bounds[-1], False, dcl.loc)
            if local.const and (ty.is_int or ty.is_bool) and isinstance(dcl.init, A.Expr):
                local.value = const_fold(dcl.init)
            dcl.sym = local
            self.scopes[-1][dcl.name] = local
        return s

    def init_list(self, il: A.InitList, ty):
        if ty.is_array:
            if len(il.items) > ty.count:
                self.error(il.loc, f"too many initialisers for '{ty}'")
            il.items = [self.init_list(i, ty.elem) if isinstance(i, A.InitList)
                        else self.convert(self.rvalue(self.expr(i)), ty.elem, "initialiser") for i in il.items[:ty.count]]
        elif ty.is_class:
            flat = flat_fields(ty)
            if ty.polymorphic:
                self.error(il.loc, f"objects of polymorphic class '{ty}' cannot be brace-initialised")
            if len(il.items) > len(flat):
                self.error(il.loc, f"too many initialisers for '{ty}'")
            il.items = [self.init_list(i, fty) if isinstance(i, A.InitList)
                        else self.convert(self.rvalue(self.expr(i)), fty, "initialiser")
                        for i, (_, fty) in zip(il.items, flat)]
        else:
            if len(il.items) != 1:
                self.error(il.loc, f"brace initialiser for scalar type '{ty}' must have one element")
                il.items = []
            else:
                il.items = [self.convert(self.rvalue(self.expr(il.items[0])), ty, "initialiser")]
        il.ty = ty
        il.lvalue = False
        return il

    def cond(self, e):
        e = self.rvalue(self.expr(e))
        return self.convert(e, BOOL, "condition")

    def s_If(self, s):
        s.cond = self.cond(s.cond)
        s.then = self.scoped_stmt(s.then)
        if s.other is not None:
            s.other = self.scoped_stmt(s.other)
        return s

    def scoped_stmt(self, s):
        self.push()
        s = self.stmt(s)
        self.scopes.pop()
        return s

    def loop_body(self, body):
        self.bounds[-1].loops += 1
        body = self.scoped_stmt(body)
        self.bounds[-1].loops -= 1
        return body

    def s_While(self, s):
        s.cond = self.cond(s.cond)
        s.body = self.loop_body(s.body)
        return s

    def s_DoWhile(self, s):
        s.body = self.loop_body(s.body)
        s.cond = self.cond(s.cond)
        return s

    def s_For(self, s):
        self.push()
        if isinstance(s.init, A.VarDecl):
            s.init = self.stmt(s.init)
        else:
            s.init = [self.expr(e) for e in s.init]
        if s.cond is not None:
            s.cond = self.cond(s.cond)
        s.step = [self.expr(e) for e in s.step]
        s.body = self.loop_body(s.body)
        self.scopes.pop()
        return s

    def jump_ok(self, s, word):
        b = self.bounds[-1]
        if b.kind != "function" and (word == "return" or b.loops == 0):
            self.error(s.loc, f"'{word}' cannot leave an {b.kind} block")
            return False
        if word != "return" and b.loops == 0:
            self.error(s.loc, f"'{word}' statement not in a loop")
            return False
        return True

    def s_Break(self, s):
        self.jump_ok(s, "break")
        return s

    def s_Continue(self, s):
        self.jump_ok(s, "continue")
        return s

    def s_Return(self, s):
        ok = self.jump_ok(s, "return")
        ret = self.fn.ret
        if s.value is not None:
            e = self.rvalue(self.expr(s.value))
            if ret.is_void:
                if ok:
                    self.error(s.value.loc, f"{'kernel' if self.fn.is_kernel else 'void function'} '{self.fn.display}' cannot return a value")
            else:
                e = self.convert(e, ret, "return value")
            s.value = e
        elif not ret.is_void and ok:
            self.error(s.loc, f"non-void function '{self.fn.display}' must return a value")
        return s

    def s_IfDevice(self, s: A.IfDevice):
        self.fn.if_count += 1
        s.index = self.fn.if_count
        first, second = ("device", "host") if s.on_device else ("host", "device")
        s.then, s.then_captures = self.capturing_block(s.then, first, "if_device" if s.on_device else "if_host")
        if s.other is not None:
            s.other, s.other_captures = self.capturing_block(s.other, second, "otherwise")
        return s

    def capturing_block(self, block, region, kind):
        bound = _Boundary(kind)
        self.bounds.append(bound)
        saved = self.region
        self.region = region
        self.push()
        block = self.block(block, new_scope=False)
        self.scopes.pop()
        self.region = saved
        self.bounds.pop()
        return block, bound.captures

    # ------------------------------------------------------------------ expressions
    def lookup_local(self, name):
        for scope in reversed(self.scopes):
            sym = scope.get(name)
            if sym is not None:
                self.capture(sym)
                return sym
        return None

    def capture(self, sym: LocalSym):
        """Record that the current if_device/if_host blocks use outer local ``sym``."""
        for b in reversed(self.bounds):
            if b is sym.boundary:
                return
            if sym not in b.captures:
                b.captures.append(sym)

    def this(self, loc):
        if self.this_sym is None:
            self.error(loc, "'this' can only be used inside a method")
            return None
        self.capture(self.this_sym)
        e = A.This(loc)
        e.sym = self.this_sym
        e.ty = self.this_sym.ty
        e.lvalue = False
        return e

    def expr(self, e):
        m = getattr(self, "e_" + type(e).__name__)
        return m(e)

    def rvalue(self, e):
        """Array lvalues decay to a pointer to their first element."""
        if e.ty is not None and e.ty.is_array:
            return A.Cast(e.loc, None, e, PointerType(e.ty.elem), "decay")
        return e

    def set(self, e, ty, lvalue=False):
        e.ty, e.lvalue = ty, lvalue
        if ty is not None and ty.is_float and self.fn is not None:
            self.note_type_aspects(ty, e.loc, f"an expression of type '{ty}'")
        return e

    def bad(self, e):
        e.ty, e.lvalue = T.ERROR, True
        return e

    def note_type_aspects(self, ty, loc, what):
        fn = self.fn
        if fn is None or ty is None:
            return
        if T.contains(ty, lambda t: t is DOUBLE):
            fn.aspects.setdefault((Aspect.fp64, self.region), (loc, what))
        if T.contains(ty, lambda t: t is HALF):
            self.prog.uses_half = True
            fn.aspects.setdefault((Aspect.fp16, self.region), (loc, what))

    def e_IntLit(self, e):
        v = e.value
        suffix = e.text.lower().lstrip("0123456789abcdefx")
        hexlike = e.text[:2].lower() in ("0x", "0b") or (len(e.text) > 1 and e.text[0] == "0")
        if "u" in suffix:
            ty = T.UINT if "l" not in suffix and v < 2 ** 32 else T.ULONG
        elif "l" in suffix:
            ty = LONG if v < 2 ** 63 else T.ULONG
        elif v < 2 ** 31:
            ty = INT
        elif hexlike and v < 2 ** 32:
            ty = T.UINT
        elif v < 2 ** 63:
            ty = LONG
        else:
            ty = T.ULONG
        if v >= 2 ** 64:
            self.error(e.loc, "integer literal is too large")
            e.value = 0
        return self.set(e, ty)

    def e_FloatLit(self, e):
        return self.set(e, {"f": FLOAT, "h": HALF}.get(e.suffix, DOUBLE))

    def e_BoolLit(self, e):
        return self.set(e, BOOL)

    def e_CharLit(self, e):
        return self.set(e, T.CHAR)

    def e_StrLit(self, e):
        return self.set(e, PointerType(T.CHAR))

    def e_NullLit(self, e):
        return self.set(e, PointerType(VOID))

    def e_This(self, e):
        return self.this(e.loc) or self.bad(e)

    def e_InitList(self, e):
        self.error(e.loc, "a brace list can only initialise a variable")
        return self.bad(e)

    def e_Name(self, e: A.Name):
        sym = self.lookup_local(e.name)
        if sym is not None:
            e.sym = sym
            return self.set(e, sym.ty, lvalue=True)
        if self.fn is not None and self.fn.cls is not None:
            found = self.fn.cls.find_field(e.name)
            if found is not None:
                this = self.this(e.loc)
                m = A.Member(e.loc, this, e.name, True)
                m.path = found[0]
                return self.set(m, found[1], lvalue=True)
            cls = self.fn.cls
            while cls is not None:
                if e.name in cls.statics:
                    return self.dg_ref(e, cls.statics[e.name])
                cls = cls.base
        sym = self.globals.get(e.name)
        if isinstance(sym, DeviceGlobalSym):
            return self.dg_ref(e, sym)
        if isinstance(sym, ConstSym):
            e.sym = sym
            return self.set(e, sym.ty)
        if isinstance(sym, FuncSym) or e.name in BUILTINS:
            self.error(e.loc, f"function '{e.name}' used as a value; call it with '()'")
            return self.bad(e)
        self.error(e.loc, f"use of undeclared identifier '{e.name}'")
        return self.bad(e)

    def dg_ref(self, e, g):
        e.sym = g
        if self.fn is not None and self.fn.is_host:
            self.error(e.loc, f"device_global '{g.name}' cannot be accessed from host function '{self.fn.display}'; use queue.copy/memcpy")
        return self.set(e, g.ty, lvalue=True)

    def e_Scoped(self, e: A.Scoped):
        cls = self.classes.get(e.cls)
        while cls is not None:
            if e.name in cls.statics:
                return self.dg_ref(e, cls.statics[e.name])
            cls = cls.base
        self.error(e.loc, f"'{e.cls}' has no static member '{e.name}'")
        return self.bad(e)

    def e_Unary(self, e: A.Unary):
        x = self.rvalue(self.expr(e.operand))
        x = self.item_to_long(x)
        if x.ty is T.ERROR:
            return self.bad(e)
        if e.op == "!":
            e.operand = self.convert(x, BOOL, "operand of '!'")
            return self.set(e, BOOL)
        if not x.ty.is_arith or (e.op == "~" and not (x.ty.is_int or x.ty.is_bool)):
            self.error(e.loc, f"invalid operand type '{x.ty}' for unary '{e.op}'")
            return self.bad(e)
        ty = T.promote(x.ty) if not x.ty.is_float else x.ty
        e.operand = self.convert(x, ty, "operand")
        return self.set(e, ty)

    def e_Deref(self, e):
        x = self.rvalue(self.expr(e.operand))
        if x.ty is T.ERROR:
            return self.bad(e)
        if not x.ty.is_ptr or x.ty.pointee.is_void:
            self.error(e.loc, f"cannot dereference a value of type '{x.ty}'")
            return self.bad(e)
        e.operand = x
        return self.set(e, x.ty.pointee, lvalue=True)

    def e_AddrOf(self, e):
        x = self.expr(e.operand)
        if not x.lvalue:
            self.error(e.loc, "cannot take the address of an rvalue")
            return self.bad(e)
        e.operand = x
        return self.set(e, PointerType(x.ty))

    def e_IncDec(self, e):
        x = self.expr(e.operand)
        if not x.lvalue or not (x.ty.is_arith or x.ty.is_ptr) or x.ty.is_bool:
            self.error(e.loc, f"'{e.op}' needs a modifiable arithmetic or pointer lvalue")
            return self.bad(e)
        self.check_modifiable(x, e.loc)
        e.operand = x
        return self.set(e, x.ty)

    def item_to_long(self, x):
        if x.ty.is_item and x.ty.dims == 1 and x.ty.kind != "nd_item":
            return A.Cast(x.loc, None, x, LONG, "item")
        return x

    def e_Binary(self, e: A.Binary):
        a = self.item_to_long(self.rvalue(self.expr(e.lhs)))
        b = self.item_to_long(self.rvalue(self.expr(e.rhs)))
        return self.binary(e, a, b)

    def binary(self, e, a, b):
        op = e.op
        ta, tb = a.ty, b.ty
        if ta is T.ERROR or tb is T.ERROR:
            return self.bad(e)
        if op in ("+", "-") and (ta.is_ptr or tb.is_ptr):
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
            self.error(e.loc, f"invalid operands to binary '{op}' ('{ta}' and '{tb}')")
            return self.bad(e)
        if op in ("==", "!=", "<", ">", "<=", ">=") and (ta.is_ptr or tb.is_ptr):
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
        if not ta.is_arith or not tb.is_arith:
            self.error(e.loc, f"invalid operands to binary '{op}' ('{ta}' and '{tb}')")
            return self.bad(e)
        if op in ("<<", ">>"):
            if ta.is_float or tb.is_float:
                self.error(e.loc, f"invalid operands to binary '{op}' ('{ta}' and '{tb}')")
                return self.bad(e)
            ty = T.promote(ta)
            e.lhs, e.rhs, e.kind, e.operand_ty = self.convert(a, ty, "operand"), self.convert(b, ty, "operand"), "arith", ty
            return self.set(e, ty)
        ty = T.usual_arithmetic(ta, tb)
        if op in ("%", "&", "|", "^") and ty.is_float:
            self.error(e.loc, f"invalid operands to binary '{op}' ('{ta}' and '{tb}')")
            return self.bad(e)
        e.lhs, e.rhs, e.operand_ty = self.convert(a, ty, "operand"), self.convert(b, ty, "operand"), ty
        if op in ("==", "!=", "<", ">", "<=", ">="):
            e.kind = "cmp"
            return self.set(e, BOOL)
        e.kind = "arith"
        if op in ("/", "%") and ty.is_int and const_fold(e.rhs) == 0:
            self.error(e.loc, "division by zero")
        return self.set(e, ty)

    def e_Logical(self, e):
        e.lhs = self.cond(e.lhs)
        e.rhs = self.cond(e.rhs)
        return self.set(e, BOOL)

    def check_modifiable(self, x, loc):
        if isinstance(x, A.Name) and isinstance(x.sym, LocalSym) and x.sym.const:
            self.error(loc, f"cannot assign to const variable '{x.name}'")
        elif isinstance(x, A.Name) and isinstance(x.sym, DeviceGlobalSym) is False and isinstance(x.sym, ConstSym):
            self.error(loc, f"cannot assign to constant '{x.name}'")

    def e_Assign(self, e: A.Assign):
        target = self.expr(e.target)
        if not target.lvalue:
            self.error(e.loc, "expression is not assignable")
            return self.bad(e)
        if target.ty.is_array:
            self.error(e.loc, f"arrays cannot be assigned ('{target.ty}')")
            return self.bad(e)
        self.check_modifiable(target, e.loc)
        e.target = target
        value = self.rvalue(self.expr(e.value))
        if e.op is None:
            e.value = self.convert(value, target.ty, "assignment")
        else:
            placeholder = A.Loaded(target.loc, target.ty)
            if target.ty.is_item:
                self.error(e.loc, f"compound assignment to '{target.ty}' is not supported")
                return self.bad(e)
            binary = A.Binary(e.loc, e.op, placeholder, value)
            binary = self.binary(binary, placeholder, self.item_to_long(value))
            e.binary = self.convert(binary, target.ty, "assignment")
        return self.set(e, target.ty)

    def e_Ternary(self, e):
        e.cond = self.cond(e.cond)
        a = self.item_to_long(self.rvalue(self.expr(e.then)))
        b = self.item_to_long(self.rvalue(self.expr(e.other)))
        if a.ty.is_arith and b.ty.is_arith:
            ty = T.usual_arithmetic(a.ty, b.ty) if not (a.ty.is_bool and b.ty.is_bool) else BOOL
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

    def e_Cast(self, e: A.Cast):
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

    def e_SizeofType(self, e):
        ty = self.resolve_type(e.spec, e.dims)
        if ty is None or not self.is_complete(ty, e.loc, "sizeof operand"):
            e.value = 1
        else:
            e.value = self.sizeof(ty)
        return self.set(e, T.ULONG)

    def e_SizeofExpr(self, e):
        x = self.expr(e.operand)
        e.value = self.sizeof(x.ty) if not x.ty.is_void else 1
        e.operand = x
        return self.set(e, T.ULONG)

    def e_New(self, e: A.New):
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
            self.record_call(ctor, e.loc)
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

    def e_Index(self, e: A.Index):
        base = self.expr(e.base)
        idx = self.item_to_long(self.rvalue(self.expr(e.index)))
        if base.ty is T.ERROR or idx.ty is T.ERROR:
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

    def e_Member(self, e: A.Member):
        base = self.expr(e.base)
        ty = base.ty
        if ty is T.ERROR:
            return self.bad(e)
        if e.arrow and isinstance(base, (A.Name, A.Scoped)) and isinstance(base.sym, DeviceGlobalSym) and ty.is_class:
            e.arrow = False            # dg->member, as device_global::operator->
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
        e.base = base
        e.path = found[0]
        return self.set(e, found[1], lvalue=e.arrow or base.lvalue)

    # calls ----------------------------------------------------------------
    def e_Call(self, e: A.Call):
        callee = e.callee
        if isinstance(callee, A.Name):
            if self.lookup_local(callee.name) is None:
                if self.fn is not None and self.fn.cls is not None:
                    m = self.fn.cls.find_method(callee.name)
                    if m is not None and not m.is_ctor:
                        this = self.this(callee.loc)
                        return self.method_call(e, this, m, via_pointer=True)
                sym = self.globals.get(callee.name)
                if isinstance(sym, FuncSym):
                    return self.func_call(e, sym)
                if sym is None and callee.name in BUILTINS:
                    return self.builtin_call(e, callee.name)
        if isinstance(callee, A.Member):
            base = self.expr(callee.base)
            if isinstance(base, (A.Name, A.Scoped)) and isinstance(base.sym, DeviceGlobalSym) and callee.name == "get" and not callee.arrow:
                if e.args:
                    self.error(e.loc, "device_global::get() takes no arguments")
                e.kind = "dg_get"
                e.callee = base
                return self.set(e, base.ty, lvalue=True)
            if isinstance(base, (A.Name, A.Scoped)) and isinstance(base.sym, DeviceGlobalSym) and callee.arrow and base.ty.is_class:
                callee.arrow = False
            if base.ty.is_item and not callee.arrow:
                return self.item_query(e, base, callee)
            if base.ty is T.ERROR:
                return self.bad(e)
            obj = self.rvalue(base) if callee.arrow else base
            cls = obj.ty.pointee if callee.arrow and obj.ty.is_ptr else obj.ty if not callee.arrow else None
            if cls is None or not cls.is_class:
                self.error(callee.loc, f"member reference base type '{obj.ty}' is not a {'pointer to a ' if callee.arrow else ''}class")
                return self.bad(e)
            m = cls.find_method(callee.name)
            if m is None:
                self.error(callee.loc, f"no method named '{callee.name}' in '{cls.name}'")
                return self.bad(e)
            if not callee.arrow:
                if not obj.lvalue:
                    self.error(callee.loc, "cannot call a method on a temporary")
                    return self.bad(e)
                addr = A.AddrOf(obj.loc, obj)
                addr.operand, addr.ty, addr.lvalue = obj, PointerType(cls), False
                obj = addr
            return self.method_call(e, obj, m, via_pointer=callee.arrow)
        if isinstance(callee, A.Name) and self.lookup_local(callee.name) is None and callee.name not in self.globals:
            self.error(callee.loc, f"use of undeclared identifier '{callee.name}'")
            for a in e.args:
                self.expr(a)
            return self.bad(e)
        self.error(e.loc, "called object is not a function")
        return self.bad(e)

    def check_args(self, e, params, what):
        if len(e.args) != len(params):
            self.error(e.loc, f"{what} expects {len(params)} argument{'s' if len(params) != 1 else ''}, but {len(e.args)} were given")
            for a in e.args:
                self.expr(a)
            return False
        out = []
        for i, (a, (pname, pty)) in enumerate(zip(e.args, params)):
            x = self.rvalue(self.expr(a))
            if not pty.is_item:
                x = self.item_to_long(x)
            out.append(self.convert(x, pty, f"argument {i + 1} of {what}"))
        e.args = out
        return True

    def func_call(self, e, sym: FuncSym):
        if sym.is_kernel:
            self.error(e.loc, f"kernel '{sym.name}' cannot be called; launch it from the host")
            return self.bad(e)
        self.check_args(e, sym.params, f"'{sym.display}'")
        e.kind, e.target = "func", sym
        self.record_call(sym, e.loc)
        return self.set(e, sym.ret)

    def method_call(self, e, this_ptr, m: FuncSym, via_pointer):
        ok = self.check_args(e, m.params, f"'{m.display}'")
        owner = m.cls
        if this_ptr.ty.pointee is not owner:
            up = A.Cast(this_ptr.loc, None, this_ptr, PointerType(owner), "upcast")
            this_ptr = up
        e.this_arg = this_ptr
        e.target = m
        if m.is_virtual and via_pointer:
            e.kind = "virtual"
            if self.fn is not None:
                self.fn.vcalls.append((m, e.loc, self.region))
        else:
            e.kind = "method"
            self.record_call(m, e.loc)
        return self.set(e, m.ret) if ok else self.set(e, m.ret)

    def record_call(self, sym, loc):
        if self.fn is not None:
            self.fn.calls.append((sym, loc, self.region))

    def item_query(self, e, base, callee):
        ty = base.ty
        name = callee.name
        query = item_query(ty.kind, name)
        if query is not None:
            nargs = query.nargs
            if len(e.args) != nargs:
                self.error(e.loc, f"{ty.kind}::{name} expects {nargs} argument(s), but {len(e.args)} were given")
                return self.bad(e)
            e.args = [self.convert(self.rvalue(self.expr(a)), INT, "dimension") for a in e.args]
            if e.args:
                self.check_dim(e.args[0], ty.dims)
            if not base.lvalue:
                self.error(e.loc, f"cannot query a temporary {ty}")
                return self.bad(e)
            e.kind, e.target, e.this_arg = "item_query", name, base
            return self.set(e, LONG)
        self.error(callee.loc, f"'{ty}' has no member function '{name}'")
        return self.bad(e)

    def builtin_call(self, e, name):
        args = [self.item_to_long(self.rvalue(self.expr(a))) for a in e.args]
        e.kind, e.target = "builtin", name

        def arity(n):
            if len(args) != n:
                self.error(e.loc, f"'{name}' expects {n} argument{'s' if n != 1 else ''}, but {len(args)} were given")
                return False
            return True

        if name == "print":
            for a in args:
                if not (a.ty.is_arith or a.ty.is_ptr):
                    self.error(a.loc, f"print cannot format a value of type '{a.ty}'")
            e.args = [self.convert(a, DOUBLE, "print argument") if a.ty is FLOAT or a.ty is HALF else a for a in args]
            if self.fn is not None:
                self.fn.host_uses.append(("print", e.loc, self.region))
            return self.set(e, VOID)
        if name in MATH_1:
            if not arity(1) or not args[0].ty.is_arith:
                if len(args) == 1:
                    self.error(e.loc, f"'{name}' needs an arithmetic argument, not '{args[0].ty}'")
                return self.bad(e)
            ty = args[0].ty if args[0].ty.is_float else DOUBLE
            e.args = [self.convert(args[0], ty, "argument")]
            return self.set(e, ty)
        if name in ("pow", "min", "max"):
            if not arity(2):
                return self.bad(e)
            if not args[0].ty.is_arith or not args[1].ty.is_arith:
                self.error(e.loc, f"'{name}' needs arithmetic arguments, not '{args[0].ty}' and '{args[1].ty}'")
                return self.bad(e)
            ty = T.usual_arithmetic(args[0].ty, args[1].ty)
            if name == "pow" and not ty.is_float:
                ty = DOUBLE
            e.args = [self.convert(a, ty, "argument") for a in args]
            return self.set(e, ty)
        if name == "abs":
            if not arity(1) or not args[0].ty.is_arith:
                if len(args) == 1:
                    self.error(e.loc, f"'abs' needs an arithmetic argument, not '{args[0].ty}'")
                return self.bad(e)
            ty = args[0].ty if args[0].ty.is_float else T.promote(args[0].ty)
            e.args = [self.convert(args[0], ty, "argument")]
            return self.set(e, ty)
        # atomics
        need = {"atomic_load": 1, "atomic_store": 2, "atomic_compare_exchange": 3}.get(name, 2)
        if not arity(need):
            return self.bad(e)
        p = args[0]
        if not p.ty.is_ptr or not (p.ty.pointee.is_int or p.ty.pointee.is_float or p.ty.pointee.is_ptr) \
                or p.ty.pointee.is_float and p.ty.pointee.bits == 16:
            self.error(p.loc, f"'{name}' needs a pointer to an integer, float or pointer, not '{p.ty}'")
            return self.bad(e)
        vt = p.ty.pointee
        if name in ("atomic_fetch_and", "atomic_fetch_or", "atomic_fetch_xor") and not vt.is_int:
            self.error(p.loc, f"'{name}' needs a pointer to an integer, not '{p.ty}'")
            return self.bad(e)
        if name in ATOMIC_RMW and name != "atomic_exchange" and vt.is_ptr:
            self.error(p.loc, f"'{name}' needs a pointer to an integer or float, not '{p.ty}'")
            return self.bad(e)
        if vt.is_ptr or vt.bits == 64:
            if self.fn is not None and (vt.is_int or vt.is_float):
                self.fn.aspects.setdefault((Aspect.atomic64, self.region), (e.loc, f"a 64-bit atomic ('{name}' on '{vt}')"))
        rest = []
        if name == "atomic_compare_exchange":
            if args[1].ty != p.ty:
                self.error(args[1].loc, f"'expected' must have type '{p.ty}', not '{args[1].ty}'")
                return self.bad(e)
            rest = [args[1], self.convert(args[2], vt, "desired value")]
            e.args = [p] + rest
            return self.set(e, BOOL)
        if name == "atomic_load":
            e.args = [p]
            return self.set(e, vt)
        e.args = [p, self.convert(args[1], vt, "operand")]
        return self.set(e, VOID if name == "atomic_store" else vt)

    # ------------------------------------------------------------------ conversions
    def convert(self, e, to, what):
        """Implicit conversion of rvalue ``e`` to type ``to`` (C rules), or an error."""
        src = e.ty
        if src is None or to is None or src == to or src is to or src is T.ERROR or to is T.ERROR:
            return e
        if src.is_array:
            e = self.rvalue(e)
            src = e.ty
            if src == to:
                return e
        if to.is_bool and (src.is_arith or src.is_ptr):
            return A.Cast(e.loc, None, e, to, "tobool")
        if to.is_arith and src.is_item and src.dims == 1 and src.kind != "nd_item":
            return self.convert(A.Cast(e.loc, None, e, LONG, "item"), to, what)
        if to.is_arith and src.is_arith:
            return A.Cast(e.loc, None, e, to, "conv")
        if to.is_ptr:
            if src.is_ptr:
                if to.pointee == src.pointee or to.pointee.is_void or src.pointee.is_void:
                    return A.Cast(e.loc, None, e, to, "ptr")
                if src.pointee.is_class and to.pointee.is_class and src.pointee.derives_from(to.pointee):
                    return A.Cast(e.loc, None, e, to, "upcast")
            elif is_null_constant(e):
                return A.Cast(e.loc, None, e, to, "null")
        if src.is_void:
            self.error(e.loc, f"{what}: a void value cannot be used")
        else:
            self.error(e.loc, f"{what}: cannot convert '{src}' to '{to}'")
        return A.Cast(e.loc, None, e, to, "invalid")


def _slot_of(slots, name):
    for i, s in enumerate(slots):
        if s.name == name:
            return i
    raise AssertionError(f"overridden method {name} has no vtable slot")


_MANGLE = {"void": "v", "bool": "b", "char": "c", "uchar": "h", "short": "s", "ushort": "t", "int": "i",
           "uint": "j", "long": "l", "ulong": "m", "half": "DF16_", "float": "f", "double": "d"}


def _mangle_type(t) -> str:
    if t.is_ptr:
        return "P" + _mangle_type(t.pointee)
    if t.is_class:
        return t.mangled
    if t.is_item:
        return f"{len(t.kind)}{t.kind}ILi{t.dims}EE"
    if t.is_array:
        return f"A{t.count}_" + _mangle_type(t.elem)
    return _MANGLE[str(t)]


def _mangle_params(params) -> str:
    return "".join(_mangle_type(t) for _, t in params) or "v"


def _unique_id(file: str, name: str) -> str:
    """DPC++'s ``sycl-unique-id`` for a variable with internal linkage: a hash of
    the translation unit, three underscores, then the name."""
    import hashlib
    return hashlib.md5(file.encode()).hexdigest()[:16] + "___" + name
