"""Function bodies and statements: local declarations and their initialisers,
control flow (``break``/``continue``/``return`` where they may go) and
``if_device``/``if_host`` blocks with the outer locals they capture."""
from __future__ import annotations

from .. import ast
from ..data_layout import flat_fields
from ..symbols import FuncSym, LocalSym
from ..types import INT, PointerType
from .context import Part
from .brace_elision import nest
from .flow import completes


class Statements(Part):
    uses = {"expressions": ("expr", "rvalue"), "conversions": ("convert", "convert_braced", "cond"),
            "type_names": ("resolve_type", "is_complete", "note_type_aspects"), "constants": ("fold",), "groups": ("workgroup_variable",)}

    def connect(self):
        super().connect()
        self.scopes = self.cx.scopes
        self._dispatch: dict = {}

    def check_body(self, node: ast.FuncDef, sym: FuncSym):
        cx = self.cx
        cx.fn = sym
        cx.region = None
        body_bound = self.scopes.enter_function()
        cx.this_sym = None
        if sym.cls is not None:
            cx.this_sym = LocalSym("this", PointerType(sym.cls), True, body_bound, True, node.loc)
        for (pname, pty), p in zip(sym.params, node.params if sym.params else []):
            if pname is not None:
                self.scopes.declare(pname, LocalSym(pname, pty, False, body_bound, True, p.loc))
            self.note_type_aspects(pty, p.loc, "parameter of type '{}'")
        self.note_type_aspects(sym.ret, node.loc, "return type '{}'")
        node.body = self.block(node.body, new_scope=False)
        if not sym.ret.is_void and completes(node.body):
            self.error(node.body.end, f"non-void function '{sym.display}' does not return a value in all control paths")
        cx.fn = None

    def block(self, b: ast.Block, new_scope=True):
        if new_scope:
            self.scopes.push()
        b.stmts = [self.stmt(s) for s in b.stmts]
        if new_scope:
            self.scopes.pop()
        return b

    def stmt(self, s):
        method = self._dispatch.get(type(s))
        if method is None:                  # the s_<Node> method, looked up once per node class
            method = self._dispatch[type(s)] = getattr(self, "s_" + type(s).__name__)
        return method(s)

    def s_Block(self, s):
        return self.block(s)

    def s_Empty(self, s):
        return s

    def s_ExprStmt(self, s):
        s.expr = self.expr(s.expr)
        return s

    def s_VarDecl(self, s: ast.VarDecl):
        if s.type.kind == "dg":
            self.error(s.type.loc, "device_global variables must be declared at file scope or as static class members, not as local variables")
            return ast.Empty(s.loc)
        for dcl in s.decls:
            self.local_variable(s, dcl)
        return s

    def local_variable(self, s: ast.VarDecl, dcl: ast.Declarator):
        ty = self.local_type(s, dcl)
        previous = self.scopes.declared_here(dcl.name)
        if previous is not None:
            self.error(dcl.loc, f"redefinition of '{dcl.name}'", [self.note(previous.loc, "previous definition is here")])
        self.note_type_aspects(ty, dcl.loc, "variable of type '{}'")
        workgroup = s.type.local and not s.type.ptr
        if workgroup:
            self.workgroup_variable(s, dcl, ty)
        if dcl.init is not None:
            if isinstance(dcl.init, ast.InitList):
                dcl.init = self.init_list(dcl.init, ty)
            else:
                dcl.init = self.convert(self.rvalue(self.expr(dcl.init)), ty, "initialiser")
        elif s.type.const and not workgroup:
            self.error(dcl.loc, f"const variable '{dcl.name}' needs an initialiser")
        local = LocalSym(dcl.name, ty, s.type.const and not s.type.ptr, self.scopes.boundary, False, dcl.loc,
                         workgroup)
        if local.const and (ty.is_int or ty.is_bool) and isinstance(dcl.init, ast.Expr):
            local.value, why = self.fold(dcl.init)
            if why:
                self.error(dcl.init.loc, f"initialiser of constant '{dcl.name}' is not a constant expression", why)
        dcl.sym = local
        self.scopes.declare(dcl.name, local)

    def local_type(self, s: ast.VarDecl, dcl: ast.Declarator):
        """The declared type of a local (``int`` after an error, to go on checking)."""
        ty = self.resolve_type(s.type, dcl.dims, allow_local=True)
        if dcl.props:
            self.error(dcl.props[0].loc, f"properties are not allowed on local variable '{dcl.name}'")
        if ty is None:
            return INT
        if not self.is_complete(ty, dcl.loc, f"variable '{dcl.name}'"):
            return INT
        if ty.is_item and ty.kind == "nd_item":
            self.error(dcl.loc, "nd_item variables cannot be declared; use the kernel's parameter")
        return ty

    def init_list(self, il: ast.InitList, ty):
        il = nest(il, ty)
        if ty.is_array:
            if len(il.items) > ty.count:
                self.error(il.loc, f"too many initialisers for '{ty}'")
            il.items = [self.init_item(i, ty.elem) for i in il.items[:ty.count]]
        elif ty.is_class:
            flat = flat_fields(ty)
            if ty.polymorphic:
                self.error(il.loc, f"objects of polymorphic class '{ty}' cannot be brace-initialised")
            if len(il.items) > len(flat):
                self.error(il.loc, f"too many initialisers for '{ty}'")
            il.items = [self.init_item(i, fty) for i, (_, fty) in zip(il.items, flat)]
        elif len(il.items) != 1:
            self.error(il.loc, f"brace initialiser for scalar type '{ty}' must have one element")
            il.items = []
        else:
            il.items = [self.convert_braced(self.rvalue(self.expr(il.items[0])), ty, "initialiser")]
        il.ty = ty
        il.lvalue = False
        return il

    def init_item(self, item, ty):
        if isinstance(item, ast.InitList):
            return self.init_list(item, ty)
        return self.convert_braced(self.rvalue(self.expr(item)), ty, "initialiser")

    def s_If(self, s):
        s.cond = self.cond(s.cond)
        s.then = self.scoped_stmt(s.then)
        if s.other is not None:
            s.other = self.scoped_stmt(s.other)
        return s

    def scoped_stmt(self, s):
        self.scopes.push()
        s = self.stmt(s)
        self.scopes.pop()
        return s

    def loop_body(self, body):
        self.scopes.boundary.loops += 1
        body = self.scoped_stmt(body)
        self.scopes.boundary.loops -= 1
        return body

    def s_While(self, s):
        s.cond = self.cond(s.cond)
        s.body = self.loop_body(s.body)
        return s

    def s_DoWhile(self, s):
        s.body = self.loop_body(s.body)
        s.cond = self.cond(s.cond)
        return s

    def s_For(self, s):
        self.scopes.push()
        if isinstance(s.init, ast.VarDecl):
            s.init = self.stmt(s.init)
        else:
            s.init = [self.expr(e) for e in s.init]
        if s.cond is not None:
            s.cond = self.cond(s.cond)
        s.step = [self.expr(e) for e in s.step]
        s.body = self.loop_body(s.body)
        self.scopes.pop()
        return s

    def jump_ok(self, s, word):
        b = self.scopes.boundary
        if b.kind != "function" and (word == "return" or b.loops == 0):
            self.error(s.loc, f"'{word}' cannot leave an {b.kind} block")
            return False
        if word != "return" and b.loops == 0:
            self.error(s.loc, f"'{word}' statement not in a loop")
            return False
        return True

    def s_Break(self, s):
        self.jump_ok(s, "break")
        return s

    def s_Continue(self, s):
        self.jump_ok(s, "continue")
        return s

    def s_Return(self, s):
        ok = self.jump_ok(s, "return")
        fn = self.cx.fn
        ret = fn.ret
        if s.value is not None:
            e = self.rvalue(self.expr(s.value))
            if ret.is_void:
                if ok:
                    self.error(s.value.loc, f"{'kernel' if fn.is_kernel else 'void function'} '{fn.display}' cannot return a value")
            else:
                e = self.convert(e, ret, "return value")
            s.value = e
        elif not ret.is_void and ok:
            self.error(s.loc, f"non-void function '{fn.display}' must return a value")
        return s

    def s_IfDevice(self, s: ast.IfDevice):
        fn = self.cx.fn
        fn.if_count += 1
        s.index = fn.if_count
        first, second = ("device", "host") if s.on_device else ("host", "device")
        s.then, s.then_captures = self.capturing_block(s.then, first, "if_device" if s.on_device else "if_host")
        if s.other is not None:
            s.other, s.other_captures = self.capturing_block(s.other, second, "otherwise")
        return s

    def capturing_block(self, block, region, kind):
        cx = self.cx
        bound = self.scopes.enter_boundary(kind)
        saved = cx.region
        cx.region = region
        self.scopes.push()
        block = self.block(block, new_scope=False)
        self.scopes.pop()
        cx.region = saved
        self.scopes.leave_boundary()
        return block, bound.captures
