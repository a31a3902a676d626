"""Expression values: literals, operators, casts and C's conversions, ``&&``/``||``
and ``?:`` as branches with a phi."""
from __future__ import annotations

from .. import ast
from ..ir_writer import I1, I8, I64, NULL, PTR, const
from ..data_layout import sizeof
from ..symbols import ConstSym
from .context import ZERO32, Part, i64

_FLOAT_OPS = {"+": "fadd", "-": "fsub", "*": "fmul", "/": "fdiv"}
_SIGNED_OPS = {"+": "add", "-": "sub", "*": "mul", "/": "sdiv", "%": "srem", "<<": "shl", ">>": "ashr",
               "&": "and", "|": "or", "^": "xor"}
_UNSIGNED_OPS = dict(_SIGNED_OPS, **{"/": "udiv", "%": "urem", ">>": "lshr"})


class Expressions(Part):
    uses = {"memory": ("addr", "gep", "load", "member_gep", "store"), "globals": ("cstring", "intrinsic"),
            "llvm_types": ("lltype", "scalar_value", "valtype")}

    def connect(self):
        super().connect()
        self.dispatch = {}      # ast class -> its e_<Node> method, in this part or calls
        for part in (self, self.cx.calls):
            for name in dir(type(part)):
                if name.startswith("e_"):
                    self.dispatch[getattr(ast, name[2:])] = getattr(part, name)

    def value(self, e):
        """Value of ``e``; lvalues are loaded (lvalue calls, like ``dg.get()``, load themselves)."""
        if e.lvalue and type(e) is not ast.Call:
            return self.load(self.addr(e), e.ty)
        return self.dispatch[type(e)](e)
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
        return self.cx.fn.builder.load(self.cx.fn.locals["this"], PTR, name="this")
    def e_Name(self, e):
        sym = e.sym
        if isinstance(sym, ConstSym):
            return self.scalar_value(e.ty, sym.value)
        raise AssertionError("rvalue name")
    def e_StrLit(self, e):
        return self.cstring(e.value)
    def e_SizeofType(self, e):
        return i64(e.value)
    e_SizeofExpr = e_SizeofType
    def e_Loaded(self, e):
        return self.cx.loaded
    def e_InitList(self, e):
        raise AssertionError("init list as value")
    def e_Unary(self, e):
        b = self.cx.fn.builder
        v = self.value(e.operand)
        if e.op == "+":
            return v
        if e.op == "-":
            return b.fneg(v) if e.ty.is_float else b.neg(v)
        return b.not_(v)                # `!` on an i1, `~` on an integer: both flip every bit
    def e_AddrOf(self, e):
        return self.addr(e.operand)
    def e_IncDec(self, e):
        b = self.cx.fn.builder
        addr = self.addr(e.operand)
        ty = e.ty
        old = self.load(addr, ty)
        if ty.is_ptr:
            new = b.gep(old, [i64(1 if e.op == "++" else -1)], self.lltype(ty.pointee))
        elif ty.is_float:
            new = b.binop("fadd" if e.op == "++" else "fsub", old, const(self.valtype(ty), 1.0))
        else:
            new = b.binop("add" if e.op == "++" else "sub", old, const(self.lltype(ty), 1))
        self.store(new, addr, ty)
        return new if e.prefix else old
    def e_Binary(self, e):
        b = self.cx.fn.builder
        kind = e.kind
        if kind == "arith" and e.op in "+-" and e.operand_ty.is_float:
            fused = self.contract(e)
            if fused is not None:
                return fused
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
        return b.binop("sdiv", diff, i64(size)) if size != 1 else diff
    def contract(self, e):
        """``a*b + c``, ``c + a*b``, ``a*b - c`` and ``c - a*b`` of one floating-point
        type as ``llvm.fmuladd`` (clang's default ``-ffp-contract=on``): only when the
        product is an operand of this very expression, never through a variable
        (``t = a*b; t + c`` keeps both roundings).  LLVM may then fuse them into one
        FMA instruction where the CPU has one.  None when ``e`` has no such product."""
        def product(x):
            return (type(x) is ast.Binary and x.kind == "arith" and x.op == "*"
                    and x.operand_ty.is_float and x.operand_ty.bits == e.operand_ty.bits)
        b = self.cx.fn.builder
        if product(e.lhs):                  # a*b ± c: operands in source order
            x, y, c = self.value(e.lhs.lhs), self.value(e.lhs.rhs), self.value(e.rhs)
            if e.op == "-":
                c = b.fneg(c)
        elif product(e.rhs):                # c ± a*b
            c, x, y = self.value(e.lhs), self.value(e.rhs.lhs), self.value(e.rhs.rhs)
            if e.op == "-":
                x = b.fneg(x)
        else:
            return None
        t = self.valtype(e.operand_ty)
        suffix = {16: "f16", 32: "f32", 64: "f64"}[e.operand_ty.bits]
        return b.call(self.intrinsic(f"llvm.fmuladd.{suffix}", t, [t, t, t]), [x, y, c])
    def arith(self, op, a, c, t):
        b = self.cx.fn.builder
        if t.is_float:
            return b.binop(_FLOAT_OPS[op], a, c)
        signed = t.signed and not t.is_bool
        return b.binop((_SIGNED_OPS if signed else _UNSIGNED_OPS)[op], a, c)
    def e_Logical(self, e):
        st = self.cx.fn
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
            self.cx.loaded = self.load(addr, e.ty)
            v = self.value(e.binary)
        self.store(v, addr, e.ty)
        return v
    def e_Ternary(self, e):
        st = self.cx.fn
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
        b = self.cx.fn.builder
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
            return NULL if not e.ty.is_ptr else const(self.lltype(e.ty), None)
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
        if kind == "generic":               # work-group memory through a generic pointer
            return b.cast("addrspacecast", v, PTR)
        if kind == "int2ptr":
            return b.cast("inttoptr", v, self.lltype(e.ty))
        if kind == "ptr2int":
            return b.cast("ptrtoint", v, self.lltype(e.ty))
        if kind == "conv":
            return self.convert(v, e.operand.ty, e.ty)
        raise AssertionError(f"cast kind {kind}")
    def nonzero(self, v, src):
        """``v != 0`` as an ``i1`` (C's conversion to bool)."""
        if src.is_float:
            return self.cx.fn.builder.fcmp("!=", v, const(v.type, 0.0), ordered=False)
        return self.cx.fn.builder.icmp("!=", v, const(v.type, None), signed=False)
    def convert(self, v, src, dst):
        b = self.cx.fn.builder
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
