"""LLVM IR emission (as text, ``ir_writer``) from the checked AST: one module, host and device code together.

IR conventions (``../shared/design/architecture.md``, as DPC++ emits them):

* kernels are ``spir_kernel``, other functions ``spir_func``; kernels, SYCL_EXTERNAL
  functions and indirectly-callable methods carry ``"sycl-module-id"``;
* virtual methods with a set carry ``"indirectly-callable"="<set>"``, kernels
  ``"calls-indirectly"``; vtables are Itanium-style ``{ [2+N x ptr] }`` constants
  and virtual calls carry ``"virtual-call"``;
* ``device_has`` becomes ``!sycl_declared_aspects``; every module has ``!sycl_aspects``,
  and ``!sycl_types_that_use_aspects`` when it stores ``half`` (as DPC++'s
  ``sycl::half`` class, so the upstream aspect rule finds fp16);
* device globals are ``{ ptr, T }`` (USM pointer and initial value; the runtime
  fills in the pointer) or ``{ T }`` with ``device_image_scope``, with the
  ``"sycl-*"`` attributes of the device_global design;
* each ``if_device``/``if_host`` block becomes a lambda-like function called
  through a ``noinline`` helper marked ``"sycl-call-if-on-device"`` or
  ``"sycl-call-if-on-host"`` (the single-pass design of ``if_device_design.md``).
"""
from __future__ import annotations

from . import ast as A
from ..device_configs.aspects import Aspect, HALF_CLASS, TYPES_THAT_USE_ASPECTS
from ..passes.support.diagnostics import NestingTooDeep
from .ir_attributes import render
from .ir_writer import (DOUBLE, FLOAT, HALF, I1, I8, I32, I64, NULL, PTR, VOID, Builder, Function,
                      GlobalVariable, Module, Value, array_type, const, const_aggregate, const_bytes,
                      int_type, struct_type)
from .item_queries import item_query
from .data_layout import DATALAYOUT, ND_ITEM_FIELDS, TRIPLE, flat_fields, sizeof
from .symbols import ConstSym, DeviceGlobalSym, FuncSym, LocalSym, Program

ZERO32 = const(I32, 0)


def _i32(v: int) -> Value:
    return const(I32, v)


def _i64(v: int) -> Value:
    return const(I64, v)


class _FnState:
    __slots__ = ("fn", "sym", "builder", "allocas", "locals", "loops", "entry")

    def __init__(self, fn: Function, sym):
        self.fn, self.sym = fn, sym
        # Allocas go in their own entry block (so loops never grow the stack);
        # code starts in the next block, joined by ``finish``.
        self.entry = fn.append_basic_block("entry")
        self.allocas = Builder(fn, self.entry)
        self.builder = Builder(fn, fn.append_basic_block("start"))
        self.locals: dict = {}
        self.loops: list = []

    def finish(self):
        self.allocas.branch(self.fn.blocks[1])


