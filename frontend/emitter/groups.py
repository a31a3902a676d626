"""Work-groups, sub-groups and reductions in the emitter: work-group memory,
the group functions and sub-group queries as calls to DPC++'s SPIR-V built-ins
(``group_ops``; the IR contract of ``passes/work_item_loops.py``), reducer
updates, and ``assert``.

* ``local T x[N];`` is ``@<function>.x = internal addrspace(3) global T undef``
  (DPC++ hoists work-group memory to module level), used through
  ``ptr addrspace(3)`` values; ``local T*`` is ``ptr addrspace(3)`` too.
* A ``reducer<T, op>`` kernel parameter is a ``ptr`` to an accumulator that
  belongs to the thread running the work-item (the runtime's launcher gives each
  thread its own, initialised to the operator's identity, and combines them
  into the ``sycl.reduction``'s memory after the launch: ``runtime/reductions.py``),
  so ``r += x`` is a plain ``load``, the operator, ``store``: no atomic per
  work-item, and LLVM keeps the accumulator in a register.
* ``assert(c)`` calls ``void @__minisycl_assert_fail(ptr message)`` when ``c``
  is false and returns from the function (that work-item stops); the runtime
  provides the function (``runtime/assertions.py``): it records the first
  message, and the launch raises ``errc::runtime`` with it.
"""
from __future__ import annotations

from ...passes.ir.sycl_names import ASSERT_FAIL
from ..data_layout import size_align
from ..group_ops import BARRIER_SEMANTICS, GROUP_FUNCTIONS, SUB_GROUP_QUERIES, WORKGROUP, group_builtin, mangle, type_code
from ..ir_writer import I1, I32, I64, PTR, VOID, Function, GlobalVariable, Value
from .context import Part, i32
from ...passes.support.ir_contract import SRCLOC

#: reducer operator -> (integer instruction, float instruction or intrinsic)
_COMBINE = {"plus": ("add", "fadd"), "multiplies": ("mul", "fmul"), "bit_and": ("and", None),
            "bit_or": ("or", None), "bit_xor": ("xor", None), "logical_and": ("and", None),
            "logical_or": ("or", None)}


