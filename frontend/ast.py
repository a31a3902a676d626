"""The abstract syntax tree of the kernel language.

Nodes are built by ``parser.py`` during parsing and annotated in place by
``checker/`` (``ty``, resolved symbols, implicit conversions); ``emitter/``
reads the annotated tree.  Every node carries the ``SourceLoc`` diagnostics
point at.
"""
from __future__ import annotations

from ..passes.support.diagnostics import SourceLoc


class Node:
    __slots__ = ("loc",)


# ---- syntax of types ------------------------------------------------------
class TypeSpec(Node):
    """A type as written; ``checker.type_names.TypeNames.resolve_type`` turns it into a ``types.Type``.
    ``local``: written after ``local`` (work-group memory, or a pointer into it);
    a ``reducer<T, op>`` has kind ``reducer``, ``inner`` T and ``name`` the operator."""
    __slots__ = ("kind", "words", "name", "dims", "inner", "inner_dims", "ptr", "const", "local", "name_loc")

    def __init__(self, loc, kind, words=(), name=None, dims=0, inner=None, inner_dims=(), ptr=0, const=False,
                 name_loc=None):
        self.loc, self.kind, self.words, self.name, self.dims = loc, kind, words, name, dims
        self.inner, self.inner_dims, self.ptr, self.const = inner, inner_dims, ptr, const
        self.local, self.name_loc = False, name_loc


class Prop(Node):
    """One ``[[name(args)]]`` property; args are (kind, value, loc) triples."""
    __slots__ = ("name", "args", "has_parens")

    def __init__(self, loc, name, args, has_parens):
        self.loc, self.name, self.args, self.has_parens = loc, name, args, has_parens


# ---- expressions ----------------------------------------------------------
class Expr(Node):
    __slots__ = ("ty", "lvalue")


class IntLit(Expr):
    __slots__ = ("value", "text")

    def __init__(self, loc, value, text):
        self.loc, self.value, self.text = loc, value, text


class FloatLit(Expr):
    __slots__ = ("value", "suffix", "text")

    def __init__(self, loc, value, suffix, text=""):
        self.loc, self.value, self.suffix, self.text = loc, value, suffix, text


class BoolLit(Expr):
    __slots__ = ("value",)

    def __init__(self, loc, value):
        self.loc, self.value = loc, value


class CharLit(Expr):
    __slots__ = ("value",)

    def __init__(self, loc, value):
        self.loc, self.value = loc, value


class StrLit(Expr):
    __slots__ = ("value",)

    def __init__(self, loc, value):
        self.loc, self.value = loc, value


class NullLit(Expr):
    __slots__ = ()

    def __init__(self, loc):
        self.loc = loc


class This(Expr):
    __slots__ = ("sym",)

    def __init__(self, loc):
        self.loc, self.sym = loc, None


class Name(Expr):
    __slots__ = ("name", "sym")

    def __init__(self, loc, name):
        self.loc, self.name, self.sym = loc, name, None


class Scoped(Expr):
    """``Class::member`` (static device_global members)."""
    __slots__ = ("cls", "name", "sym")

    def __init__(self, loc, cls, name):
        self.loc, self.cls, self.name, self.sym = loc, cls, name, None


class Unary(Expr):
    __slots__ = ("op", "operand")

    def __init__(self, loc, op, operand):
        self.loc, self.op, self.operand = loc, op, operand


class Deref(Expr):
    __slots__ = ("operand",)

    def __init__(self, loc, operand):
        self.loc, self.operand = loc, operand


class AddrOf(Expr):
    __slots__ = ("operand",)

    def __init__(self, loc, operand):
        self.loc, self.operand = loc, operand


class IncDec(Expr):
    __slots__ = ("op", "operand", "prefix")

    def __init__(self, loc, op, operand, prefix):
        self.loc, self.op, self.operand, self.prefix = loc, op, operand, prefix


class Binary(Expr):
    """Arithmetic, bitwise, shift and comparison operators.  ``kind`` is set by the checker:
    'arith', 'cmp', 'ptr_add', 'ptr_sub', 'ptr_diff', 'ptr_cmp'."""
    __slots__ = ("op", "lhs", "rhs", "kind", "operand_ty")

    def __init__(self, loc, op, lhs, rhs):
        self.loc, self.op, self.lhs, self.rhs = loc, op, lhs, rhs
        self.kind = self.operand_ty = None


