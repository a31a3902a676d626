"""Function bodies: parameters and locals, constructors' prologues (base
constructor, vtable pointer), and ``if_device``/``if_host`` blocks as
lambda-like functions called through ``sycl-call-if-on-*`` helpers."""
from __future__ import annotations

from .. import ast
from ..ir_attributes import render
from ..ir_writer import PTR, VOID, Builder, Function, struct_type
from ..symbols import FuncSym, LocalSym
from .context import ZERO32, FunctionState, Part, i32
from ...passes.support.ir_contract import CALL_IF_ON_DEVICE, CALL_IF_ON_HOST, SOURCE_NAME


class Functions(Part):
    uses = {"statements": ("block",), "llvm_types": ("lltype", "zero"), "memory": ("member_gep",),
            "globals": ("source_facts",),
            "groups": ("workgroup_variable",)}

    def define_fn(self, f: FuncSym):
        fn = self.fns[f]
        st = self.cx.fn = FunctionState(fn, f)
        b = st.builder
        args = list(fn.args)
        if f.cls is not None:
            this_slot = st.allocas.alloca(PTR, name="this.addr")
            b.store(args.pop(0), this_slot)
            st.locals["this"] = this_slot
            if f.is_ctor:
                self.construct_prologue(f.cls, b.load(this_slot, PTR))
        for (pname, pty), arg in zip(f.params, args):
            slot = st.allocas.alloca(self.lltype(pty), name=f"{pname}.addr" if pname else "")
            b.store(arg, slot)
            if pname is not None:
                st.locals[pname] = slot
        self.block(f.node.body)
        if not b.block.terminated:
            if f.ret.is_void:
                b.ret_void()
            else:
                b.ret(self.zero(f.ret))
        st.finish()
        self.cx.fn = None
    def local_addr(self, sym: LocalSym):
        """Storage of a local; parameters (and ``this``) are found by name the first time."""
        st = self.cx.fn
        addr = st.locals.get(sym)
        if addr is None and sym.workgroup:
            return self.workgroup_variable(sym)
        if addr is None:
            addr = st.locals.get(sym.name if sym.is_param else None)
            if addr is None:
                raise AssertionError(f"no storage for local '{sym.name}'")
            st.locals[sym] = addr
        return addr
    def construct_prologue(self, cls, this):
        """What every constructor of ``cls`` does before its body: default-construct
        the base, then point the vtable pointer at ``cls``'s vtable."""
        b = self.cx.fn.builder
        if cls.base is not None:
            base_ctor = next((c for c in cls.base.ctors if not c.params), None)
            if base_ctor is not None:
                base = b.gep(this, [ZERO32, i32(cls.base_index())], self.lltype(cls))
                b.call(self.fns[base_ctor], [base])
        if cls.polymorphic:
            self.store_vptr(cls, this)
    def store_vptr(self, cls, this):
        slot = self.member_gep(this, cls, cls.vptr_path())
        self.cx.fn.builder.store(self.vtables[cls], slot)
    def default_construct(self, cls, addr):
        ctor = next((c for c in cls.ctors if not c.params), None)
        if ctor is not None:
            self.cx.fn.builder.call(self.fns[ctor], [addr])
        elif cls.polymorphic:
            self.construct_implicit(cls, addr)
    def construct_implicit(self, cls, addr):
        if cls.base is not None and cls.base.ctors:
            self.construct_prologue(cls, addr)
        elif cls.polymorphic:
            self.store_vptr(cls, addr)
    def s_IfDevice(self, s: ast.IfDevice):
        outer = self.cx.fn.sym
        parts = [(s.then, s.then_captures, s.on_device, "if_device" if s.on_device else "if_host")]
        if s.other is not None:
            parts.append((s.other, s.other_captures, not s.on_device, "otherwise"))
        # the helpers speak for the source function in the device-code checks
        facts = {**self.source_facts(outer), SOURCE_NAME: self.cx.module.metadata([outer.display])}
        for block, captures, on_device, kind in parts:
            lam = self.lambda_fn(block, captures, f"{outer.llname}.{kind}.{s.index}")
            lam.metadata.update(facts)
            side = "device" if on_device else "host"
            helper = self.cx.module.add(Function(f"{outer.llname}.call_if_on_{side}.{s.index}", VOID, [PTR]))
            helper.linkage = "internal"
            helper.cconv = "spir_func"
            helper.attributes += ["noinline", render(CALL_IF_ON_DEVICE if on_device else CALL_IF_ON_HOST, "true")]
            helper.metadata.update(facts)
            hb = Builder(helper, helper.append_basic_block("entry"))
            hb.call(lam, [helper.args[0]])
            hb.ret_void()
            closure = self.closure(captures)
            self.cx.fn.builder.call(helper, [closure])
    def closure(self, captures):
        """A struct of pointers to the captured variables (a ``[&]`` lambda object)."""
        st = self.cx.fn
        ty = struct_type([PTR] * max(len(captures), 1))
        slot = st.allocas.alloca(ty, name="closure")
        for i, sym in enumerate(captures):
            p = st.builder.gep(slot, [ZERO32, i32(i)], ty)
            st.builder.store(self.local_addr(sym), p)
        return slot
    def lambda_fn(self, block, captures, name):
        outer = self.cx.fn
        fn = self.cx.module.add(Function(name, VOID, [PTR]))
        fn.linkage = "internal"
        fn.cconv = "spir_func"
        st = self.cx.fn = FunctionState(fn, outer.sym)
        ty = struct_type([PTR] * max(len(captures), 1))
        for i, sym in enumerate(captures):
            p = st.builder.gep(fn.args[0], [ZERO32, i32(i)], ty)
            addr = st.builder.load(p, PTR, name=sym.name + ".ref")
            st.locals[sym] = addr
            if sym.name == "this":
                st.locals["this"] = addr
        self.block(block)
        if not st.builder.block.terminated:
            st.builder.ret_void()
        st.finish()
        self.cx.fn = outer
        return fn
