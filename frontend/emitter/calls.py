"""Calls (direct, method, virtual), placement ``new``, item queries and
built-in functions (math intrinsics, atomics, ``print`` as ``printf``)."""
from __future__ import annotations

from .. import ast
from ..ir_attributes import render
from ..ir_writer import DOUBLE, I1, I32, I64, PTR, Function, const, int_type
from ..data_layout import flat_fields, sizeof
from ..item_queries import item_query
from .context import ZERO32, Part, i32, i64

_UNARY_MATH = frozenset(("sqrt", "exp", "log", "sin", "cos", "fabs", "floor", "ceil", "exp2", "log2",
                         "log10", "tan", "round", "trunc"))


def _suffix(ty):
    """The type suffix of an intrinsic's name (``llvm.sqrt.f32``)."""
    if ty.is_float:
        return {16: "f16", 32: "f32", 64: "f64"}[ty.bits]
    return f"i{ty.bits}"


class Calls(Part):
    uses = {"memory": ("addr", "dg_addr", "from_abi", "gep", "load", "member_gep", "store", "to_abi"),
            "globals": ("at", "cstring", "intrinsic"), "functions": ("construct_implicit",),
            "llvm_types": ("lltype", "valtype", "zero"), "expressions": ("value",)}

    def e_New(self, e):
        b = self.cx.fn.builder
        place = self.value(e.place)
        cls = e.cls
        if e.ctor is not None:
            args = [self.to_abi(self.value(a), t) for a, (_, t) in zip(e.args, e.ctor.params)]
            b.call(self.fns[e.ctor], [place] + args)
            return place
        b.store(self.zero(cls), place)          # value-initialisation
        self.construct_implicit(cls, place)
        for a, (fname, fty) in zip(e.args, flat_fields(cls)):
            path, _ = cls.find_field(fname)
            self.store(self.value(a), self.member_gep(place, cls, path), fty)
        return place
    def e_Call(self, e):
        b = self.cx.fn.builder
        kind = e.kind
        if kind == "builtin":
            return self.builtin(e)
        if kind == "dg_get":
            return self.load(self.dg_addr(e.callee.sym), e.ty)
        if kind == "item_query":
            return self.item_query(e)
        f = e.target
        args = [self.to_abi(self.value(a), t) for a, (_, t) in zip(e.args, f.params)]
        at = self.at(e.loc)
        if kind == "func":
            r = b.call(self.fns[f], args, suffix=at)
        else:
            this = self.value(e.this_arg)
            if kind == "method":
                r = b.call(self.fns[f], [this] + args, suffix=at)
            else:
                cls = f.cls
                vptr = b.load(self.member_gep(this, cls, cls.vptr_path()), PTR, name="vtable")
                slot = b.gep(vptr, [i64(cls.vslots.index(f))], PTR)
                fptr = b.load(slot, PTR, name="vfn")
                # the target and its set (empty: not indirectly_callable), for the device-code checks
                target = self.cx.module.metadata([f.display, f.set_name or ""])
                r = b.call(fptr, [this] + args, ret=self.fns[f].ret,
                           suffix=f" {self.cx.module.attribute_group([render('virtual-call')])}{at}"
                                  f", !minisycl.vcall {target}")
        return self.from_abi(r, e.ty)
    def item_query(self, e):
        """A member function of an ``id``/``range``/``nd_item`` (``item_queries``):
        loads of the item object's vectors."""
        b = self.cx.fn.builder
        item = e.this_arg
        ty = item.ty
        addr = self.addr(item)
        query = item_query(ty.kind, e.target)

        def field(idx, d):
            return b.load(self.gep(addr, [ZERO32, i32(idx), d], ty), I64)

        if query.how == "product":
            total = i64(1)
            for d in range(ty.dims):
                total = b.binop("mul", total, field(query.fields[0], i32(d)))
            return total
        if query.how == "linear":
            idx, rng = query.fields
            lin = i64(0)
            for d in range(ty.dims):
                dd = i32(d)
                lin = b.binop("add", b.binop("mul", lin, field(rng, dd)), field(idx, dd))
            return lin
        d = self.value(e.args[0])
        if query.how == "ratio":
            return b.binop("udiv", field(query.fields[0], d), field(query.fields[1], d))
        return field(query.fields[0], d)
    def builtin(self, e):
        b = self.cx.fn.builder
        name = e.target
        if name == "print":
            return self.print_call(e)
        args = [self.value(a) for a in e.args]
        ty = e.ty
        t = self.valtype(ty)
        if name in _UNARY_MATH:
            return b.call(self.intrinsic(f"llvm.{name}.{_suffix(ty)}", t, [t]), args)
        if name == "pow":
            return b.call(self.intrinsic(f"llvm.pow.{_suffix(ty)}", t, [t, t]), args)
        if name in ("min", "max"):
            if ty.is_float:
                op = "minnum" if name == "min" else "maxnum"
            else:
                op = ("s" if ty.signed and not ty.is_bool else "u") + name
            return b.call(self.intrinsic(f"llvm.{op}.{_suffix(ty)}", t, [t, t]), args)
        if name == "abs":
            if ty.is_float:
                return b.call(self.intrinsic(f"llvm.fabs.{_suffix(ty)}", t, [t]), args)
            if not ty.signed:
                return args[0]
            return b.call(self.intrinsic(f"llvm.abs.{_suffix(ty)}", t, [t, I1]), [args[0], const(I1, 0)])
        return self.atomic(e, name, args)
    def atomic(self, e, name, args):
        b = self.cx.fn.builder
        vt = e.args[0].ty.pointee
        ptr = args[0]
        align = sizeof(vt)
        if name == "atomic_load":
            return b.load_atomic(ptr, self.lltype(vt), align)
        if name == "atomic_store":
            b.store_atomic(args[1], ptr, align)
            return None
        if name == "atomic_compare_exchange":
            exp_ptr = args[1]
            desired = args[2]
            expected = b.load(exp_ptr, self.lltype(vt))
            if vt.is_float:
                it = int_type(vt.bits)
                expected, desired = b.cast("bitcast", expected, it), b.cast("bitcast", desired, it)
            pair = b.cmpxchg(ptr, expected, desired)
            old, ok = b.extract_value(pair, 0), b.extract_value(pair, 1)
            if vt.is_float:
                old = b.cast("bitcast", old, self.lltype(vt))
            b.store(old, exp_ptr)
            return ok
        op = name[len("atomic_fetch_"):] if name != "atomic_exchange" else "xchg"
        if vt.is_float:
            op = {"add": "fadd", "sub": "fsub", "min": "fmin", "max": "fmax", "xchg": "xchg"}[op]
        elif op in ("min", "max") and not vt.signed:
            op = "u" + op
        return b.atomic_rmw(op, ptr, args[1])
    def print_call(self, e):
        b = self.cx.fn.builder
        fmt, values = [], []
        for a in e.args:
            if isinstance(a, ast.StrLit):
                fmt.append(a.value.replace("%", "%%"))
                continue
            v = self.value(a)
            t = a.ty
            if t.is_ptr:
                fmt.append("%p")
            elif t.is_float:
                fmt.append("%g")
                if t.bits != 64:
                    v = b.cast("fpext", v, DOUBLE)
            elif t.is_bool:
                fmt.append("%d")
                v = b.cast("zext", v, I32)
            else:
                fmt.append("%lld" if t.signed else "%llu")
                if t.bits < 64:
                    v = b.cast("sext" if t.signed else "zext", v, I64)
            values.append(v)
        printf = self.cx.module.globals.get("printf")
        if printf is None:
            printf = self.cx.module.add(Function("printf", I32, [PTR], var_arg=True))
            printf.attributes.append(render("minisycl-host-only"))
            printf.metadata["minisycl.name"] = self.cx.module.metadata(["print"])
        b.call(printf, [self.cstring(" ".join(fmt) + "\n")] + values, suffix=self.at(e.loc))
        return None