class Logical(Expr):
    __slots__ = ("op", "lhs", "rhs")

    def __init__(self, loc, op, lhs, rhs):
        self.loc, self.op, self.lhs, self.rhs = loc, op, lhs, rhs


class Assign(Expr):
    """``target = value`` (op None) or compound ``target op= value``.  For compound
    assignments the checker stores the computation as ``binary`` (a Binary on a ``Loaded``
    placeholder) so the emitter evaluates the target address once."""
    __slots__ = ("op", "target", "value", "binary")

    def __init__(self, loc, op, target, value):
        self.loc, self.op, self.target, self.value, self.binary = loc, op, target, value, None


class Loaded(Expr):
    """Placeholder for "the value already loaded from the target" in compound ops."""
    __slots__ = ()

    def __init__(self, loc, ty):
        self.loc, self.ty, self.lvalue = loc, ty, False


class Ternary(Expr):
    __slots__ = ("cond", "then", "other")

    def __init__(self, loc, cond, then, other):
        self.loc, self.cond, self.then, self.other = loc, cond, then, other


class Cast(Expr):
    """Explicit ``(T)x`` or an implicit conversion inserted by the checker (``spec`` None)."""
    __slots__ = ("spec", "operand", "kind")

    def __init__(self, loc, spec, operand, ty=None, kind=None):
        self.loc, self.spec, self.operand, self.ty, self.kind = loc, spec, operand, ty, kind
        self.lvalue = False


class SizeofType(Expr):
    __slots__ = ("spec", "dims", "value")

    def __init__(self, loc, spec, dims):
        self.loc, self.spec, self.dims, self.value = loc, spec, dims, None


class SizeofExpr(Expr):
    __slots__ = ("operand", "value")

    def __init__(self, loc, operand):
        self.loc, self.operand, self.value = loc, operand, None


class New(Expr):
    """Placement ``new (place) T(args)``; ``ctor`` set by the checker (None: value-initialise)."""
    __slots__ = ("place", "cls_name", "args", "cls", "ctor")

    def __init__(self, loc, place, cls_name, args):
        self.loc, self.place, self.cls_name, self.args = loc, place, cls_name, args
        self.cls = self.ctor = None


class Index(Expr):
    __slots__ = ("base", "index", "kind")

    def __init__(self, loc, base, index):
        self.loc, self.base, self.index, self.kind = loc, base, index, None


class Call(Expr):
    """A call.  Sema sets ``kind`` ('func', 'method', 'virtual', 'builtin', 'dg_get',
    'item_query'), ``target`` (a FuncSym or builtin name) and ``this_arg``."""
    __slots__ = ("callee", "args", "kind", "target", "this_arg")

    def __init__(self, loc, callee, args):
        self.loc, self.callee, self.args = loc, callee, args
        self.kind = self.target = self.this_arg = None


class Member(Expr):
    __slots__ = ("base", "name", "arrow", "path")

    def __init__(self, loc, base, name, arrow):
        self.loc, self.base, self.name, self.arrow = loc, base, name, arrow
        self.path = None


class SpecConstGet(Expr):
    """``kh.get_specialization_constant<name>()``: ``handler`` the kernel_handler
    expression, ``name`` the specialization_id (``sym`` once resolved)."""
    __slots__ = ("handler", "name", "name_loc", "sym")

    def __init__(self, loc, handler, name, name_loc):
        self.loc, self.handler, self.name, self.name_loc, self.sym = loc, handler, name, name_loc, None


class InitList(Expr):
    """``{a, b}``; ``paren``: the arguments of a parenthesised initialiser
    ``T x(a, b);`` (C++20: a constructor call, or aggregate initialisation
    that, unlike braces, allows narrowing and elides no braces)."""
    __slots__ = ("items", "paren")

    def __init__(self, loc, items, paren=False):
        self.loc, self.items, self.paren = loc, items, paren