class Emitter:
    def __init__(self, prog: Program, module_id: str):
        self.prog = prog
        self.module_id = module_id
        self.m = Module(module_id, TRIPLE, DATALAYOUT)
        self.types: dict = {}
        self.fns: dict[FuncSym, Function] = {}
        self.vtables: dict = {}
        self.dgs: dict[DeviceGlobalSym, GlobalVariable] = {}
        self.intrinsics: dict = {}
        self.strings: dict = {}
        self.st: _FnState | None = None
        self.loaded = None

    # ------------------------------------------------------------------ types
    def lltype(self, ty):
        """Storage (memory and ABI) type: ``half`` is DPC++'s ``sycl::half`` class."""
        t = self.types.get(ty)
        if t is not None:
            return t
        if ty.is_void:
            t = VOID
        elif ty.is_bool:
            t = I1
        elif ty.is_int:
            t = int_type(ty.bits)
        elif ty.is_float:
            if ty.bits == 16:
                t = self.m.identified_type(HALF_CLASS)
                t.set_body([HALF])
            else:
                t = FLOAT if ty.bits == 32 else DOUBLE
        elif ty.is_ptr:
            t = PTR
        elif ty.is_array:
            t = array_type(self.lltype(ty.elem), ty.count)
        elif ty.is_item:
            t = self.m.identified_type(f"class.sycl::_V1::{ty.kind}.{ty.dims}")
            vec = array_type(I64, ty.dims)
            t.set_body([vec] * (len(ND_ITEM_FIELDS) if ty.kind == "nd_item" else 1))
        elif ty.is_class:
            t = self.m.identified_type(f"{'struct' if ty.keyword == 'struct' else 'class'}.{ty.name}")
            self.types[ty] = t          # before the members: a member may point back
            t.set_body([PTR if kind == "vptr" else self.lltype(payload if kind == "base" else payload[1])
                                for kind, payload in ty.llvm_members()])
            return t
        else:
            raise AssertionError(f"no LLVM type for {ty}")
        self.types[ty] = t
        return t

    def valtype(self, ty):
        """Register (value) type: ``half`` itself."""
        if ty.is_float and ty.bits == 16:
            return HALF
        return self.lltype(ty)

    def zero(self, ty):
        return const(self.lltype(ty), None)

    # ------------------------------------------------------------------ module
    def emit(self) -> Module:
        for g in self.prog.device_globals:
            self.declare_dg(g)
        for f in self.prog.functions:
            self.declare_fn(f)
        for cls in self.prog.classes:
            if cls.polymorphic:
                self.vtable(cls)
        for f in self.prog.functions:
            if f.defined and f.node is not None and f.node.body is not None:
                try:
                    self.define_fn(f)
                except RecursionError:
                    raise NestingTooDeep(f.loc, f.name) from None
        self.module_metadata()
        return self.m

    def module_metadata(self):
        m = self.m
        m.named_metadata["sycl_aspects"] = [m.metadata([a.name, _i32(int(a))]) for a in Aspect]
        if self.prog.uses_half:
            m.named_metadata["sycl_types_that_use_aspects"] = [
                m.metadata([name, _i32(int(a))]) for name, a in TYPES_THAT_USE_ASPECTS.items()]
        used = [gv for g, gv in self.dgs.items() if not g.is_extern]
        if used:
            arr = array_type(PTR, len(used))
            gv = m.add(GlobalVariable("llvm.compiler.used", arr))
            gv.linkage = "appending"
            gv.section = "llvm.metadata"
            gv.initializer = const_aggregate(arr, used)

    def declare_fn(self, f: FuncSym):
        params = [self.lltype(t) for _, t in f.params]
        names = [n for n, _ in f.params]
        if f.cls is not None:
            params.insert(0, PTR)
            names.insert(0, "this")
        fn = self.m.add(Function(f.llname, self.lltype(f.ret), params, arg_names=names))
        fn.cconv = "spir_kernel" if f.is_kernel else "spir_func"
        attrs = fn.attributes
        if f.is_static:
            fn.linkage = "internal"
        elif f.cls is not None and f.defined:
            fn.linkage = "linkonce_odr"
        if f.is_kernel or f.is_external or f.set_name is not None:
            attrs.append(render("sycl-module-id", f.module_id))
        if f.set_name is not None:
            attrs.append(render("indirectly-callable", f.set_name))
        if f.calls_sets:
            attrs.append(render("calls-indirectly", ",".join(f.calls_sets)))
        if f.is_kernel:
            attrs.append(render("minisycl-kernel-signature", ",".join(str(t) for _, t in f.params)))
        if f.is_host:
            attrs.append(render("minisycl-host-only"))
        if f.device_has is not None:
            fn.metadata["sycl_declared_aspects"] = self.m.metadata([_i32(int(a)) for a in sorted(f.device_has)])
        if f.reqd_wg:
            fn.metadata["reqd_work_group_size"] = self.m.metadata([_i32(v) for v in f.reqd_wg])
        if f.defined and f.loc is not None:
            fn.metadata["minisycl.loc"] = self.loc_md(f.loc)
        self.fns[f] = fn
        return fn

    def vtable(self, cls):
        arr = array_type(PTR, len(cls.vslots) + 2)
        ty = struct_type([arr])
        gv = self.m.add(GlobalVariable(f"_ZTV{cls.mangled}", ty))
        gv.constant = True
        gv.linkage = "linkonce_odr"
        gv.unnamed_addr = True
        gv.align = 8
        gv.initializer = const_aggregate(ty, [const_aggregate(arr, [NULL, NULL] + [self.fns[s] for s in cls.vslots])])
        # the address point: past offset-to-top and RTTI, as the Itanium ABI puts it
        self.vtables[cls] = Value(PTR, f"getelementptr inbounds ({ty.text}, ptr {gv.ref}, i32 0, i32 0, i32 2)")

    def declare_dg(self, g: DeviceGlobalSym):
        inner = self.lltype(g.ty)
        ty = struct_type([inner] if g.image_scope else [PTR, inner])
        gv = self.m.add(GlobalVariable(g.llname, ty))
        gv.align = 8
        if g.is_static:
            gv.linkage = "internal"
        if not g.is_extern:
            value = self.const_value(g.ty, g.init)
            gv.initializer = const_aggregate(ty, [value] if g.image_scope else [NULL, value])
        attrs = gv.attributes
        attrs.append(render("sycl-unique-id", g.unique_id))
        attrs.append(render("sycl-device-global-size", str(sizeof(g.ty))))
        if g.image_scope:
            attrs.append(render("sycl-device-image-scope"))
        if g.host_access is not None:
            attrs.append(render("sycl-host-access", str(g.host_access)))
        if g.init_mode is not None:
            attrs.append(render("sycl-init-mode", str(g.init_mode)))
        if g.implement_in_csr is not None:
            attrs.append(render("sycl-implement-in-csr", "true" if g.implement_in_csr else "false"))
        self.dgs[g] = gv

    def const_value(self, ty, value):
        if value is None:
            return self.zero(ty)
        if ty.is_array:
            items = [self.const_value(ty.elem, v) for v in value] + \
                    [self.zero(ty.elem)] * (ty.count - len(value))
            return const_aggregate(self.lltype(ty), items)
        if ty.is_class:
            return self._const_class(ty, list(value))
        return self.scalar_const(ty, value)

    def _const_class(self, cls, values):
        members = []
        for kind, payload in cls.llvm_members():
            if kind == "vptr":
                members.append(NULL)
            elif kind == "base":
                members.append(self._const_class(payload, values))
            else:
                members.append(self.const_value(payload[1], values.pop(0) if values else None))
        return const_aggregate(self.lltype(cls), members)

    def scalar_const(self, ty, value):
        if ty.is_float and ty.bits == 16:
            return const_aggregate(self.lltype(ty), [const(HALF, float(value))])
        if ty.is_float:
            return const(self.lltype(ty), float(value))
        return const(self.lltype(ty), int(value))

    # ------------------------------------------------------------------ functions
    def define_fn(self, f: FuncSym):
        fn = self.fns[f]
        st = self.st = _FnState(fn, f)
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
        self.st = None

    def local_addr(self, sym: LocalSym):
        """Storage of a local; parameters (and ``this``) are found by name the first time."""
        st = self.st
        addr = st.locals.get(sym)
        if addr is None:
            addr = st.locals.get(sym.name if sym.is_param else None)
            if addr is None:
                raise AssertionError(f"no storage for local '{sym.name}'")
            st.locals[sym] = addr
        return addr

    def construct_prologue(self, cls, this):
        """What every constructor of ``cls`` does before its body: default-construct
        the base, then point the vtable pointer at ``cls``'s vtable."""
        b = self.st.builder
        if cls.base is not None:
            base_ctor = next((c for c in cls.base.ctors if not c.params), None)
            if base_ctor is not None:
                base = b.gep(this, [ZERO32, _i32(cls.base_index())], self.lltype(cls))
                b.call(self.fns[base_ctor], [base])
        if cls.polymorphic:
            self.store_vptr(cls, this)

    def store_vptr(self, cls, this):
        slot = self.member_gep(this, cls, cls.vptr_path())
        self.st.builder.store(self.vtables[cls], slot)

    # ------------------------------------------------------------------ statements
    def block(self, blk: A.Block):
        for s in blk.stmts:
            if self.st.builder.block.terminated:
                # unreachable code after return/break: give it its own block
                self.st.builder.position_at_end(self.st.fn.append_basic_block("dead"))
            self.stmt(s)

    def stmt(self, s):
        getattr(self, "s_" + type(s).__name__)(s)

    def s_Block(self, s):
        self.block(s)

    def s_Empty(self, s):
        pass

    def s_ExprStmt(self, s):
        self.value(s.expr)

    def s_VarDecl(self, s):
        st = self.st
        for dcl in s.decls:
            sym = dcl.sym
            if sym is None:
                continue
            slot = st.allocas.alloca(self.lltype(sym.ty), name=sym.name)
            st.locals[sym] = slot
            if dcl.init is not None:
                self.init_into(slot, sym.ty, dcl.init)
            elif sym.ty.is_class:
                st.builder.store(self.zero(sym.ty), slot)
                self.default_construct(sym.ty, slot)

    def init_into(self, addr, ty, init):
        b = self.st.builder
        if isinstance(init, A.InitList):
            b.store(self.zero(ty), addr)
            if ty.is_array:
                for i, item in enumerate(init.items):
                    p = b.gep(addr, [ZERO32, _i64(i)], self.lltype(ty))
                    self.init_into(p, ty.elem, item)
            elif ty.is_class:
                for item, (fname, fty) in zip(init.items, flat_fields(ty)):
                    path, _ = ty.find_field(fname)
                    p = self.member_gep(addr, ty, path)
                    self.init_into(p, fty, item)
            elif init.items:
                self.store(self.value(init.items[0]), addr, ty)
            return
        self.store(self.value(init), addr, ty)

    def default_construct(self, cls, addr):
        ctor = next((c for c in cls.ctors if not c.params), None)
        if ctor is not None:
            self.st.builder.call(self.fns[ctor], [addr])
        elif cls.polymorphic:
            self.construct_implicit(cls, addr)

    def construct_implicit(self, cls, addr):
        if cls.base is not None and cls.base.ctors:
            self.construct_prologue(cls, addr)
        elif cls.polymorphic:
            self.store_vptr(cls, addr)

    def s_If(self, s):
        b = self.st.builder
        cond = self.value(s.cond)
        then_bb = self.st.fn.append_basic_block("if.then")
        end_bb = self.st.fn.append_basic_block("if.end")
        else_bb = self.st.fn.append_basic_block("if.else") if s.other is not None else end_bb
        b.cbranch(cond, then_bb, else_bb)
        b.position_at_end(then_bb)
        self.stmt(s.then)
        if not b.block.terminated:
            b.branch(end_bb)
        if s.other is not None:
            b.position_at_end(else_bb)
            self.stmt(s.other)
            if not b.block.terminated:
                b.branch(end_bb)
        b.position_at_end(end_bb)

    def loop(self, cond, body, step, cond_first=True):
        st = self.st
        b = st.builder
        fn = st.fn
        cond_bb = fn.append_basic_block("loop.cond")
        body_bb = fn.append_basic_block("loop.body")
        step_bb = fn.append_basic_block("loop.step") if step else cond_bb
        end_bb = fn.append_basic_block("loop.end")
        b.branch(cond_bb if cond_first else body_bb)
        b.position_at_end(cond_bb)
        if cond is not None:
            b.cbranch(self.value(cond), body_bb, end_bb)
        else:
            b.branch(body_bb)
        b.position_at_end(body_bb)
        st.loops.append((end_bb, step_bb))
        self.stmt(body)
        st.loops.pop()
        if not b.block.terminated:
            b.branch(step_bb)
        if step:
            b.position_at_end(step_bb)
            for e in step:
                self.value(e)
            b.branch(cond_bb)
        b.position_at_end(end_bb)

    def s_While(self, s):
        self.loop(s.cond, s.body, None)

    def s_DoWhile(self, s):
        self.loop(s.cond, s.body, None, cond_first=False)

    def s_For(self, s):
        if isinstance(s.init, A.VarDecl):
            self.stmt(s.init)
        else:
            for e in s.init:
                self.value(e)
        self.loop(s.cond, s.body, s.step)

    def s_Break(self, s):
        self.st.builder.branch(self.st.loops[-1][0])

    def s_Continue(self, s):
        self.st.builder.branch(self.st.loops[-1][1])

    def s_Return(self, s):
        b = self.st.builder
        if s.value is None:
            if self.st.sym.ret.is_void:
                b.ret_void()
            else:
                b.ret(self.zero(self.st.sym.ret))
            return
        v = self.value(s.value)
        if self.st.sym.ret.is_void:
            b.ret_void()
        else:
            b.ret(self.to_abi(v, self.st.sym.ret))

    def s_IfDevice(self, s: A.IfDevice):
        outer = self.st.sym
        parts = [(s.then, s.then_captures, s.on_device, "if_device" if s.on_device else "if_host")]
        if s.other is not None:
            parts.append((s.other, s.other_captures, not s.on_device, "otherwise"))
        for block, captures, on_device, kind in parts:
            lam = self.lambda_fn(block, captures, f"{outer.llname}.{kind}.{s.index}")
            side = "device" if on_device else "host"
            helper = self.m.add(Function(f"{outer.llname}.call_if_on_{side}.{s.index}", VOID, [PTR]))
            helper.linkage = "internal"
            helper.cconv = "spir_func"
            helper.attributes += ["noinline", render(f"sycl-call-if-on-{side}", "true")]
            hb = Builder(helper, helper.append_basic_block("entry"))
            hb.call(lam, [helper.args[0]])
            hb.ret_void()
            closure = self.closure(captures)
            self.st.builder.call(helper, [closure])

    def closure(self, captures):
        """A struct of pointers to the captured variables (a ``[&]`` lambda object)."""
        st = self.st
        ty = struct_type([PTR] * max(len(captures), 1))
        slot = st.allocas.alloca(ty, name="closure")
        for i, sym in enumerate(captures):
            p = st.builder.gep(slot, [ZERO32, _i32(i)], ty)
            st.builder.store(self.local_addr(sym), p)
        return slot

    def lambda_fn(self, block, captures, name):
        outer = self.st
        fn = self.m.add(Function(name, VOID, [PTR]))
        fn.linkage = "internal"
        fn.cconv = "spir_func"
        st = self.st = _FnState(fn, outer.sym)
        ty = struct_type([PTR] * max(len(captures), 1))
        for i, sym in enumerate(captures):
            p = st.builder.gep(fn.args[0], [ZERO32, _i32(i)], ty)
            addr = st.builder.load(p, PTR, name=sym.name + ".ref")
            st.locals[sym] = addr
            if sym.name == "this":
                st.locals["this"] = addr
        self.block(block)
        if not st.builder.block.terminated:
            st.builder.ret_void()
        st.finish()
        self.st = outer
        return fn

    # ------------------------------------------------------------------ memory
    def load(self, addr, ty):
        b = self.st.builder
        if ty.is_float and ty.bits == 16:
            return b.extract_value(b.load(addr, self.lltype(ty)), 0)
        return b.load(addr, self.lltype(ty))

    def store(self, value, addr, ty):
        self.st.builder.store(self.to_abi(value, ty), addr)

    def to_abi(self, value, ty):
        if ty.is_float and ty.bits == 16:
            return self.st.builder.insert_value(self.zero(ty), value, 0)
        return value

    def from_abi(self, value, ty):
        if ty.is_float and ty.bits == 16:
            return self.st.builder.extract_value(value, 0)
        return value

    def gep(self, ptr, indices, etype):
        return self.st.builder.gep(ptr, indices, self.lltype(etype))

    def member_gep(self, ptr, cls, path):
        """Address of the member at struct index ``path`` inside the object at ``ptr``."""
        return self.gep(ptr, [ZERO32] + [_i32(i) for i in path], cls)

    def addr(self, e):
        """Address of lvalue ``e``."""
        t = type(e)
        if t is A.Name or t is A.Scoped:
            sym = e.sym
            if isinstance(sym, LocalSym):
                return self.local_addr(sym)
            return self.dg_addr(sym)
        if t is A.Deref:
            return self.value(e.operand)
        if t is A.Member:
            base = self.value(e.base) if e.arrow else self.addr(e.base)
            cls = e.base.ty.pointee if e.arrow else e.base.ty
            return self.member_gep(base, cls, e.path)
        if t is A.Index:
            if e.kind == "array":
                return self.gep(self.addr(e.base), [ZERO32, self.value(e.index)], e.base.ty)
            if e.kind == "item":
                return self.gep(self.addr(e.base), [ZERO32, ZERO32, self.value(e.index)], e.base.ty)
            return self.gep(self.value(e.base), [self.value(e.index)], e.ty)
        if t is A.Call and e.kind == "dg_get":
            return self.dg_addr(e.callee.sym)
        if t is A.Call or t is A.Assign or t is A.Ternary or t is A.IncDec:
            # class-valued rvalue used as an object: spill it
            v = self.value(e)
            slot = self.st.allocas.alloca(self.lltype(e.ty))
            self.st.builder.store(self.to_abi(v, e.ty), slot)
            return slot
        raise AssertionError(f"not an lvalue: {t.__name__}")

    def dg_addr(self, g: DeviceGlobalSym):
        gv = self.dgs[g]
        b = self.st.builder
        if g.image_scope:
            return b.gep(gv, [ZERO32, ZERO32], gv.value_type)
        slot = b.gep(gv, [ZERO32, ZERO32], gv.value_type)
        # the runtime sets the storage pointer before any kernel runs; no kernel
        # changes it, so LLVM may hoist this load out of loops
        return b.load(slot, PTR, name=g.name + ".ptr", metadata=", !invariant.load " + self.m.metadata([]))

    # ------------------------------------------------------------------ expressions
    def value(self, e):
        """Value of ``e``; lvalues are loaded (lvalue calls, like ``dg.get()``, load themselves)."""
        if e.lvalue and type(e) is not A.Call:
            return self.load(self.addr(e), e.ty)
        return getattr(self, "e_" + type(e).__name__)(e)

    def e_IntLit(self, e):
        return const(self.lltype(e.ty), e.value)

    def e_CharLit(self, e):
        return const(I8, e.value)

    def e_BoolLit(self, e):
        return const(I1, e.value)

    def e_FloatLit(self, e):
        return const(self.valtype(e.ty), e.value)

    def e_NullLit(self, e):
        return NULL

    def e_This(self, e):
        return self.st.builder.load(self.st.locals["this"], PTR, name="this")

    def e_Name(self, e):
        sym = e.sym
        if isinstance(sym, ConstSym):
            return self.scalar_value(e.ty, sym.value)
        raise AssertionError("rvalue name")

    def scalar_value(self, ty, v):
        if ty.is_float:
            return const(self.valtype(ty), float(v))
        return const(self.lltype(ty), int(v))

    def e_StrLit(self, e):
        return self.cstring(e.value)

    def cstring(self, text):
        gv = self.strings.get(text)
        if gv is None:
            init = const_bytes(text.encode() + b"\0")
            gv = self.m.add(GlobalVariable(f".str.{len(self.strings)}", init.type))
            gv.constant = True
            gv.linkage = "private"
            gv.unnamed_addr = True
            gv.initializer = init
            self.strings[text] = gv
        return gv

    def e_SizeofType(self, e):
        return _i64(e.value)

    e_SizeofExpr = e_SizeofType

    def e_Loaded(self, e):
        return self.loaded

    def e_InitList(self, e):
        raise AssertionError("init list as value")

    def e_Unary(self, e):
        b = self.st.builder
        v = self.value(e.operand)
        if e.op == "+":
            return v
        if e.op == "-":
            return b.fneg(v) if e.ty.is_float else b.neg(v)
        return b.not_(v)                # `!` on an i1, `~` on an integer: both flip every bit

    def e_AddrOf(self, e):
        return self.addr(e.operand)

    def e_IncDec(self, e):
        b = self.st.builder
        addr = self.addr(e.operand)
        ty = e.ty
        old = self.load(addr, ty)
        if ty.is_ptr:
            new = b.gep(old, [_i64(1 if e.op == "++" else -1)], self.lltype(ty.pointee))
        elif ty.is_float:
            new = b.binop("fadd" if e.op == "++" else "fsub", old, const(self.valtype(ty), 1.0))
        else:
            new = b.binop("add" if e.op == "++" else "sub", old, const(self.lltype(ty), 1))
        self.store(new, addr, ty)
        return new if e.prefix else old

    def e_Binary(self, e):
        b = self.st.builder
        kind = e.kind
        lhs = self.value(e.lhs)
        rhs = self.value(e.rhs)
        if kind == "arith":
            return self.arith(e.op, lhs, rhs, e.operand_ty)
        if kind == "cmp":
            t = e.operand_ty
            if t.is_float:
                return b.fcmp(e.op, lhs, rhs, ordered=e.op != "!=")
            return b.icmp(e.op, lhs, rhs, signed=t.signed and not t.is_bool)
        if kind == "ptr_cmp":
            return b.icmp(e.op, lhs, rhs, signed=False)
        if kind in ("ptr_add", "ptr_sub"):
            if kind == "ptr_sub":
                rhs = b.neg(rhs)
            return b.gep(lhs, [rhs], self.lltype(e.ty.pointee))
        # ptr_diff
        size = max(sizeof(e.lhs.ty.pointee), 1)
        diff = b.binop("sub", b.cast("ptrtoint", lhs, I64), b.cast("ptrtoint", rhs, I64))
        return b.binop("sdiv", diff, _i64(size)) if size != 1 else diff

    def arith(self, op, a, c, t):
        b = self.st.builder
        if t.is_float:
            return b.binop(_FLOAT_OPS[op], a, c)
        signed = t.signed and not t.is_bool
        return b.binop((_SIGNED_OPS if signed else _UNSIGNED_OPS)[op], a, c)

    def e_Logical(self, e):
        st = self.st
        b = st.builder
        lhs = self.value(e.lhs)
        start = b.block
        rhs_bb = st.fn.append_basic_block("logic.rhs")
        end_bb = st.fn.append_basic_block("logic.end")
        if e.op == "&&":
            b.cbranch(lhs, rhs_bb, end_bb)
        else:
            b.cbranch(lhs, end_bb, rhs_bb)
        b.position_at_end(rhs_bb)
        rhs = self.value(e.rhs)
        rhs_end = b.block
        b.branch(end_bb)
        b.position_at_end(end_bb)
        return b.phi(I1, [(const(I1, e.op != "&&"), start), (rhs, rhs_end)])

    def e_Assign(self, e):
        addr = self.addr(e.target)
        if e.op is None:
            v = self.value(e.value)
        else:
            self.loaded = self.load(addr, e.ty)
            v = self.value(e.binary)
        self.store(v, addr, e.ty)
        return v

    def e_Ternary(self, e):
        st = self.st
        b = st.builder
        cond = self.value(e.cond)
        then_bb = st.fn.append_basic_block("cond.then")
        else_bb = st.fn.append_basic_block("cond.else")
        end_bb = st.fn.append_basic_block("cond.end")
        b.cbranch(cond, then_bb, else_bb)
        b.position_at_end(then_bb)
        a = self.value(e.then)
        a_end = b.block
        b.branch(end_bb)
        b.position_at_end(else_bb)
        c = self.value(e.other)
        c_end = b.block
        b.branch(end_bb)
        b.position_at_end(end_bb)
        return b.phi(self.valtype(e.ty), [(a, a_end), (c, c_end)])

    def e_Cast(self, e):
        b = self.st.builder
        kind = e.kind
        if kind == "decay":
            return self.gep(self.addr(e.operand), [ZERO32, ZERO32], e.operand.ty)
        if kind == "item":
            op = e.operand
            if op.lvalue:
                return b.load(self.gep(self.addr(op), [ZERO32, ZERO32, ZERO32], op.ty), I64)
            return b.extract_value(self.value(op), [0, 0])
        if kind == "null":
            self.value(e.operand)
            return NULL
        if kind == "upcast":
            v = self.value(e.operand)
            path = e.operand.ty.pointee.base_path(e.ty.pointee)
            if any(path):
                return self.member_gep(v, e.operand.ty.pointee, path)
            return v
        v = self.value(e.operand)
        if kind in ("noop", "ptr", "void"):
            return v
        if kind == "tobool":
            return self.nonzero(v, e.operand.ty)
        if kind == "int2ptr":
            return b.cast("inttoptr", v, PTR)
        if kind == "ptr2int":
            return b.cast("ptrtoint", v, self.lltype(e.ty))
        if kind == "conv":
            return self.convert(v, e.operand.ty, e.ty)
        raise AssertionError(f"cast kind {kind}")

    def nonzero(self, v, src):
        """``v != 0`` as an ``i1`` (C's conversion to bool)."""
        if src.is_float:
            return self.st.builder.fcmp("!=", v, const(v.type, 0.0), ordered=False)
        return self.st.builder.icmp("!=", v, const(v.type, None), signed=False)

    def convert(self, v, src, dst):
        b = self.st.builder
        if dst.is_bool:
            return self.nonzero(v, src)
        dt = self.valtype(dst)
        if src.is_float and dst.is_float:
            if src.bits == dst.bits:
                return v
            return b.cast("fpext" if dst.bits > src.bits else "fptrunc", v, dt)
        if src.is_float:
            return b.cast("fptosi" if dst.signed else "fptoui", v, dt)
        signed = src.signed and not src.is_bool
        if dst.is_float:
            return b.cast("sitofp" if signed else "uitofp", v, dt)
        if src.bits == dst.bits:
            return v
        if dst.bits < src.bits:
            return b.cast("trunc", v, dt)
        return b.cast("sext" if signed else "zext", v, dt)

    def e_Member(self, e):
        """A field of a class rvalue (``f().x``): the object is spilled to a
        temporary and the field loaded, as clang materialises it."""
        return self.load(self.addr(e), e.ty)

    def e_New(self, e):
        b = self.st.builder
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
        b = self.st.builder
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
                slot = b.gep(vptr, [_i64(cls.vslots.index(f))], PTR)
                fptr = b.load(slot, PTR, name="vfn")
                r = b.call(fptr, [this] + args, ret=self.fns[f].ret, suffix=" " + render("virtual-call") + at)
        return self.from_abi(r, e.ty)

    def loc_md(self, loc) -> str:
        """``!{!"file", i32 line, i32 col}`` (clang's ``!srcloc`` idea), so that IR
        passes can report diagnostics at the source."""
        return self.m.metadata([loc.file, _i32(loc.line), _i32(loc.col)])

    def at(self, loc) -> str:
        """The ``!minisycl.loc`` attachment of an instruction made for ``loc``."""
        return ", !minisycl.loc " + self.loc_md(loc) if loc is not None else ""

    def item_query(self, e):
        """A member function of an ``id``/``range``/``nd_item`` (``item_queries``):
        loads of the item object's vectors."""
        b = self.st.builder
        item = e.this_arg
        ty = item.ty
        addr = self.addr(item)
        query = item_query(ty.kind, e.target)

        def field(idx, d):
            return b.load(self.gep(addr, [ZERO32, _i32(idx), d], ty), I64)

        if query.how == "product":
            total = _i64(1)
            for d in range(ty.dims):
                total = b.binop("mul", total, field(query.fields[0], _i32(d)))
            return total
        if query.how == "linear":
            idx, rng = query.fields
            lin = _i64(0)
            for d in range(ty.dims):
                dd = _i32(d)
                lin = b.binop("add", b.binop("mul", lin, field(rng, dd)), field(idx, dd))
            return lin
        d = self.value(e.args[0])
        if query.how == "ratio":
            return b.binop("udiv", field(query.fields[0], d), field(query.fields[1], d))
        return field(query.fields[0], d)

    def intrinsic(self, name, ret, params):
        fn = self.intrinsics.get(name)
        if fn is None:
            fn = self.intrinsics[name] = self.m.add(Function(name, ret, params))
        return fn

    def builtin(self, e):
        b = self.st.builder
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
        b = self.st.builder
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
        b = self.st.builder
        fmt, values = [], []
        for a in e.args:
            if isinstance(a, A.StrLit):
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
        printf = self.m.globals.get("printf")
        if printf is None:
            printf = self.m.add(Function("printf", I32, [PTR], var_arg=True))
            printf.attributes.append(render("minisycl-host-only"))
        b.call(printf, [self.cstring(" ".join(fmt) + "\n")] + values, suffix=self.at(e.loc))
        return None


_UNARY_MATH = frozenset(("sqrt", "exp", "log", "sin", "cos", "fabs", "floor", "ceil", "exp2", "log2",
                         "log10", "tan", "round", "trunc"))
_FLOAT_OPS = {"+": "fadd", "-": "fsub", "*": "fmul", "/": "fdiv"}
_SIGNED_OPS = {"+": "add", "-": "sub", "*": "mul", "/": "sdiv", "%": "srem", "<<": "shl", ">>": "ashr",
               "&": "and", "|": "or", "^": "xor"}
_UNSIGNED_OPS = dict(_SIGNED_OPS, **{"/": "udiv", "%": "urem", ">>": "lshr"})


def _suffix(ty):
    if ty.is_float:
        return {16: "f16", 32: "f32", 64: "f64"}[ty.bits]
    return f"i{ty.bits}"


def emit(prog: Program, module_id: str) -> Module:
    """The IR module (``ir_writer.Module``; ``str()`` is its text) of one checked translation unit."""
    return Emitter(prog, module_id).emit()


__all__ = ["emit", "Emitter"]
