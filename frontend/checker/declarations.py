"""File-scope declarations: classes (fields, methods, the vtable), functions
and kernels (specifiers, signature, merging a declaration with its definition),
file-scope constants and device globals."""
from __future__ import annotations

from .. import ast
from ..symbols import DeviceGlobalSym, FuncSym, SpecIdSym
from ..types import INT, LOCAL, VOID, ClassType, PointerType
from .calls import BUILTINS
from .context import Part
from .mangling import constructor_name, method_name, static_member_name, unique_id


class Declarations(Part):
    uses = {"type_names": ("resolve_type", "is_complete", "fits_address_space", "spec_id_element"),
            "properties": ("apply_function_props", "dg_props"),
            "constants": ("declare_constant", "device_global_init", "const_initializer")}

    # ------------------------------------------------------------------ classes
    def declare_class(self, node: ast.ClassDef):
        """Declare class ``node``; returns its methods with bodies, to check later."""
        if node.name in self.classes:
            self.error(node.loc, f"redefinition of class '{node.name}'",
                       [self.note(self.classes[node.name].loc, "previous definition is here")])
            return []
        cls = ClassType(node.name, node.kind, node.loc)
        self.classes[node.name] = cls
        if node.base is not None:
            self.set_base(cls, node.base)
        methods = []
        access = "public"       # the language's default for class and struct alike (docs/language.md, "Declarations")
        for m in node.members:
            if isinstance(m, ast.AccessLabel):
                access = m.word
                continue
            if isinstance(m, ast.Destructor):
                self.refuse_destructor(m, cls)
                continue
            if isinstance(m, ast.VarDecl):
                self.declare_member_variable(m, cls, access)
                names = [d.name for d in m.decls]
            else:
                sym = self.declare_function(m, cls)
                if sym is not None:
                    methods.append((m, sym))
                names = [] if m.is_ctor else [m.name]
            if access != "public":
                cls.access.update((n, access) for n in names)
        self.build_vtable(cls, methods)
        offset = (1 if cls.own_vptr else 0) + (1 if cls.base else 0)
        cls.field_index = {name: offset + i for i, (name, _) in enumerate(cls.fields)}
        cls.complete = True
        if not self.fits_address_space(cls):
            self.error(node.loc, f"'{cls.name}' is too large: its size exceeds the address space's limit of "
                                 f"2^61 bytes")
        self.prog.classes.append(cls)
        return [(m, s) for m, s in methods if m.body is not None]

    def refuse_destructor(self, m: ast.Destructor, cls):
        """Objects of this language are never destroyed (no scope ends run code),
        so a destructor would silently never run: refused."""
        if m.name != cls.name:
            self.error(m.loc, f"destructor '~{m.name}' in class '{cls.name}' must be named '~{cls.name}'")
        cls.destructor = m.loc
        self.error(m.loc, f"destructor '~{cls.name}' is not supported: objects are never destroyed in this "
                          f"language, so every class is trivially destructible")

    def set_base(self, cls, base_tok):
        base = self.classes.get(base_tok[1])
        loc = self.tok_loc(base_tok)
        if base is None:
            self.error(loc, f"unknown base class '{base_tok[1]}'")
        elif base is cls or not base.complete:
            self.error(loc, f"base class '{base.name}' is incomplete")
        else:
            cls.base = base

    def declare_member_variable(self, m: ast.VarDecl, cls, access="public"):
        if any(s[1] == "static" for s in m.specs):
            if m.type.kind == "dg" and access != "public":
                # sycl_ext_oneapi_device_global, "Restrictions on creating device global
                # objects": a static member only if publicly accessible from namespace scope
                for dcl in m.decls:
                    self.error(dcl.loc, f"device_global '{cls.name}::{dcl.name}' is a {access} static member: a "
                                        f"device_global static member must be public (accessible from namespace scope)")
                return
            self.declare_global(m, cls)
            return
        for s in m.specs:
            self.error(self.tok_loc(s), f"'{s[1]}' is not allowed on a field")
        if m.type.kind == "dg":
            self.error(m.type.loc, "device_global can only be a static class member, not a non-static member")
            return
        for dcl in m.decls:
            self.declare_field(m, dcl, cls)

    def declare_field(self, m: ast.VarDecl, dcl: ast.Declarator, cls):
        ty = self.resolve_type(m.type, dcl.dims)
        if ty is None:
            return
        if dcl.props:
            self.error(dcl.props[0].loc, f"properties are not allowed on field '{dcl.name}'")
        if dcl.init is not None:
            self.error(dcl.init.loc, f"default member initialisers are not supported (field '{dcl.name}')")
        if not self.is_complete(ty, dcl.loc, f"field '{dcl.name}'"):
            return
        if ty.is_item and ty.kind == "nd_item":
            self.error(dcl.loc, "nd_item cannot be a field")
            return
        if dcl.name in cls.field_index or cls.find_field(dcl.name):
            self.error(dcl.loc, f"duplicate field '{dcl.name}'")
            return
        cls.fields.append((dcl.name, ty))

    def build_vtable(self, cls, methods):
        """The vtable: inherit the base's slots, override by name, append new virtuals."""
        slots = list(cls.base.vslots) if cls.base else []
        for m, sym in methods:
            if sym.is_ctor:
                continue
            inherited = cls.base.find_method(sym.name) if cls.base else None
            if inherited is not None and inherited.is_virtual:
                self.override(m, sym, inherited, slots)
            elif m.override is not None:
                self.error(m.override, f"'{sym.display}' marked 'override' but does not override a virtual method")
            elif sym.is_virtual:
                slots.append(sym)
            if sym.set_name is not None and not sym.is_virtual:
                self.error(m.loc, "indirectly_callable can only be applied to virtual methods")
        cls.vslots = slots
        cls.own_vptr = bool(slots) and (cls.base is None or not cls.base.polymorphic)

    def override(self, m, sym, inherited, slots):
        """``sym`` overrides virtual ``inherited``: it takes its vtable slot."""
        sym.is_virtual = True
        if [p for _, p in inherited.params] != [p for _, p in sym.params] or inherited.ret != sym.ret:
            self.error(m.loc, f"'{sym.display}' overrides '{inherited.display}' with a different signature")
        if inherited.set_name is not None and sym.set_name != inherited.set_name:
            what = "is not indirectly_callable" if sym.set_name is None else "is in another virtual-function set"
            self.error(m.loc, f"'{sym.display}' overrides an indirectly_callable method but {what}",
                       [self.note(inherited.loc, "overridden method is here")])
        slots[slots.index(inherited) if inherited in slots else _slot_of(slots, sym.name)] = sym

    # ------------------------------------------------------------------ functions
    def declare_function(self, node: ast.FuncDef, cls: ClassType | None) -> FuncSym | None:
        specs = {s[1]: s for s in node.specs}
        if node.is_kernel and cls is not None:
            self.error(node.loc, "kernels must be declared at file scope")
            return None
        self.check_specifiers(node, cls, specs)
        if node.is_ctor and (cls is None or node.name != cls.name):
            self.error(node.loc, f"function '{node.name}' needs a return type")
            return None
        ret = self.return_type(node)
        params = self.parameters(node)
        sym = self.function_symbol(node, cls, specs, ret, params)
        if cls is not None:
            return self.add_method(node, sym, cls)
        return self.add_function(node, sym)

    def check_specifiers(self, node: ast.FuncDef, cls, specs):
        for bad in ("virtual",) if cls is None else ("extern", "SYCL_EXTERNAL"):
            if bad in specs:
                self.error(self.tok_loc(specs[bad]), f"'{bad}' is not allowed here")
        if node.is_kernel:
            for bad in ("host", "virtual", "static", "extern", "inline", "constexpr"):
                if bad in specs:
                    self.error(self.tok_loc(specs[bad]), f"a kernel cannot be '{bad}'")
        if "static" in specs and cls is not None:
            self.error(self.tok_loc(specs["static"]), "static member functions are not supported")

    def return_type(self, node: ast.FuncDef):
        if node.is_ctor or node.is_kernel:
            return VOID
        ret = self.resolve_type(node.ret)
        if ret is None:
            return VOID
        if ret.is_array:
            self.error(node.ret.loc, "functions cannot return arrays")
        return ret

    def parameters(self, node: ast.FuncDef):
        """(name, type) of each parameter; ``(void)`` is no parameters."""
        params = []
        seen = set()
        plist = node.params
        if len(plist) == 1 and plist[0].name is None and plist[0].type.kind == "prim" \
                and plist[0].type.words == ("void",) and not plist[0].type.ptr and not plist[0].dims:
            plist = []
        for i, p in enumerate(plist):
            pty = self.resolve_type(p.type, p.dims[1:] if p.dims else (), allow_reducer=True,
                                    allow_handler=node.is_kernel and i == len(plist) - 1)
            if pty is None:
                params.append((p.name, INT))
                continue
            if p.dims:
                pty = PointerType(pty)      # array parameters are pointers, as in C
            self.check_parameter(node, i, p, pty, params)
            if p.name in seen:
                self.error(p.loc, f"redefinition of parameter '{p.name}'")
            seen.add(p.name)
            params.append((p.name, pty))
        return params

    def check_parameter(self, node, i, p, pty, before):
        """Parameter ``i`` of ``node`` has type ``pty`` (``before``: the (name, type) of
        the ones before it)."""
        if pty.is_void:
            self.error(p.loc, "parameter cannot have type void")
        elif pty.is_class and not pty.complete:
            self.error(p.loc, f"parameter has incomplete type '{pty}'")
        if pty.is_item and pty.kind == "nd_item" and not node.is_kernel:
            return                          # helpers take the kernel's nd_item (barriers, group functions)
        if pty.is_item and not (node.is_kernel and i == 0 and pty.kind != "range"):
            self.error(p.loc, f"{pty} can only be the first parameter of a kernel")
        first = before[0][1] if before else None
        if pty.is_reducer and not (node.is_kernel and first is not None and first.is_item):
            self.error(p.loc, f"{pty} can only be a parameter of a kernel launched with parallel_for "
                              "(first parameter id<N> or nd_item<N>)")
        if pty.is_ptr and pty.space == LOCAL and node.is_kernel and not (first is not None and first.is_item
                                                                          and first.kind == "nd_item"):
            self.error(p.loc, f"a '{pty}' parameter (work-group memory sized at launch) needs an nd_range kernel "
                              "(first parameter nd_item<N>)")

    def function_symbol(self, node: ast.FuncDef, cls, specs, ret, params) -> FuncSym:
        if node.is_ctor:
            llname = constructor_name(cls, params)
        elif cls is not None:
            llname = method_name(cls, node.name, params)
        else:
            llname = node.name
        sym = FuncSym(node.name, llname, ret, params, node.loc)
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
        return sym

    def add_method(self, node: ast.FuncDef, sym: FuncSym, cls) -> FuncSym | None:
        if node.is_ctor:
            if any(len(c.params) == len(sym.params) for c in cls.ctors):
                self.error(node.loc, f"constructor of '{cls.name}' with {len(sym.params)} parameter(s) already declared")
                return None
            cls.ctors.append(sym)
        else:
            if node.name in cls.methods or cls.find_field(node.name):
                self.error(node.loc, f"redefinition of '{cls.name}::{node.name}'")
                return None
            cls.methods[node.name] = sym
        if node.body is None and not sym.is_virtual:
            self.error(node.loc, f"method '{sym.display}' must be defined in its class")
        elif node.body is None:
            self.error(node.loc, f"method '{sym.display}' must be defined in its class (pure virtual methods are not supported)")
        self.prog.functions.append(sym)
        return sym

    def add_function(self, node: ast.FuncDef, sym: FuncSym) -> FuncSym | None:
        prev = self.globals.get(node.name)
        if prev is not None:
            if isinstance(prev, FuncSym) and not prev.is_kernel and not sym.is_kernel:
                return self.merge_declarations(node, prev, sym)
            self.error(node.loc, f"redefinition of '{node.name}'", [self.note(prev.loc, "previous definition is here")])
            return None
        if node.name in BUILTINS:
            self.error(node.loc, f"'{node.name}' is a builtin function and cannot be redefined")
            return None
        self.globals[node.name] = sym
        self.prog.functions.append(sym)
        return sym

    def merge_declarations(self, node, prev: FuncSym, sym: FuncSym) -> FuncSym | None:
        """A second declaration of free function ``prev``: merged into the first symbol."""
        if [t for _, t in prev.params] != [t for _, t in sym.params] or prev.ret != sym.ret:
            self.error(node.loc, f"conflicting declaration of '{node.name}'",
                       [self.note(prev.loc, "previous declaration is here")])
            return None
        if prev.defined and sym.defined:
            self.error(node.loc, f"redefinition of '{node.name}'", [self.note(prev.loc, "previous definition is here")])
            return None
        prev.is_external |= sym.is_external
        prev.is_host |= sym.is_host
        if sym.defined:
            prev.defined, prev.node, prev.loc = True, node, node.loc
            prev.params = sym.params
            prev.device_has = sym.device_has if sym.device_has is not None else prev.device_has
        return prev

    # ------------------------------------------------------------------ variables
    def declare_global(self, node: ast.VarDecl, cls: ClassType | None):
        """File-scope ``const`` variables and device globals (``cls``: static members)."""
        specs = {s[1]: s for s in node.specs}
        self.check_variable_specifiers(node, specs)
        for dcl in node.decls:
            if node.type.kind == "spec_id":
                self.declare_spec_id(node, dcl, cls, specs)
            elif node.type.kind != "dg":
                self.declare_constant(node, dcl, self.resolve_type(node.type, dcl.dims), cls, "constexpr" in specs)
            else:
                self.declare_device_global(node, dcl, cls, specs)

    def check_variable_specifiers(self, node: ast.VarDecl, specs):
        """The declaration specifiers a file-scope variable or static member may
        have: each once, ``static`` and ``extern`` not together (C++'s storage
        classes), ``inline`` on a device_global (the spec's ``inline
        device_global<int> c; // OK``) or a constant, ``constexpr`` on a constant."""
        seen = set()
        for tok in node.specs:
            if tok[1] in seen:
                self.error(self.tok_loc(tok), f"duplicate '{tok[1]}' declaration specifier")
            seen.add(tok[1])
        if "static" in specs and "extern" in specs:
            self.error(self.tok_loc(specs["extern"]), "'extern' cannot be combined with 'static'")
        kind = node.type.kind
        for bad in ("virtual", "host"):
            if bad in specs:
                self.error(self.tok_loc(specs[bad]), f"'{bad}' is not allowed on a variable")
        if "inline" in specs and kind == "spec_id":
            self.error(self.tok_loc(specs["inline"]), "'inline' is not allowed on a specialization_id")
        if "constexpr" in specs and kind in ("dg", "spec_id"):
            what = "device_global" if kind == "dg" else "specialization_id"
            self.error(self.tok_loc(specs["constexpr"]), f"a {what} cannot be 'constexpr' (it is not a constant; "
                                                         f"its initialiser is a constant expression without it)")

    def declare_device_global(self, node: ast.VarDecl, dcl: ast.Declarator, cls, specs):
        if dcl.dims:
            self.error(dcl.loc, "an array of device_global is not allowed; use device_global<T[N]>")
            return
        ty = self.resolve_type(node.type, (), allow_dg=True)
        if ty is None or not self.is_complete(ty, dcl.loc, f"device_global '{dcl.name}'"):
            return
        llname = static_member_name(cls, dcl.name) if cls is not None else dcl.name
        g = DeviceGlobalSym(dcl.name, llname, ty, dcl.loc)
        g.cls = cls
        g.is_static = "static" in specs and cls is None
        g.is_extern = "extern" in specs
        g.is_inline = "inline" in specs
        self.dg_props(dcl, g)
        if g.is_extern and dcl.init is not None:
            self.error(dcl.init.loc, f"extern device_global '{dcl.name}' cannot have an initialiser")
        if not g.is_extern:
            self.device_global_init(g, dcl.init)
        g.unique_id = unique_id(self.file, llname) if g.is_static else llname
        if cls is not None:
            if dcl.name in cls.statics:
                self.error(dcl.loc, f"redefinition of '{cls.name}::{dcl.name}'")
                return
            cls.statics[dcl.name] = g
        else:
            prev = self.globals.get(dcl.name)
            if isinstance(prev, DeviceGlobalSym) and (prev.is_extern or g.is_extern) and prev.ty == g.ty:
                if not g.is_extern:          # definition after an extern declaration
                    prev.is_extern, prev.init, prev.construct = False, g.init, g.construct
                    prev.image_scope |= g.image_scope
                dcl.sym = prev
                return
            if not self.define_global(dcl.name, g, dcl.loc):
                return
        dcl.sym = g
        self.prog.device_globals.append(g)

    def declare_spec_id(self, node: ast.VarDecl, dcl: ast.Declarator, cls, specs):
        """``specialization_id<T> name{default};`` (SYCL 2020 4.9.5): at namespace
        scope, never extern, ``T`` arithmetic or a struct/array of them, the
        default a constant expression (absent: value-initialised, zero)."""
        if cls is not None:
            self.error(dcl.loc, "specialization_id must be declared at namespace scope, not as a class member")
            return
        if "extern" in specs:
            self.error(self.tok_loc(specs["extern"]), "a specialization_id cannot be 'extern'")
            return
        if dcl.dims:
            self.error(dcl.loc, "an array of specialization_id is not allowed; use specialization_id<T[N]>")
            return
        ty = self.spec_id_element(node.type)
        if ty is None or not self.is_complete(ty, dcl.loc, f"specialization_id '{dcl.name}'"):
            return
        if dcl.props:
            self.error(dcl.props[0].loc, f"properties are not allowed on specialization_id '{dcl.name}'")
        sym = SpecIdSym(dcl.name, dcl.name, ty, dcl.loc)
        sym.is_static = "static" in specs
        sym.unique_id = unique_id(self.file, dcl.name) if sym.is_static else dcl.name
        init = dcl.init
        # name{args}: the constructor's arguments, ``T`` made from them; name{{...}}: T's own brace list
        if isinstance(init, ast.InitList) and len(init.items) == 1 and isinstance(init.items[0], ast.InitList):
            init = init.items[0]
        if init is not None:
            sym.init = self.const_initializer(init, ty, what="the default value of a specialization_id")
        if not self.define_global(dcl.name, sym, dcl.loc):
            return
        dcl.sym = sym
        self.prog.spec_ids.append(sym)

    def define_global(self, name, sym, loc) -> bool:
        if name in self.globals:
            self.error(loc, f"redefinition of '{name}'", [self.note(self.globals[name].loc, "previous definition is here")])
            return False
        self.globals[name] = sym
        return True


def _slot_of(slots, name):
    for i, s in enumerate(slots):
        if s.name == name:
            return i
    raise AssertionError(f"overridden method {name} has no vtable slot")