# ---- statements -----------------------------------------------------------
class Stmt(Node):
    __slots__ = ()


class Declarator(Node):
    __slots__ = ("name", "dims", "props", "init", "sym")

    def __init__(self, loc, name, dims, props, init):
        self.loc, self.name, self.dims, self.props, self.init, self.sym = loc, name, dims, props, init, None


class VarDecl(Stmt):
    __slots__ = ("specs", "type", "decls")

    def __init__(self, loc, specs, type_, decls):
        self.loc, self.specs, self.type, self.decls = loc, specs, type_, decls


class Block(Stmt):
    __slots__ = ("stmts", "end")

    def __init__(self, loc, stmts, end):
        self.loc, self.stmts, self.end = loc, stmts, end


class ExprStmt(Stmt):
    __slots__ = ("expr",)

    def __init__(self, loc, expr):
        self.loc, self.expr = loc, expr


class If(Stmt):
    __slots__ = ("cond", "then", "other")

    def __init__(self, loc, cond, then, other):
        self.loc, self.cond, self.then, self.other = loc, cond, then, other


class While(Stmt):
    __slots__ = ("cond", "body")

    def __init__(self, loc, cond, body):
        self.loc, self.cond, self.body = loc, cond, body


class DoWhile(Stmt):
    __slots__ = ("body", "cond")

    def __init__(self, loc, body, cond):
        self.loc, self.body, self.cond = loc, body, cond


class For(Stmt):
    __slots__ = ("init", "cond", "step", "body")

    def __init__(self, loc, init, cond, step, body):
        self.loc, self.init, self.cond, self.step, self.body = loc, init, cond, step, body


class Break(Stmt):
    __slots__ = ()

    def __init__(self, loc):
        self.loc = loc


class Continue(Stmt):
    __slots__ = ()

    def __init__(self, loc):
        self.loc = loc


class Return(Stmt):
    __slots__ = ("value",)

    def __init__(self, loc, value):
        self.loc, self.value = loc, value


class IfDevice(Stmt):
    """``if_device {A} otherwise {B}`` / ``if_host {A} otherwise {B}``.  Sema fills
    ``captures`` (outer locals the blocks use, by reference) for each block."""
    __slots__ = ("on_device", "then", "other", "then_captures", "other_captures", "index")

    def __init__(self, loc, on_device, then, other):
        self.loc, self.on_device, self.then, self.other = loc, on_device, then, other
        self.then_captures = []
        self.other_captures = []
        self.index = 0


class Empty(Stmt):
    __slots__ = ()

    def __init__(self, loc):
        self.loc = loc


# ---- top level ------------------------------------------------------------
class FuncDef(Node):
    __slots__ = ("specs", "ret", "name", "params", "override", "props", "body", "is_kernel",
                 "is_ctor", "cls", "end")

    def __init__(self, loc, specs, ret, name, params, override, props, body,
                 is_kernel=False, is_ctor=False):
        self.loc, self.specs, self.ret, self.name, self.params = loc, specs, ret, name, params
        self.override, self.props, self.body = override, props, body
        self.is_kernel, self.is_ctor, self.cls = is_kernel, is_ctor, None


class Param(Node):
    __slots__ = ("type", "name", "dims")

    def __init__(self, loc, type_, name, dims):
        self.loc, self.type, self.name, self.dims = loc, type_, name, dims


class AccessLabel(Node):
    """``public:`` / ``protected:`` / ``private:`` inside a class body."""
    __slots__ = ("word",)

    def __init__(self, loc, word):
        self.loc, self.word = loc, word


class Destructor(Node):
    """``~Name() {...}`` in a class: parsed so that it can be refused by name."""
    __slots__ = ("name",)

    def __init__(self, loc, name):
        self.loc, self.name = loc, name


class ClassDef(Node):
    __slots__ = ("kind", "name", "base", "members")

    def __init__(self, loc, kind, name, base, members):
        self.loc, self.kind, self.name, self.base, self.members = loc, kind, name, base, members


class Unit(Node):
    """One source file."""
    __slots__ = ("file", "items")

    def __init__(self, file, items):
        self.loc, self.file, self.items = SourceLoc(file, 1, 1), file, items
