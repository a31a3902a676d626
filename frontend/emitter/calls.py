"""Calls (direct, method, virtual), placement ``new``, item queries and
built-in functions (math intrinsics, atomics, ``print`` as ``printf``)."""
from __future__ import annotations

from .. import ast
from ..ir_attributes import render
from ..ir_writer import DOUBLE, FLOAT, I1, I32, I64, PTR, VOID, Function, Type, Value, const, int_type
from ..data_layout import flat_fields, size_align, sizeof
from ..item_queries import item_query
from ..math_builtins import INTRINSIC, LIBM
from .context import ZERO32, Part, i32, i64
from ...passes.support.ir_contract import HOST_ONLY, SOURCE_NAME, VIRTUAL_CALL, VIRTUAL_TARGET



def _suffix(ty):
    """The type suffix of an intrinsic's name (``llvm.sqrt.f32``)."""
    if ty.is_float:
        return {16: "f16", 32: "f32", 64: "f64"}[ty.bits]
    return f"i{ty.bits}"


#: Itanium manglings of the arithmetic types (the reads' template argument)
_ITANIUM = {"bool": "b", "char": "c", "uchar": "h", "short": "s", "ushort": "t", "int": "i", "uint": "j",
            "long": "l", "ulong": "m", "half": "DF16_", "float": "f", "double": "d"}


def _itanium(ty) -> str:
    if ty.is_array:
        return f"A{ty.count}_{_itanium(ty.elem)}"
    if ty.is_class:
        return f"{len(ty.name)}{ty.name}"
    return _ITANIUM.get(str(ty), str(ty))


class Calls(Part):
    uses = {"memory": ("addr", "dg_addr", "from_abi", "gep", "load", "member_gep", "store", "to_abi"),
            "globals": ("at", "cstring", "intrinsic"), "functions": ("construct_implicit",),
            "llvm_types": ("lltype", "valtype", "zero"), "expressions": ("value",),
            "groups": ("e_group", "e_reducer", "e_assert", "sub_group_query")}

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
        if kind == "group":
            return self.e_group(e)
        if kind == "reducer":
            return self.e_reducer(e)
        if kind == "assert":
            return self.e_assert(e)
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
                           suffix=f" {self.cx.module.attribute_group([render(VIRTUAL_CALL)])}{at}"
                                  f", !{VIRTUAL_TARGET} {target}")
        return self.from_abi(r, e.ty)
    def e_SpecConstGet(self, e):
        """A read of a specialization constant, as DPC++'s front end emits it
        (``postlink/spec_constants.py`` lowers it): a scalar through
        ``__sycl_getScalar2020SpecConstantValue<T>(name, &id, buffer)``, a struct or
        array through ``__sycl_getComposite2020SpecConstantValue<T>`` into an sret slot."""
        b = self.cx.fn.builder
        s = e.sym
        gv = self.cx.spec_ids[s]
        name = self.cstring(s.unique_id)
        kh = self.value(e.handler)
        tag = _itanium(s.ty)
        if s.ty.is_arith:
            fn = self.intrinsic(f"_Z37__sycl_getScalar2020SpecConstantValueI{tag}ET_PKcPvS3_", self.valtype(s.ty),
                                [PTR, PTR, PTR])
            return b.call(fn, [name, gv, kh])
        lt = self.lltype(s.ty)
        slot = self.cx.fn.allocas.alloca(lt)
        sret = Type(f"ptr sret({lt.text}) align {size_align(s.ty)[1]}", "ptr")
        fn = self.intrinsic(f"_Z40__sycl_getComposite2020SpecConstantValueI{tag}ET_PKcPvS4_", VOID,
                            [sret, PTR, PTR, PTR])
        b.call(fn, [Value(sret, slot.ref), name, gv, kh])
        return b.load(slot, lt)

    def item_query(self, e):
        """A member function of an ``id``/``range``/``nd_item`` (``item_queries``):
        loads of the item object's vectors."""
        b = self.cx.fn.builder
        item = e.this_arg
        ty = item.ty
        addr = self.addr(item)
        query = item_query(ty.kind, e.target)
        if query.how == "sub_group":
            return self.sub_group_query(e.target)

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
        if name in INTRINSIC:
            return b.call(self.intrinsic(f"llvm.{INTRINSIC[name]}.{_suffix(ty)}", t, [t] * len(args)), args)
        if name in LIBM:
            return self.libm(name, ty, args)
        if name == "rsqrt":
            root = b.call(self.intrinsic(f"llvm.sqrt.{_suffix(ty)}", t, [t]), args)
            return b.binop("fdiv", const(t, 1.0), root)
        if name in ("isnan", "isinf"):
            return self.classify(name, e.args[0].ty, args[0])
        if name == "clamp":
            low = self.min_max("max", ty, [args[0], args[1]])
            return self.min_max("min", ty, [low, args[2]])
        if name in ("min", "max"):
            return self.min_max(name, ty, args)
        if name == "abs":
            if ty.is_float:
                return b.call(self.intrinsic(f"llvm.fabs.{_suffix(ty)}", t, [t]), args)
            if not ty.signed:
                return args[0]
            return b.call(self.intrinsic(f"llvm.abs.{_suffix(ty)}", t, [t, I1]), [args[0], const(I1, 0)])
        return self.atomic(e, name, args)
    def min_max(self, name, ty, args):
        t = self.valtype(ty)
        if ty.is_float:
            op = "minnum" if name == "min" else "maxnum"
        else:
            op = ("s" if ty.signed and not ty.is_bool else "u") + name
        return self.cx.fn.builder.call(self.intrinsic(f"llvm.{op}.{_suffix(ty)}", t, [t, t]), args)

    def libm(self, name, ty, args):
        """``cbrt``/``hypot`` through C's math library (``half`` computed in float)."""
        b = self.cx.fn.builder
        t = self.valtype(ty)
        if ty.bits == 16:
            args = [b.cast("fpext", a, FLOAT) for a in args]
        ct = DOUBLE if ty.bits == 64 else FLOAT
        fn = self.cx.module.globals.get(name if ty.bits == 64 else name + "f")
        if fn is None:
            fn = self.cx.module.add(Function(name if ty.bits == 64 else name + "f", ct, [ct] * len(args)))
        r = b.call(fn, args)
        return b.cast("fptrunc", r, t) if ty.bits == 16 else r

    def classify(self, name, ty, x):
        """``isnan``: unordered with itself; ``isinf``: ``|x|`` equals infinity."""
        b = self.cx.fn.builder
        if name == "isnan":
            return b.fcmp("!=", x, x, ordered=False)      # une: only a NaN differs from itself
        t = self.valtype(ty)
        magnitude = b.call(self.intrinsic(f"llvm.fabs.{_suffix(ty)}", t, [t]), [x])
        return b.fcmp("==", magnitude, const(t, float("inf")), ordered=True)

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
            printf.attributes.append(render(HOST_ONLY))
            printf.metadata[SOURCE_NAME] = self.cx.module.metadata(["print"])
        b.call(printf, [self.cstring(" ".join(fmt) + "\n")] + values, suffix=self.at(e.loc))
        return None
