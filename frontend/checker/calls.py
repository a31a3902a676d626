"""Calls: free functions, methods (direct and virtual), the ``id``/``range``/
``nd_item`` queries, ``device_global::get()`` and the built-in functions (math,
``print``, atomics).  The device-code rules on the call graph are the IR
passes' (``check-device-code``, run by ``frontend.compile_source``)."""
from __future__ import annotations

from ...device_configs.aspects import Aspect
from .. import ast, types
from ..group_ops import GROUP_FUNCTIONS
from ..item_queries import item_query
from ..math_builtins import MATH_1, MATH_2, MATH_3, MATH_CLASSIFY
from ..symbols import ConstSym, DeviceGlobalSym, FuncSym, LocalSym
from ..types import BOOL, DOUBLE, FLOAT, HALF, INT, LONG, UINT, VOID, PointerType
from .context import Part

ATOMIC_RMW = ("atomic_fetch_add", "atomic_fetch_sub", "atomic_fetch_min", "atomic_fetch_max",
              "atomic_fetch_and", "atomic_fetch_or", "atomic_fetch_xor", "atomic_exchange")
ATOMIC_ARITY = {"atomic_load": 1, "atomic_store": 2, "atomic_compare_exchange": 3}
BUILTINS = set(MATH_1) | {"min", "max", "abs", "clamp", "print", "atomic_load", "atomic_store",
                          "atomic_compare_exchange", "assert"} | set(ATOMIC_RMW) | set(MATH_2) | set(MATH_3) \
    | set(MATH_CLASSIFY) | set(GROUP_FUNCTIONS)


#: device_global member functions besides get(): name -> checker method
DG_MEMBERS = {"get_multi_ptr": "dg_multi_ptr", "has_property": "dg_has_property", "get_property": "dg_get_property"}
#: the ones that are ``static constexpr`` in the spec: usable in host code, constants everywhere
DG_STATIC_MEMBERS = ("has_property", "get_property")
#: device_global properties: name -> (DeviceGlobalSym attribute, value when given without a value)
DG_PROPERTIES = {"device_image_scope": "image_scope", "host_access": "host_access", "init_mode": "init_mode",
                 "implement_in_csr": "implement_in_csr"}


def constant_root(x):
    """The named constant (``ConstSym``) lvalue ``x`` is, or is a member or an
    element of (``TS1``, ``TS1.field4[2]``), or None: such objects are read-only."""
    t = type(x)
    while t is ast.Index and x.kind == "array" or t is ast.Member and not x.arrow:
        x = x.base
        t = type(x)
    return x.sym if t is ast.Name and isinstance(x.sym, ConstSym) else None


def is_device_global(e) -> bool:
    """Whether expression ``e`` names a device global itself (``g``, ``C::g``),
    which is where ``device_global``'s own members and operators apply."""
    return isinstance(e, (ast.Name, ast.Scoped)) and isinstance(e.sym, DeviceGlobalSym)


def known_dynamic_type(obj) -> bool:
    """Whether object expression ``obj`` names an object whose dynamic type is its
    static type: a local variable or parameter, a member subobject, an element of
    such an array.  A method call on anything else (``(*p).f()``, ``p[i].f()``, a
    device global, which is reached by reference) is virtual, as in C++."""
    t = type(obj)
    if t is ast.Name:
        return isinstance(obj.sym, LocalSym)
    if t is ast.Member:
        return True                 # a member subobject is always of its declared type
    if t is ast.Index:
        return obj.kind == "array" and known_dynamic_type(obj.base)
    return False


