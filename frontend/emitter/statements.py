"""Statements: blocks, local variables and their initialisers, ``if``, loops,
``break``/``continue``/``return``."""
from __future__ import annotations

from .. import ast
from ..data_layout import flat_fields
from .context import ZERO32, Part, i64


class Statements(Part):
    uses = {"functions": ("default_construct",), "llvm_types": ("lltype", "zero"),
            "memory": ("member_gep", "store", "to_abi"), "expressions": ("value",)}

    def block(self, blk: ast.Block):
        for s in blk.stmts:
            if self.cx.fn.builder.block.terminated:
                # unreachable code after return/break: give it its own block
                self.cx.fn.builder.position_at_end(self.cx.fn.fn.append_basic_block("dead"))
            self.stmt(s)
    def connect(self):
        super().connect()
        self.dispatch = {}      # ast class -> its s_<Node> method, in this part or functions
        for part in (self, self.cx.functions):
            for name in dir(type(part)):
                if name.startswith("s_"):
                    self.dispatch[getattr(ast, name[2:])] = getattr(part, name)

    def stmt(self, s):
        self.dispatch[type(s)](s)
    def s_Block(self, s):
        self.block(s)
    def s_Empty(self, s):
        pass
    def s_ExprStmt(self, s):
        self.value(s.expr)
    def s_VarDecl(self, s):
        st = self.cx.fn
        for dcl in s.decls:
            sym = dcl.sym
            if sym is None:
                continue
            if sym.workgroup:               # work-group memory: a module-level variable (groups.py)
                continue
            slot = st.allocas.alloca(self.lltype(sym.ty), name=sym.name)
            st.locals[sym] = slot
            if dcl.init is not None:
                self.init_into(slot, sym.ty, dcl.init)
            elif sym.ty.is_class:
                st.builder.store(self.zero(sym.ty), slot)
                self.default_construct(sym.ty, slot)
    def init_into(self, addr, ty, init):
        b = self.cx.fn.builder
        if isinstance(init, ast.InitList):
            b.store(self.zero(ty), addr)
            if ty.is_array:
                for i, item in enumerate(init.items):
                    p = b.gep(addr, [ZERO32, i64(i)], self.lltype(ty))
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
    def s_If(self, s):
        b = self.cx.fn.builder
        cond = self.value(s.cond)
        then_bb = self.cx.fn.fn.append_basic_block("if.then")
        end_bb = self.cx.fn.fn.append_basic_block("if.end")
        else_bb = self.cx.fn.fn.append_basic_block("if.else") if s.other is not None else end_bb
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
        st = self.cx.fn
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
        if isinstance(s.init, ast.VarDecl):
            self.stmt(s.init)
        else:
            for e in s.init:
                self.value(e)
        self.loop(s.cond, s.body, s.step)
    def s_Break(self, s):
        self.cx.fn.builder.branch(self.cx.fn.loops[-1][0])
    def s_Continue(self, s):
        self.cx.fn.builder.branch(self.cx.fn.loops[-1][1])
    def s_Return(self, s):
        b = self.cx.fn.builder
        if s.value is None:
            if self.cx.fn.sym.ret.is_void:
                b.ret_void()
            else:
                b.ret(self.zero(self.cx.fn.sym.ret))
            return
        v = self.value(s.value)
        if self.cx.fn.sym.ret.is_void:
            b.ret_void()
        else:
            b.ret(self.to_abi(v, self.cx.fn.sym.ret))
