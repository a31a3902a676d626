"""Addresses and memory: lvalue addresses, member and element pointers,
loads and stores (``half`` through its ``sycl::half`` wrapper), device-global storage."""
from __future__ import annotations

from .. import ast
from ..ir_writer import PTR
from ..symbols import ConstSym, DeviceGlobalSym, LocalSym
from .context import ZERO32, Part, i32


class Memory(Part):
    uses = {"llvm_types": ("lltype", "zero"), "functions": ("local_addr",), "expressions": ("value",),
            "globals": ("constant_addr",)}

    def load(self, addr, ty):
        b = self.cx.fn.builder
        if ty.is_float and ty.bits == 16:
            return b.extract_value(b.load(addr, self.lltype(ty)), 0)
        return b.load(addr, self.lltype(ty))
    def store(self, value, addr, ty):
        self.cx.fn.builder.store(self.to_abi(value, ty), addr)
    def to_abi(self, value, ty):
        if ty.is_float and ty.bits == 16:
            return self.cx.fn.builder.insert_value(self.zero(ty), value, 0)
        return value
    def from_abi(self, value, ty):
        if ty.is_float and ty.bits == 16:
            return self.cx.fn.builder.extract_value(value, 0)
        return value
    def gep(self, ptr, indices, etype):
        return self.cx.fn.builder.gep(ptr, indices, self.lltype(etype))
    def member_gep(self, ptr, cls, path):
        """Address of the member at struct index ``path`` inside the object at ``ptr``."""
        return self.gep(ptr, [ZERO32] + [i32(i) for i in path], cls)
    def addr(self, e):
        """Address of lvalue ``e``."""
        t = type(e)
        if t is ast.Name or t is ast.Scoped:
            sym = e.sym
            if isinstance(sym, LocalSym):
                return self.local_addr(sym)
            if isinstance(sym, ConstSym):
                return self.constant_addr(sym)
            return self.dg_addr(sym)
        if t is ast.Deref:
            return self.value(e.operand)
        if t is ast.Member:
            base = self.value(e.base) if e.arrow else self.addr(e.base)
            cls = e.base.ty.pointee if e.arrow else e.base.ty
            return self.member_gep(base, cls, e.path)
        if t is ast.Index:
            if e.kind == "array":
                return self.gep(self.addr(e.base), [ZERO32, self.value(e.index)], e.base.ty)
            if e.kind == "item":
                return self.gep(self.addr(e.base), [ZERO32, ZERO32, self.value(e.index)], e.base.ty)
            return self.gep(self.value(e.base), [self.value(e.index)], e.ty)
        if t is ast.Call and e.kind == "dg_get":
            return self.dg_addr(e.callee.sym)
        if t is ast.Call or t is ast.Assign or t is ast.Ternary or t is ast.IncDec or t is ast.SpecConstGet:
            # class-valued rvalue used as an object: spill it
            v = self.value(e)
            slot = self.cx.fn.allocas.alloca(self.lltype(e.ty))
            self.cx.fn.builder.store(self.to_abi(v, e.ty), slot)
            return slot
        raise AssertionError(f"not an lvalue: {t.__name__}")
    def dg_addr(self, g: DeviceGlobalSym):
        gv = self.dgs[g]
        b = self.cx.fn.builder
        if g.image_scope:
            return b.gep(gv, [ZERO32, ZERO32], gv.value_type)
        slot = b.gep(gv, [ZERO32, ZERO32], gv.value_type)
        # the runtime sets the storage pointer before any kernel runs; no kernel
        # changes it, so LLVM may hoist this load out of loops
        return b.load(slot, PTR, name=g.name + ".ptr", metadata=", !invariant.load " + self.cx.module.metadata([]))