class Calls(Part):
    uses = {"expressions": ("expr", "rvalue", "set", "bad", "this", "item_to_long", "check_dim", "print_text",
                            "check_access", "dg_arrow"),
            "scopes": ("lookup_local",), "conversions": ("convert",),
            "groups": ("group_call", "assert_call", "combine_call")}

    def e_Call(self, e: ast.Call):
        callee = e.callee
        if isinstance(callee, ast.Name):
            typed = self.call_by_name(e, callee)
            if typed is not None:
                return typed
        if isinstance(callee, ast.Member):
            return self.member_call(e, callee)
        if isinstance(callee, ast.Name) and self.lookup_local(callee.name) is None and callee.name not in self.globals:
            self.error(callee.loc, f"use of undeclared identifier '{callee.name}'", self.item_query_hint(callee))
            for a in e.args:
                self.expr(a)
            return self.bad(e)
        self.error(e.loc, "called object is not a function")
        return self.bad(e)

    def item_query_hint(self, callee: ast.Name):
        """A note for ``get_global_id(0)`` written as a free function: work-item
        queries are member functions of the kernel's item parameter."""
        kinds = [k for k in ("nd_item", "id", "range") if item_query(k, callee.name) is not None]
        if not kinds:
            return None
        fn = self.cx.fn
        first = fn.params[0] if fn is not None and fn.params else (None, None)
        item = first[0] if first[1] is not None and first[1].is_item and first[1].kind in kinds else "it"
        args = "0" if item_query(kinds[0], callee.name).nargs else ""
        return [self.note(callee.loc, f"'{callee.name}' is a member function of {kinds[0]}; call it on the item, "
                                      f"as in '{item}.{callee.name}({args})'")]

    def call_by_name(self, e, callee: ast.Name):
        """``f(...)`` where ``f`` is no local: a method of ``this``, a function or a
        built-in; None when it is none of those."""
        if self.lookup_local(callee.name) is not None:
            return None
        fn = self.cx.fn
        if fn is not None and fn.cls is not None:
            m = fn.cls.find_method(callee.name)
            if m is not None and not m.is_ctor:
                self.check_access(fn.cls, callee.name, callee.loc)
                return self.method_call(e, self.this(callee.loc), m, via_pointer=True)
        sym = self.globals.get(callee.name)
        if isinstance(sym, FuncSym):
            return self.func_call(e, sym)
        if sym is None and callee.name in GROUP_FUNCTIONS:
            return self.group_call(e, callee.name)
        if sym is None and callee.name == "assert":
            return self.assert_call(e)
        if sym is None and callee.name in BUILTINS:
            return self.builtin_call(e, callee.name)
        return None

    def member_call(self, e, callee: ast.Member):
        """``x.f(...)`` / ``p->f(...)``: a method, an item query or ``dg.get()``."""
        if callee.name in DG_STATIC_MEMBERS and not callee.arrow:
            # static constexpr in the spec: no access to the variable, so host code may ask too
            self.cx.static_member_use = True
            try:
                base = self.expr(callee.base)
            finally:
                self.cx.static_member_use = False
        else:
            base = self.expr(callee.base)
        if is_device_global(base):
            done = self.device_global_member(e, base, callee)
            if done is not None:
                return done
        if base.ty.is_item and not callee.arrow:
            return self.item_query_call(e, base, callee)
        if base.ty.is_reducer and not callee.arrow:
            return self.combine_call(e, base, callee)
        if base.ty is types.ERROR:
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
        self.check_access(cls, callee.name, callee.loc)
        virtual = callee.arrow
        if not callee.arrow:
            if not obj.lvalue:
                self.error(callee.loc, "cannot call a method on a temporary")
                return self.bad(e)
            if constant_root(obj) is not None:
                self.error(callee.loc, f"cannot call method '{callee.name}' on constant '{constant_root(obj).name}' "
                                       f"(methods may modify their object); copy it into a variable first")
                return self.bad(e)
            virtual = not known_dynamic_type(obj)
            addr = ast.AddrOf(obj.loc, obj)
            addr.operand, addr.ty, addr.lvalue = obj, PointerType(cls), False
            obj = addr
        return self.method_call(e, obj, m, via_pointer=virtual)

    def device_global_member(self, e, base, callee: ast.Member):
        """``dg.get()``, ``dg.get_multi_ptr()``, ``dg.has_property(..)``/``get_property(..)``;
        None for a method of ``T`` (``dg->f()`` is then ``dg.f()``, as ``operator->``)."""
        if callee.name == "get" and not callee.arrow:
            if e.args:
                self.error(e.loc, "device_global::get() takes no arguments")
            e.kind = "dg_get"
            e.callee = base
            return self.set(e, base.ty, lvalue=True)
        if not callee.arrow and callee.name in DG_MEMBERS:
            return getattr(self, DG_MEMBERS[callee.name])(e, base)
        if callee.arrow and not self.dg_arrow(base, callee.loc):
            return self.bad(e)
        return None

    def dg_multi_ptr(self, e, base):
        """``dg.get_multi_ptr()``: a pointer to the global's ``T`` (SYCL's
        ``multi_ptr<T, global_space>``; pointers here are global-space USM pointers)."""
        if e.args:
            self.error(e.loc, "device_global::get_multi_ptr() takes no arguments")
        addr = ast.AddrOf(e.loc, base)
        return self.set(addr, PointerType(base.ty))

    def dg_property_name(self, e, what):
        """The property ``dg.has_property(name)`` / ``get_property(name)`` names, or None."""
        arg = e.args[0] if len(e.args) == 1 else None
        if not isinstance(arg, ast.Name) or arg.name not in DG_PROPERTIES:
            self.error(e.loc, f"device_global::{what} takes one property name: {', '.join(DG_PROPERTIES)}")
            return None
        return arg.name

    def dg_has_property(self, e, base):
        """``dg.has_property(host_access)``: whether the declaration gives the property (a constant)."""
        name = self.dg_property_name(e, "has_property")
        if name is None:
            return self.bad(e)
        value = getattr(base.sym, DG_PROPERTIES[name])
        return self.set(ast.BoolLit(e.loc, value is not None and value is not False), BOOL)

    def dg_get_property(self, e, base):
        """``dg.get_property(host_access)``: the property's value, a constant: the
        enumerator's number for ``host_access`` (read 0, write 1, read_write 2, none 3)
        and ``init_mode`` (reprogram 0, reset 1), ``true`` for the others; a
        property the declaration does not give is an error, as SYCL's overload set makes it."""
        name = self.dg_property_name(e, "get_property")
        if name is None:
            return self.bad(e)
        value = getattr(base.sym, DG_PROPERTIES[name])
        if value is None or value is False and name == "device_image_scope":
            self.error(e.loc, f"device_global '{base.sym.name}' does not have property '{name}'")
            return self.bad(e)
        if isinstance(value, bool):
            return self.set(ast.BoolLit(e.loc, value), BOOL)
        return self.set(ast.IntLit(e.loc, value, str(value)), INT)

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
        return self.set(e, sym.ret)

    def method_call(self, e, this_ptr, m: FuncSym, via_pointer):
        self.check_args(e, m.params, f"'{m.display}'")
        owner = m.cls
        if this_ptr.ty.pointee is not owner:
            this_ptr = ast.Cast(this_ptr.loc, None, this_ptr, PointerType(owner), "upcast")
        e.this_arg = this_ptr
        e.target = m
        e.kind = "virtual" if m.is_virtual and via_pointer else "method"
        return self.set(e, m.ret)

    def item_query_call(self, e, base, callee):
        """A member function of an ``id``/``range``/``nd_item`` (``item_queries``)."""
        ty = base.ty
        name = callee.name
        query = item_query(ty.kind, name)
        if query is None:
            self.error(callee.loc, f"'{ty}' has no member function '{name}'")
            return self.bad(e)
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
        return self.set(e, UINT if query.how == "sub_group" else LONG)

    # ------------------------------------------------------------------ built-ins
    def builtin_call(self, e, name):
        if name == "print":
            args = [self.print_text(a) if isinstance(a, ast.StrLit) else self.item_to_long(self.rvalue(self.expr(a)))
                    for a in e.args]
        else:
            args = [self.item_to_long(self.rvalue(self.expr(a))) for a in e.args]
        e.kind, e.target = "builtin", name
        if name == "print":
            return self.print_call(e, args)
        if name in MATH_1 or name == "abs":
            return self.unary_math(e, name, args)
        if name in MATH_2 or name in ("min", "max"):
            return self.binary_math(e, name, args)
        if name in MATH_3 or name == "clamp":
            return self.ternary_math(e, name, args)
        if name in MATH_CLASSIFY:
            return self.classify(e, name, args)
        return self.atomic_call(e, name, args)

    def arity(self, e, name, args, n) -> bool:
        if len(args) != n:
            self.error(e.loc, f"'{name}' expects {n} argument{'s' if n != 1 else ''}, but {len(args)} were given")
            return False
        return True

    def print_call(self, e, args):
        for a in args:
            if not (a.ty.is_arith or a.ty.is_ptr):
                self.error(a.loc, f"print cannot format a value of type '{a.ty}'")
        e.args = [self.convert(a, DOUBLE, "print argument") if a.ty is FLOAT or a.ty is HALF else a for a in args]
        return self.set(e, VOID)

    def unary_math(self, e, name, args):
        """``sqrt`` and the other one-argument functions (integers computed in
        double), and ``abs`` (integers promoted)."""
        if not self.arity(e, name, args, 1) or not args[0].ty.is_arith:
            if len(args) == 1:
                self.error(e.loc, f"'{name}' needs an arithmetic argument, not '{args[0].ty}'")
            return self.bad(e)
        if args[0].ty.is_float:
            ty = args[0].ty
        else:
            ty = types.promote(args[0].ty) if name == "abs" else DOUBLE
        e.args = [self.convert(args[0], ty, "argument")]
        return self.set(e, ty)

    def binary_math(self, e, name, args):
        """``pow``, ``min``, ``max``: the usual arithmetic conversions (``pow`` in floating point)."""
        if not self.arity(e, name, args, 2):
            return self.bad(e)
        if not args[0].ty.is_arith or not args[1].ty.is_arith:
            self.error(e.loc, f"'{name}' needs arithmetic arguments, not '{args[0].ty}' and '{args[1].ty}'")
            return self.bad(e)
        ty = types.usual_arithmetic(args[0].ty, args[1].ty)
        if name in MATH_2 and not ty.is_float:
            ty = DOUBLE
        e.args = [self.convert(a, ty, "argument") for a in args]
        return self.set(e, ty)

    def ternary_math(self, e, name, args):
        """``fma``, ``mad`` (floating point) and ``clamp(x, lo, hi)`` (any arithmetic
        type): the usual arithmetic conversions over the three arguments."""
        if not self.arity(e, name, args, 3):
            return self.bad(e)
        if not all(a.ty.is_arith for a in args):
            self.error(e.loc, f"'{name}' needs arithmetic arguments, not {', '.join(repr(str(a.ty)) for a in args)}")
            return self.bad(e)
        ty = types.usual_arithmetic(types.usual_arithmetic(args[0].ty, args[1].ty), args[2].ty)
        if name != "clamp" and not ty.is_float:
            ty = DOUBLE
        e.args = [self.convert(a, ty, "argument") for a in args]
        return self.set(e, ty)

    def classify(self, e, name, args):
        """``isnan``/``isinf``: a floating-point argument (integers as double), a bool."""
        if not self.arity(e, name, args, 1) or not args[0].ty.is_arith:
            if len(args) == 1:
                self.error(e.loc, f"'{name}' needs an arithmetic argument, not '{args[0].ty}'")
            return self.bad(e)
        e.args = [self.convert(args[0], args[0].ty if args[0].ty.is_float else DOUBLE, "argument")]
        return self.set(e, BOOL)

    def atomic_call(self, e, name, args):
        if not self.arity(e, name, args, ATOMIC_ARITY.get(name, 2)):
            return self.bad(e)
        p = args[0]
        vt = self.atomic_value_type(name, p)
        if vt is None:
            return self.bad(e)
        if (vt.is_ptr or vt.bits == 64) and self.cx.fn is not None and (vt.is_int or vt.is_float):
            self.cx.fn.aspects.setdefault((Aspect.atomic64, self.cx.region), (e.loc, f"a 64-bit atomic ('{name}' on '{vt}')"))
        if name == "atomic_compare_exchange":
            if args[1].ty != p.ty:
                self.error(args[1].loc, f"'expected' must have type '{p.ty}', not '{args[1].ty}'")
                return self.bad(e)
            e.args = [p, args[1], self.convert(args[2], vt, "desired value")]
            return self.set(e, BOOL)
        if name == "atomic_load":
            e.args = [p]
            return self.set(e, vt)
        e.args = [p, self.convert(args[1], vt, "operand")]
        return self.set(e, VOID if name == "atomic_store" else vt)

    def atomic_value_type(self, name, p):
        """The type atomic ``name`` works on through pointer ``p``, or None (an error)."""
        pointee = p.ty.pointee if p.ty.is_ptr else None
        if pointee is None or not (pointee.is_int or pointee.is_float or pointee.is_ptr) \
                or pointee.is_float and pointee.bits == 16:
            self.error(p.loc, f"'{name}' needs a pointer to an integer, float or pointer, not '{p.ty}'")
            return None
        if name in ("atomic_fetch_and", "atomic_fetch_or", "atomic_fetch_xor") and not pointee.is_int:
            self.error(p.loc, f"'{name}' needs a pointer to an integer, not '{p.ty}'")
            return None
        if name in ATOMIC_RMW and name != "atomic_exchange" and pointee.is_ptr:
            self.error(p.loc, f"'{name}' needs a pointer to an integer or float, not '{p.ty}'")
            return None
        return pointee
