"""Compile-time evaluation of constructors: the value a ``device_global``'s ``T``
holds before any kernel runs.

sycl_ext_oneapi_device_global, C++20 form: ``device_global``'s constructor is
``consteval`` and forwards its arguments to ``T``'s constructor, so the device
storage starts as the *result* of that constructor, computed by the compiler.
This module is that computation: an interpreter of checked function bodies
(the checker's annotated trees) with C++'s rules for what a constant
expression may not do.  Whatever breaks a rule raises ``NotConstant`` with the
location of the construct and the reason, which the checker reports:

* calling a function without a definition in this file, a kernel, or a
  built-in with an effect or a run-time value (``print``, atomics, math,
  work-item queries, group functions);
* reading a device global or work-group memory, placement ``new``,
  ``if_device``/``if_host`` blocks (which side is not known at compile time);
* undefined behaviour: signed overflow, division by zero, a shift past the
  width, an index or pointer outside its array, a null dereference, falling
  off the end of a function that returns a value;
* more than ``MAX_STEPS`` evaluation steps or ``MAX_DEPTH`` nested calls
  (clang's ``-fconstexpr-steps`` and ``-fconstexpr-depth`` defaults);
* a result holding a non-null pointer (its target would not exist at run time).

Object model: integers are Python ints (``bool`` as 0/1) wrapped to their
type, floating point values are Python floats rounded to their type's
precision after every operation, arrays are lists, class objects are lists in
LLVM member order (``ClassType.llvm_members``) with ``Vptr(cls)`` in the
vtable-pointer slot (so a virtual call dispatches on the object's dynamic
class, as C++20 allows in constant expressions), pointers are ``Ref`` (a
container and a key), null is ``None``.  Construction follows C++: the storage
is zero-initialised first (static storage), then a constructor constructs the
base, then member objects, then sets the vtable pointer, then runs its body.

The result, ``construct(...)``, is the checker's value tree for the type
(``checker.constants``): scalars, lists for arrays, lists of the flat fields
(``data_layout.flat_fields``) for classes; vtable pointers are the emitter's
(the static type's vtable, which is the dynamic type of a complete object).
"""
from __future__ import annotations

from . import ast
from .constants import NotConstant, arith, arith_result, convert_const, convert_value, round_float
from .data_layout import flat_fields
from .symbols import ConstSym, LocalSym

__all__ = ["NotConstant", "construct", "needs_construction", "MAX_STEPS", "MAX_DEPTH"]

#: clang's defaults for -fconstexpr-steps and -fconstexpr-depth
MAX_STEPS = 1_048_576
MAX_DEPTH = 512


class Vptr:
    """The vtable pointer of an object whose dynamic class is ``cls``."""
    __slots__ = ("cls",)

    def __init__(self, cls):
        self.cls = cls


class Ref:
    """A place: ``container[key]`` (a list and an index, or a call frame and a
    name), then the base-class subobject at struct index ``path`` inside it
    (a pointer converted to a base class keeps the object it points into)."""
    __slots__ = ("container", "key", "path")

    def __init__(self, container, key, path=()):
        self.container, self.key, self.path = container, key, path

    def get(self):
        obj = self.container[self.key]
        for i in self.path:
            obj = obj[i]
        return obj

    def set(self, value):
        if not self.path:
            self.container[self.key] = value
            return
        obj = self.container[self.key]
        for i in self.path[:-1]:
            obj = obj[i]
        obj[self.path[-1]] = value

    def __eq__(self, other):
        return isinstance(other, Ref) and other.container is self.container and other.key == self.key \
            and other.path == self.path

    __hash__ = None


_BREAK, _CONTINUE = object(), object()


def needs_construction(ty) -> bool:
    """Whether a default-initialised ``ty`` runs a user constructor somewhere
    (itself, a base, a member, an array element)."""
    while ty.is_array:
        ty = ty.elem
    if not ty.is_class:
        return False
    if ty.ctors or (ty.base is not None and needs_construction(ty.base)):
        return True
    return any(needs_construction(fty) for _, fty in ty.fields)


