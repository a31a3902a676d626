"""Work-groups, sub-groups and reductions in the checker (``docs/language.md``,
"Work-groups, sub-groups and reductions"): the group functions of
``group_ops`` (barriers, algorithms, broadcasts, votes, shuffles), updates of
``reducer<T, op>`` parameters, work-group memory declarations, and ``assert``.

Each call becomes an ``ast.Call`` the emitter's ``groups`` part writes:
``kind`` ``"group"`` (``target``: (function name, operator or None)),
``"reducer"`` (``target``: the operator, ``this_arg``: the reducer) or
``"assert"`` (``target``: the message DPC++ prints).
"""
from __future__ import annotations

from .. import ast, types
from ..group_ops import ARITY, FITS, GROUP_FUNCTIONS, OPERATORS, operator_fits
from ..types import BOOL, INT, UINT, ULONG, VOID
from .context import Part

#: compound assignment -> the reducer operator it applies
COMPOUND = {"+": "plus", "*": "multiplies", "&": "bit_and", "|": "bit_or", "^": "bit_xor"}


class Groups(Part):
    uses = {"expressions": ("expr", "rvalue", "set", "bad", "item_to_long"), "conversions": ("convert", "cond")}

    # ------------------------------------------------------------------ group functions
    def group_call(self, e: ast.Call, name: str):
        """``group_barrier(it)``, ``reduce_over_group(it, x, plus)`` and the rest of ``GROUP_FUNCTIONS``."""
        fn = GROUP_FUNCTIONS[name]
        n = ARITY[fn.kind]
        if len(e.args) != n:
            self.error(e.loc, f"'{name}' expects {n} argument{'s' if n != 1 else ''}, but {len(e.args)} were given")
            return self.bad(e)
        if not self.nd_item_argument(e, name):
            return self.bad(e)
        e.kind = "group"
        if fn.kind == "barrier":
            e.args, e.target = [], (name, None)
            return self.set(e, VOID)
        if fn.kind == "algorithm":
            return self.algorithm(e, name)
        x = self.item_to_long(self.rvalue(self.expr(e.args[1])))
        if x.ty is types.ERROR:
            return self.bad(e)
        e.target = (name, None)
        if fn.kind == "vote":
            e.args = [self.convert(x, BOOL, f"argument 2 of '{name}'")]
            return self.set(e, BOOL)
        if not self.scalar_value(x, name):
            return self.bad(e)
        index = self.item_to_long(self.rvalue(self.expr(e.args[2])))
        what = "linear local id" if name == "group_broadcast" else \
            "lane" if name in ("sub_group_broadcast", "select_from_sub_group") else \
            "mask" if name == "permute_sub_group_by_xor" else "delta"
        e.args = [x, self.convert(index, ULONG if name == "group_broadcast" else UINT, f"{what} of '{name}'")]
        return self.set(e, x.ty)

    def nd_item_argument(self, e, name) -> bool:
        """The first argument must be an ``nd_item``: group functions exist only in
        nd_range kernels (and the functions they pass their ``nd_item`` to)."""
        it = self.expr(e.args[0])
        if it.ty is types.ERROR:
            return False
        if it.ty.is_item and it.ty.kind == "nd_item":
            return True
        fn = self.cx.fn
        if fn is not None and fn.is_kernel and fn.launch != "nd_range":
            kind = "a single_task kernel" if fn.launch == "single_task" else f"a kernel launched over a range ({fn.params[0][1]})"
            self.error(e.loc, f"'{name}' cannot be used in {kind}: only an nd_range kernel (first parameter "
                              f"nd_item<N>) has work-groups and sub-groups")
        else:
            self.error(e.args[0].loc, f"argument 1 of '{name}' must be the kernel's nd_item, not '{it.ty}'")
        return False

    def scalar_value(self, x, name) -> bool:
        if x.ty.is_arith:
            return True
        self.error(x.loc, f"'{name}' needs an integer, floating-point or bool value, not '{x.ty}'")
        return False

    def algorithm(self, e, name):
        """``reduce``/``inclusive_scan``/``exclusive_scan`` ``_over_group``/``_over_sub_group``."""
        x = self.item_to_long(self.rvalue(self.expr(e.args[1])))
        op = self.operator_name(e.args[2])
        if x.ty is types.ERROR or op is None or not self.scalar_value(x, name):
            return self.bad(e)
        if not operator_fits(op, x.ty):
            self.error(e.args[2].loc, f"operator '{op}' of '{name}' needs {_a(FITS[OPERATORS[op][0]])} value, not '{x.ty}'")
            return self.bad(e)
        e.args, e.target = [x], (name, op)
        return self.set(e, x.ty)

    def operator_name(self, arg) -> str | None:
        if isinstance(arg, ast.Name) and arg.name in OPERATORS:
            return arg.name
        self.error(arg.loc, f"expected a group operator ({', '.join(OPERATORS)})")
        return None

    # ------------------------------------------------------------------ reducers
    def reducer_type(self, elem, op: str, spec) -> types.Type | None:
        """``reducer<elem, op>``, or None after an error."""
        if op not in OPERATORS:
            self.error(spec.name_loc or spec.loc, f"unknown reduction operator '{op}' (expected one of: {', '.join(OPERATORS)})")
            return None
        if not (elem.is_int or elem.is_float or elem.is_bool):
            self.error(spec.inner.loc, f"a reducer accumulates an integer, floating-point or bool value, not '{elem}'")
            return None
        if not operator_fits(op, elem):
            self.error(spec.name_loc or spec.loc, f"reducer<{elem}, {op}>: operator '{op}' needs "
                                                  f"{_a(FITS[OPERATORS[op][0]])} type, not '{elem}'")
            return None
        return types.ReducerType(elem, op)

    def reducer_update(self, e, reducer, op: str | None, value, verb: str):
        """``r.combine(x)``, ``r += x`` (``op`` the compound operator's reducer operator)
        and ``r++``: a ``"reducer"`` call."""
        ty = reducer.ty
        if op is not None and op != ty.op:
            self.error(e.loc, f"'{verb}' does not apply the operator of '{ty}'; use combine()"
                              + (f" or '{_compound(ty.op)}='" if _compound(ty.op) else ""))
            return self.bad(e)
        call = ast.Call(e.loc, reducer, [self.convert(value, ty.elem, f"value combined into '{ty}'")])
        call.kind, call.target, call.this_arg = "reducer", ty.op, reducer
        return self.set(call, VOID)

    def combine_call(self, e, base, callee):
        if callee.name != "combine":
            self.error(callee.loc, f"'{base.ty}' has no member function '{callee.name}' (a reducer has combine(x))")
            return self.bad(e)
        if len(e.args) != 1:
            self.error(e.loc, f"combine expects 1 argument, but {len(e.args)} were given")
            return self.bad(e)
        value = self.item_to_long(self.rvalue(self.expr(e.args[0])))
        return self.reducer_update(e, base, None, value, "combine")

    def compound_update(self, e: ast.Assign, target):
        if e.op is None:
            self.error(e.loc, f"a reducer cannot be assigned; combine values into it with combine() "
                              f"or '{_compound(target.ty.op) or '...'}='")
            return self.bad(e)
        value = self.item_to_long(self.rvalue(self.expr(e.value)))
        return self.reducer_update(e, target, COMPOUND.get(e.op, "?"), value, e.op + "=")

    def increment(self, e: ast.IncDec, target):
        ty = target.ty
        if e.op != "++" or ty.op != "plus" or not ty.elem.is_int:
            self.error(e.loc, f"'{e.op}' is only defined for a reducer of an integer type with operator plus, not '{ty}'")
            return self.bad(e)
        one = ast.IntLit(e.loc, 1, "1")
        one.ty, one.lvalue = INT, False
        return self.reducer_update(e, target, "plus", one, "++")

    # ------------------------------------------------------------------ work-group memory, assert
    def workgroup_variable(self, s: ast.VarDecl, dcl: ast.Declarator, ty) -> None:
        """``local T name[N];``: checks, and the declaration recorded for ``device_rules``."""
        if dcl.init is not None:
            self.error(dcl.init.loc, f"work-group memory '{dcl.name}' cannot have an initialiser (it starts uninitialised)")
            dcl.init = None
        if ty.is_class and (ty.polymorphic or ty.ctors):
            self.error(dcl.loc, f"work-group memory '{dcl.name}' cannot hold class '{ty}' with a constructor or virtual methods")
        fn = self.cx.fn
        if fn is not None:
            fn.local_decls.append((dcl.name, dcl.loc))

    def assert_call(self, e: ast.Call):
        if len(e.args) != 1:
            self.error(e.loc, f"'assert' expects 1 argument, but {len(e.args)} were given")
            return self.bad(e)
        e.args = [self.cond(e.args[0])]
        fn = self.cx.fn
        where = fn.display if fn is not None else "<unknown>"
        loc = e.loc
        e.kind = "assert"
        e.target = f"{loc.file}:{loc.line}: {where}: Assertion `{self.source_text(e)}` failed."
        return self.set(e, VOID)

    def source_text(self, e: ast.Call) -> str:
        """The source of ``assert``'s argument: the text between its parentheses."""
        text = self.cx.diags.sources.get(self.file, "")
        lines = text.split("\n")
        loc = e.loc
        rest = "\n".join(lines[loc.line - 1:])[loc.col - 1:]
        start = rest.find("(")
        depth = 0
        for i in range(start, len(rest)):
            depth += {"(": 1, ")": -1}.get(rest[i], 0)
            if depth == 0:
                return " ".join(rest[start + 1:i].split())
        return "?"


def _a(what: str) -> str:
    return ("an " if what[0] in "aeiou" else "a ") + what


def _compound(op: str) -> str | None:
    return next((c for c, o in COMPOUND.items() if o == op), None)