class Groups(Part):
    uses = {"llvm_types": ("lltype", "valtype", "zero"), "memory": ("load", "store"), "expressions": ("value",),
            "globals": ("cstring", "intrinsic", "loc_md")}

    # ------------------------------------------------------------------ work-group memory
    def workgroup_variable(self, sym) -> Value:
        """The module-level variable of work-group memory ``sym`` (made on first use)."""
        gv = self.cx.workgroup.get(sym)
        if gv is None:
            fn = self.cx.fn.sym
            name = f"{fn.llname}.{sym.name}"
            n = 1
            while name in self.cx.module.globals:
                n += 1
                name = f"{fn.llname}.{sym.name}.{n}"
            gv = self.cx.module.add(GlobalVariable(name, self.lltype(sym.ty), addrspace=3))
            gv.linkage = "internal"
            gv.initializer = Value(gv.value_type, "undef")
            gv.align = max(size_align(sym.ty)[1], 4)
            if sym.loc is not None:         # where check-device-code points when a kernel cannot have it
                gv.metadata[SRCLOC] = self.loc_md(sym.loc)
            self.cx.workgroup[sym] = gv
        return gv

    # ------------------------------------------------------------------ built-ins
    def spirv(self, name: str, codes: str, ret, params) -> Function:
        """The declaration of SPIR-V built-in ``name`` (mangled with ``codes``)."""
        mangled = mangle(name, codes)
        fn = self.intrinsics.get(mangled)
        if fn is None:
            fn = self.intrinsics[mangled] = self.cx.module.add(Function(mangled, ret, params))
            fn.cconv = "spir_func"
            fn.attributes.append("convergent")
        return fn

    def sub_group_query(self, name: str) -> Value:
        builtin = SUB_GROUP_QUERIES[name]
        return self.cx.fn.builder.call(self.spirv(builtin, "", I32, []), [])

    def e_group(self, e):
        """A call of ``GROUP_FUNCTIONS`` (the checker's ``"group"`` calls)."""
        name, op = e.target
        fn = GROUP_FUNCTIONS[name]
        b = self.cx.fn.builder
        scope = i32(fn.scope)
        if fn.kind == "barrier":
            barrier = self.spirv("__spirv_ControlBarrier", "jjj", VOID, [I32, I32, I32])
            b.call(barrier, [scope, scope, i32(BARRIER_SEMANTICS)])
            return None
        args = [self.value(a) for a in e.args]
        ty = e.args[0].ty
        t = self.valtype(ty)
        code = type_code(ty)
        if fn.kind == "algorithm":
            f = self.spirv(group_builtin(op, ty), "ii" + code, t, [I32, I32, t])
            return b.call(f, [scope, i32(fn.detail), args[0]])
        if fn.kind == "vote":
            f = self.spirv("__spirv_GroupAll" if fn.detail == "all" else "__spirv_GroupAny", "ib", I1, [I32, I1])
            r = b.call(f, [scope, args[0]])
            return b.not_(r) if fn.detail == "none" else r
        if fn.kind == "broadcast":
            index_ty = I64 if fn.scope == WORKGROUP else I32
            f = self.spirv("__spirv_GroupBroadcast", "i" + code + ("m" if fn.scope == WORKGROUP else "j"),
                           t, [I32, t, index_ty])
            return b.call(f, [scope, args[0], args[1]])
        return self.shuffle(fn.detail, t, code, args)

    def shuffle(self, builtin: str, t, code: str, args) -> Value:
        """``select``/``permute`` shuffle one value; ``shift_left``/``right`` are
        DPC++'s two-operand ``ShuffleDown``/``ShuffleUp`` with the value twice."""
        b = self.cx.fn.builder
        x, lane = args
        if builtin.endswith(("DownINTEL", "UpINTEL")):
            f = self.spirv(builtin, code + code + "j", t, [t, t, I32])
            return b.call(f, [x, x, lane])
        f = self.spirv(builtin, code + "j", t, [t, I32])
        return b.call(f, [x, lane])

    # ------------------------------------------------------------------ reducers
    def e_reducer(self, e):
        """``r.combine(x)``: the accumulator at the reducer's pointer, updated in place."""
        ty = e.this_arg.ty.elem
        acc = self.value(e.this_arg)
        x = self.value(e.args[0])
        old = self.load(acc, ty)
        self.store(self.combine(e.target, ty, old, x), acc, ty)
        return None

    def combine(self, op: str, ty, a: Value, c: Value) -> Value:
        b = self.cx.fn.builder
        if op in ("minimum", "maximum"):
            t = self.valtype(ty)
            if ty.is_float:
                intr = ("llvm.minnum." if op == "minimum" else "llvm.maxnum.") + {16: "f16", 32: "f32", 64: "f64"}[ty.bits]
            else:
                intr = f"llvm.{'s' if ty.signed else 'u'}{'min' if op == 'minimum' else 'max'}.i{ty.bits}"
            return b.call(self.intrinsic(intr, t, [t, t]), [a, c])
        ints, floats = _COMBINE[op]
        # ``reassoc``: a reduction's order is unspecified (SYCL 2020 4.9.2), so LLVM
        # may vectorise a run of updates into several partial accumulators
        return b.binop(f"{floats} reassoc" if ty.is_float else ints, a, c)

    # ------------------------------------------------------------------ assert
    def e_assert(self, e):
        """``if (!cond) { __minisycl_assert_fail(message); return; }``"""
        st = self.cx.fn
        b = st.builder
        ok = self.value(e.args[0])
        fail = st.fn.append_basic_block("assert.fail")
        done = st.fn.append_basic_block("assert.end")
        b.cbranch(ok, done, fail)
        b.position_at_end(fail)
        hook = self.cx.module.globals.get(ASSERT_FAIL)
        if hook is None:
            hook = self.cx.module.add(Function(ASSERT_FAIL, VOID, [PTR]))
            hook.attributes.append("cold")
        b.call(hook, [self.cstring(e.target)])
        ret = st.sym.ret
        if st.fn.ret.kind == "void":
            b.ret_void()
        else:
            b.ret(self.zero(ret))
        b.position_at_end(done)
        return None