def construct(ty, ctor, args, loc):
    """The value tree of a ``ty`` zero-initialised and then constructed by
    ``ctor`` with the checked argument expressions ``args`` (``ctor`` None:
    default-initialised).  ``loc``: where the construction is written."""
    ev = _Evaluator()
    holder = [ev.zero(ty)]
    this = Ref(holder, 0)
    if ctor is not None:
        ev.call(ctor, this, [ev.copy(ev.value(a)) for a in args], loc)
    else:
        ev.default_construct(ty, this, loc)
    return ev.tree(ty, holder[0], loc)


class _Evaluator:
    def __init__(self):
        self.steps = 0
        self.depth = 0
        self.frame: dict = {}
        self.loaded = None          # the target's value inside a compound assignment

    # -- objects -----------------------------------------------------------
    def zero(self, ty):
        if ty.is_array:
            return [self.zero(ty.elem) for _ in range(ty.count)]
        if ty.is_class:
            return [None if kind == "vptr" else self.zero(payload if kind == "base" else payload[1])
                    for kind, payload in ty.llvm_members()]
        if ty.is_ptr:
            return None
        return 0.0 if ty.is_float else 0

    def copy(self, v):
        return [self.copy(x) for x in v] if isinstance(v, list) else v

    def default_construct(self, ty, ref, loc):
        """C++ default-initialisation of the (zeroed) object at ``ref``."""
        if ty.is_array:
            arr = ref.get()
            for i in range(ty.count):
                self.default_construct(ty.elem, Ref(arr, i), loc)
            return
        if not ty.is_class:
            return
        ctor = next((c for c in ty.ctors if not c.params), None)
        if ctor is not None:
            self.call(ctor, ref, [], loc)
        elif ty.ctors:
            raise NotConstant(loc, f"'{ty.name}' has no default constructor")
        else:
            self.prologue(ty, ref, loc)

    def prologue(self, cls, ref, loc):
        """What a constructor of ``cls`` does before its body: construct the base
        and the member objects, then point the vtable pointer at ``cls``'s vtable."""
        obj = ref.get()
        for i, (kind, payload) in enumerate(cls.llvm_members()):
            if kind == "base":
                self.default_construct(payload, Ref(obj, i), loc)
            elif kind == "field" and needs_construction(payload[1]):
                self.default_construct(payload[1], Ref(obj, i), loc)
        if cls.polymorphic:
            path = cls.vptr_path()
            target = obj
            for i in path[:-1]:
                target = target[i]
            target[path[-1]] = Vptr(cls)

    def tree(self, ty, v, loc):
        """The checker's value tree of ``v``, a ``ty``."""
        if ty.is_array:
            return [self.tree(ty.elem, x, loc) for x in v]
        if ty.is_class:
            out = []
            for name, fty in flat_fields(ty):
                x = v
                for i in ty.find_field(name)[0]:
                    x = x[i]
                out.append(self.tree(fty, x, loc))
            return out
        if ty.is_ptr:
            if v is not None:
                raise NotConstant(loc, "the result holds a pointer, which has no target before the program runs")
            return None
        return v

    def from_tree(self, ty, v):
        """The object a checker value tree ``v`` of type ``ty`` stands for (``tree``'s inverse)."""
        obj = self.zero(ty)
        if v is None:
            return obj
        if ty.is_array:
            return [self.from_tree(ty.elem, x) for x in v] + obj[len(v):]
        if ty.is_class:
            for (name, fty), x in zip(flat_fields(ty), v):
                path = ty.find_field(name)[0]
                target = obj
                for i in path[:-1]:
                    target = target[i]
                target[path[-1]] = self.from_tree(fty, x)
            return obj
        return v

    # -- calls ---------------------------------------------------------------
    def call(self, f, this, args, loc):
        """``f`` (a ``FuncSym``) called with ``this`` (a ``Ref`` or None) and argument values."""
        node = f.node
        if not f.defined or node is None or node.body is None:
            raise NotConstant(loc, f"'{f.display}' has no definition here, so it cannot be called at compile time")
        if self.depth >= MAX_DEPTH:
            raise NotConstant(loc, f"calls nest deeper than {MAX_DEPTH} (clang's -fconstexpr-depth)")
        outer, outer_loaded = self.frame, self.loaded
        self.frame = {("param", name): value for (name, _), value in zip(f.params, args)}
        self.frame["this"] = this
        self.depth += 1
        try:
            if f.is_ctor:
                self.prologue(f.cls, this, loc)
            done = self.stmt(node.body)
        finally:
            self.depth -= 1
            self.frame, self.loaded = outer, outer_loaded
        if isinstance(done, tuple):
            return done[1]
        if not f.ret.is_void and not f.is_ctor:
            raise NotConstant(node.loc, f"'{f.display}' ends without returning a value")
        return None

    def invoke(self, e):
        f = e.target
        args = [self.copy(self.value(a)) for a in e.args]
        if e.kind == "func":
            return self.call(f, None, args, e.loc)
        this = self.value(e.this_arg)
        if this is None:
            raise NotConstant(e.loc, f"'{f.display}' is called on a null pointer")
        if e.kind == "virtual":
            obj = this.get()
            for i in f.cls.vptr_path():
                obj = obj[i]
            if not isinstance(obj, Vptr):
                raise NotConstant(e.loc, f"virtual call of '{f.display}' on an object that is not constructed")
            # the object ``this`` points into is of the dynamic class; the
            # overrider runs on its subobject of the overrider's class
            dynamic = obj.cls
            f = dynamic.vslots[f.cls.vslots.index(f)]
            this = Ref(this.container, this.key, tuple(dynamic.base_path(f.cls)))
        return self.call(f, this, args, e.loc)

    # -- statements ----------------------------------------------------------
    def tick(self, loc):
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise NotConstant(loc, f"evaluation takes more than {MAX_STEPS} steps (clang's -fconstexpr-steps)")

    def stmt(self, s):
        """None when ``s`` completes, ``_BREAK``/``_CONTINUE``, or ``("return", value)``."""
        self.tick(s.loc)
        handler = getattr(self, "s_" + type(s).__name__, None)
        if handler is None:
            raise NotConstant(s.loc, "this statement cannot be evaluated at compile time")
        return handler(s)

    def s_Block(self, s):
        for x in s.stmts:
            done = self.stmt(x)
            if done is not None:
                return done
        return None

    def s_Empty(self, s):
        return None

    def s_ExprStmt(self, s):
        self.value(s.expr)
        return None

    def s_VarDecl(self, s):
        for dcl in s.decls:
            sym = dcl.sym
            if sym is None:
                continue
            if sym.workgroup:
                raise NotConstant(dcl.loc, "work-group memory does not exist at compile time")
            if dcl.init is None:
                v = self.zero(sym.ty)
                self.frame[sym] = v
                self.default_construct(sym.ty, Ref(self.frame, sym), dcl.loc)
            else:
                self.frame[sym] = self.initial(sym.ty, dcl.init)
        return None

    def initial(self, ty, init):
        """The value of a ``ty`` initialised by ``init`` (an expression or a brace list)."""
        if not isinstance(init, ast.InitList):
            return self.copy(self.value(init))
        v = self.zero(ty)
        if ty.is_array:
            for i, item in enumerate(init.items):
                v[i] = self.initial(ty.elem, item)
        elif ty.is_class:
            for item, (name, fty) in zip(init.items, flat_fields(ty)):
                self.member(Ref([v], 0), ty.find_field(name)[0]).set(self.initial(fty, item))
        elif init.items:
            v = self.copy(self.value(init.items[0]))
        return v

    def s_If(self, s):
        if self.value(s.cond):
            return self.stmt(s.then)
        return self.stmt(s.other) if s.other is not None else None

    def loop(self, cond, body, step, cond_first=True):
        first = True
        while True:
            if (cond_first or not first) and cond is not None and not self.value(cond):
                return None
            first = False
            done = self.stmt(body)
            if done is _BREAK:
                return None
            if isinstance(done, tuple):
                return done
            for e in step or ():
                self.value(e)

    def s_While(self, s):
        return self.loop(s.cond, s.body, None)

    def s_DoWhile(self, s):
        return self.loop(s.cond, s.body, None, cond_first=False)

    def s_For(self, s):
        if isinstance(s.init, ast.VarDecl):
            self.stmt(s.init)
        else:
            for e in s.init or ():
                self.value(e)
        return self.loop(s.cond, s.body, s.step)

    def s_Break(self, s):
        return _BREAK

    def s_Continue(self, s):
        return _CONTINUE

    def s_Return(self, s):
        return ("return", None if s.value is None else self.copy(self.value(s.value)))

    def s_IfDevice(self, s):
        raise NotConstant(s.loc, "an if_device/if_host block cannot be evaluated at compile time "
                                 "(which side runs is not known there)")

    # -- places ----------------------------------------------------------------
    def member(self, ref, path):
        obj = ref.get()
        for i in path[:-1]:
            obj = obj[i]
        return Ref(obj, path[-1]) if path else ref

    def element(self, arr, i, loc, allow_end=False):
        """``arr[i]``; ``allow_end``: one past the last element (a pointer, not a place)."""
        if not isinstance(arr, list) or not isinstance(i, int) or not 0 <= i <= len(arr) - (0 if allow_end else 1):
            n = len(arr) if isinstance(arr, list) else 1
            raise NotConstant(loc, f"index {i} is outside an array of {n} element{'s' if n != 1 else ''}")
        return Ref(arr, i)

    def place(self, e):
        """The ``Ref`` that lvalue ``e`` designates."""
        t = type(e)
        if t is ast.Name or t is ast.Scoped:
            sym = e.sym
            if isinstance(sym, ConstSym):       # a named constant of class or array type: a fresh copy
                if sym.value is None and sym.construct is not None:
                    raise NotConstant(e.loc, f"constant '{sym.name}' has no value (its construction failed)")
                return Ref([self.from_tree(sym.ty, sym.value)], 0)
            if not isinstance(sym, LocalSym):
                raise NotConstant(e.loc, f"device_global '{sym.name}' does not exist at compile time")
            if sym.workgroup:
                raise NotConstant(e.loc, "work-group memory does not exist at compile time")
            key = ("param", sym.name) if sym.is_param else sym
            if key not in self.frame:
                raise NotConstant(e.loc, f"'{sym.name}' is not available at compile time here")
            return Ref(self.frame, key)
        if t is ast.Deref:
            return self.deref(self.value(e.operand), e.loc)
        if t is ast.Member:
            base = self.deref(self.value(e.base), e.loc) if e.arrow else self.place(e.base)
            return self.member(base, e.path)
        if t is ast.Index:
            if e.kind == "array":
                return self.element(self.place(e.base).get(), self.value(e.index), e.loc)
            if e.kind == "item":
                raise NotConstant(e.loc, "work-item indices do not exist at compile time")
            p = self.deref(self.value(e.base), e.loc)
            return self.element(p.container, self.offset(p, e.loc) + self.value(e.index), e.loc)
        if t is ast.Call and e.kind == "dg_get":
            raise NotConstant(e.loc, f"device_global '{e.callee.sym.name}' does not exist at compile time")
        if t in (ast.Call, ast.Assign, ast.Ternary, ast.IncDec):
            return Ref([self.value(e)], 0)          # a class rvalue used as an object
        raise NotConstant(e.loc, "this expression cannot be evaluated at compile time")

    def offset(self, p, loc) -> int:
        """The index ``p`` points at in its array (arithmetic needs an array element)."""
        if p is None:
            raise NotConstant(loc, "arithmetic on a null pointer")
        if p.path or not isinstance(p.container, list):
            raise NotConstant(loc, "pointer arithmetic outside an array")
        return p.key

    def deref(self, p, loc):
        if p is None:
            raise NotConstant(loc, "dereferences a null pointer")
        if isinstance(p.container, list) and isinstance(p.key, int) and p.key >= len(p.container):
            raise NotConstant(loc, "dereferences a pointer past the end of its array")
        return p

    # -- values ----------------------------------------------------------------
    def value(self, e):
        self.tick(e.loc)
        if e.lvalue and type(e) is not ast.Call:
            return self.place(e).get()
        handler = getattr(self, "e_" + type(e).__name__, None)
        if handler is None:
            raise NotConstant(e.loc, "this expression cannot be evaluated at compile time")
        return handler(e)

    def e_IntLit(self, e):
        return e.value

    e_CharLit = e_SizeofType = e_SizeofExpr = e_IntLit

    def e_BoolLit(self, e):
        return int(e.value)

    def e_FloatLit(self, e):
        return round_float(e.value, e.ty)

    def e_NullLit(self, e):
        return None

    def e_This(self, e):
        return self.frame.get("this")

    def e_Name(self, e):
        if isinstance(e.sym, ConstSym) and e.sym.ty.is_arith:
            return e.sym.value
        return self.place(e).get()

    def e_StrLit(self, e):
        raise NotConstant(e.loc, "a string is only a print argument, which cannot run at compile time")

    def e_Loaded(self, e):
        return self.loaded

    def e_Unary(self, e):
        v = self.value(e.operand)
        ty = e.ty
        if e.op == "+":
            return v
        if e.op == "!":
            return int(not v)
        if e.op == "~":
            return convert_const(~int(v), ty)
        return arith_result(-v, ty, e.loc)

    def e_AddrOf(self, e):
        return self.place(e.operand)

    def e_IncDec(self, e):
        ref = self.place(e.operand)
        old = ref.get()
        ty = e.ty
        delta = 1 if e.op == "++" else -1
        if ty.is_ptr:
            new = self.element(old.container, self.offset(old, e.loc) + delta, e.loc, allow_end=True)
        else:
            new = arith_result(old + delta, ty, e.loc)
        ref.set(new)
        return new if e.prefix else old

    def e_Binary(self, e):
        a, b = self.value(e.lhs), self.value(e.rhs)
        kind, op = e.kind, e.op
        if kind == "arith":
            return arith(op, a, b, e.operand_ty, e.loc)
        if kind == "cmp":
            return int({"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b, "==": a == b, "!=": a != b}[op])
        if kind == "ptr_cmp":
            if op in ("==", "!="):
                return int((a == b) if op == "==" else not (a == b))
            if a is None or b is None or a.container is not b.container:
                raise NotConstant(e.loc, "compares pointers into different objects")
            return int({"<": a.key < b.key, ">": a.key > b.key, "<=": a.key <= b.key, ">=": a.key >= b.key}[op])
        if kind in ("ptr_add", "ptr_sub"):
            return self.element(a.container, self.offset(a, e.loc) + (b if kind == "ptr_add" else -b), e.loc,
                                allow_end=True)
        if a is None or b is None or a.container is not b.container:     # ptr_diff
            raise NotConstant(e.loc, "subtracts pointers into different objects")
        return self.offset(a, e.loc) - self.offset(b, e.loc)

    def e_Logical(self, e):
        a = self.value(e.lhs)
        if e.op == "&&":
            return int(bool(a) and bool(self.value(e.rhs)))
        return int(bool(a) or bool(self.value(e.rhs)))

    def e_Assign(self, e):
        ref = self.place(e.target)
        if e.op is None:
            v = self.copy(self.value(e.value))
        else:
            saved, self.loaded = self.loaded, ref.get()
            try:
                v = self.value(e.binary)
            finally:
                self.loaded = saved
        ref.set(v)
        return v

    def e_Ternary(self, e):
        return self.value(e.then if self.value(e.cond) else e.other)

    def e_Cast(self, e):
        kind = e.kind
        if kind == "decay":
            return Ref(self.place(e.operand).get(), 0)
        if kind == "upcast":
            p = self.value(e.operand)
            path = e.operand.ty.pointee.base_path(e.ty.pointee)
            return None if p is None else Ref(p.container, p.key, p.path + tuple(path))
        if kind in ("item", "generic", "int2ptr", "ptr2int"):
            raise NotConstant(e.loc, "this conversion cannot be evaluated at compile time")
        v = self.value(e.operand)
        if kind == "null":
            return None
        if kind == "tobool":
            return int(v is not None and v != 0) if not isinstance(v, Ref) else 1
        if kind == "conv":
            return convert_value(v, e.operand.ty, e.ty, e.loc)
        return v                                # noop, ptr, void

    def e_Call(self, e):
        if e.kind in ("func", "method", "virtual"):
            if e.target.is_kernel:
                raise NotConstant(e.loc, f"kernel '{e.target.name}' cannot be called")
            return self.invoke(e)
        if e.kind == "dg_get":
            return self.place(e).get()
        name = e.target if isinstance(e.target, str) else getattr(e.target, "display", "this function")
        raise NotConstant(e.loc, f"'{name}' cannot be evaluated at compile time")

    def e_Member(self, e):
        return self.place(e).get()

    def e_New(self, e):
        raise NotConstant(e.loc, "placement new is not allowed in a constant expression")
