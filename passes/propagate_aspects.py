"""propagate-aspects: which optional device features (aspects) each function uses.

Upstream's ``SYCLPropagateAspectsUsage`` semantics
(``../shared/reference/postlink-formats.md`` §3.5), extended for virtual
functions as ``../shared/specs/virtual_functions_design.md`` asks.

Algorithm:
  1. Aspect numbers come from ``!sycl_aspects`` (name → number); without it,
     from the SYCL table in ``frontend/aspects.py``.
  2. Types: ``double`` uses fp64; each struct named in
     ``!sycl_types_that_use_aspects`` uses its aspects (our ``half`` class →
     fp16); a struct, array or vector containing such a type uses them too.
     Pointers are opaque and carry nothing.
  3. A function directly uses the aspects of every type in its signature, its
     instructions, allocas, GEP source types and the value types of the globals
     it names; 64-bit atomics (``i64``/``double`` operands) use atomic64; and
     existing ``!sycl_used_aspects`` (on the function or its instructions),
     ``!sycl_declared_aspects`` and ``"sycl-device-has"`` are kept.
  4. Aspects flow from callees to callers along direct calls, and from every
     function of set S to each function with ``"calls-indirectly"`` naming S.
     Storing a vtable is not a call: a kernel that only constructs objects gets
     nothing from their virtual functions.  Strongly connected components are
     merged, so call cycles are handled.
  5. The result is written as a sorted ``!sycl_used_aspects !{i32 ...}`` on
     every function that uses any aspect (``exclude-aspects`` removes some).
  6. With ``validate``, a function whose used aspects are not all in its
     declared list gets a warning with the call chain to the first user.

Tests: ``tests/lit/passes/propagate-aspects/``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..frontend.aspects import Aspect
from .callgraph import CallGraph, find_path, sccs
from .ir import Module, metadata_attachments, quote_name, tokens, unquote_name
from .ir.lexer import has_word, skip_type, type_refs
from .manager import PassResult
from .srcloc import call_loc, function_loc

USED, DECLARED = "sycl_used_aspects", "sycl_declared_aspects"


def atomic_value_types(body: str) -> list[str]:
    """The value types of the atomic instructions in a body (``atomicrmw``,
    ``cmpxchg``, ``load atomic``, ``store atomic``), read from their tokens."""
    out = []
    for line in body.split("\n"):
        if "atomic" not in line and "cmpxchg" not in line:
            continue
        toks = tokens(line)
        kw = [t[0] for t in toks]
        for i, w in enumerate(kw):
            if w in ("atomicrmw", "cmpxchg"):
                j = kw.index(",", i)            # after the pointer operand
                out.append(line[toks[j + 1][1]:toks[skip_type(toks, j + 1) - 1][2]])
                break
            if w == "atomic" and i > 0 and kw[i - 1] in ("load", "store"):
                j = i + 1 + (kw[i + 1] == "volatile")
                out.append(line[toks[j][1]:toks[skip_type(toks, j) - 1][2]])
                break
    return out


def aspect_table(module: Module) -> dict[str, int]:
    """Aspect name → number, from ``!sycl_aspects`` or the SYCL table."""
    table = {}
    for ops in module.named_metadata_operands("sycl_aspects"):
        if len(ops) == 2 and ops[0].startswith('!"'):
            try:
                table[unquote_name(ops[0][1:])] = int(ops[1].split()[1])
            except (ValueError, IndexError):
                continue
    return table or {a.name: int(a) for a in Aspect}


class TypeAspects:
    """Aspects carried by LLVM types (step 2), read from type tokens: a
    ``double`` inside a name, a label or a string is no type."""

    def __init__(self, module: Module, table: dict[str, int]):
        self.fp64 = table.get("fp64")
        direct: dict[str, set[int]] = {}
        for ops in module.named_metadata_operands("sycl_types_that_use_aspects"):
            if ops and ops[0].startswith('!"'):
                tok = "%" + quote_name(unquote_name(ops[0][1:]))
                direct.setdefault(tok, set()).update(int(o[4:]) for o in ops[1:] if o.startswith("i32 "))
        # structs containing those types (or double), to a fixed point
        by_type = dict(direct)
        if module.types:
            contents = {t: line[len(t) + 3:] for t, line in module.types.items()}
            inner = {t: [u for u in type_refs(body) if u in contents] for t, body in contents.items()}
            changed = True
            while changed:
                changed = False
                for t, body in contents.items():
                    have = by_type.get(t, set())
                    new = set(have)
                    if self.fp64 is not None and has_word(body, "double"):
                        new.add(self.fp64)
                    for u in inner[t]:
                        new |= by_type.get(u, set())
                    if new != have:
                        by_type[t] = new
                        changed = True
        self.by_type = {t: a for t, a in by_type.items() if a}

    def of_text(self, text: str) -> set[int]:
        out = set()
        if self.fp64 is not None and has_word(text, "double"):
            out.add(self.fp64)
        if self.by_type and "%" in text:
            for t in set(type_refs(text)):
                a = self.by_type.get(t)
                if a:
                    out |= a
        return out


def direct_aspects(module: Module, table: dict[str, int], types: TypeAspects
                   ) -> tuple[dict[str, set[int]], list[str]]:
    """Step 3: the aspects each function uses by itself, and the functions that
    declare aspects (``!sycl_declared_aspects`` or ``"sycl-device-has"``)."""
    atomic64 = table.get("atomic64")
    device_has = module.functions_with("sycl-device-has")
    typed_globals = {}
    for name, g in module.globals.items():
        if not g.is_alias:
            aspects = types.of_text(g.value_type)
            if aspects:
                typed_globals[name] = aspects
    out, declaring = {}, []
    for name, fn in module.functions.items():
        md = fn.metadata
        used = set(module.metadata_ints(md[USED])) if USED in md else set()
        if DECLARED in md or name in device_has:
            used |= declared_aspects(module, name, device_has)
            declaring.append(name)
        body = fn.body
        if body is None:
            out[name] = used
            continue
        used |= types.of_text(fn.header)
        used |= types.of_text(body)
        if typed_globals:
            for r in fn.refs():
                if r in typed_globals:
                    used |= typed_globals[r]
        if atomic64 is not None and ("atomic" in body or "cmpxchg" in body) and \
                any(t in ("i64", "double") for t in atomic_value_types(body)):
            used.add(atomic64)
        if "!sycl_used_aspects" in body:
            for line in body.split("\n"):
                ref = metadata_attachments(line).get(USED) if USED in line else None
                if ref is not None:
                    used.update(module.metadata_ints(ref))
        out[name] = used
    return out, declaring


def declared_aspects(module: Module, name: str, device_has: dict | None = None) -> set[int]:
    """``!sycl_declared_aspects`` and ``"sycl-device-has"`` of one function."""
    fn = module.functions[name]
    out = set(module.metadata_ints(fn.metadata.get(DECLARED)))
    has = (device_has if device_has is not None else module.functions_with("sycl-device-has")).get(name)
    if has:
        out |= {int(x) for x in has.split(",") if x.strip().lstrip("-").isdigit()}
    return out


def aspect_graph(module: Module, calls: dict[str, list[str]]) -> dict[str, list[str]]:
    """The call graph ``calls`` plus "calls-indirectly" → every function of the named sets."""
    funcs = module.functions
    calls_sets = module.functions_with("calls-indirectly")
    if not calls_sets:
        return calls
    by_set: dict[str, list[str]] = {}
    for name, s in module.functions_with("indirectly-callable").items():
        if not funcs[name].is_declaration:
            by_set.setdefault(s, []).append(name)
    edges = dict(calls)
    for name, c in calls_sets.items():
        succ = list(calls[name])
        for s in (c or "").split(","):
            succ.extend(by_set.get(s, ()))
        edges[name] = succ
    return edges


def used_aspects(edges: dict[str, list[str]], direct: dict[str, set[int]]) -> dict[str, set[int]]:
    """Step 4: each function's aspects with those of everything it reaches.
    The sets may be shared between functions; they are not to be changed."""
    total: dict[str, set[int]] = {}
    for comp in sccs(edges):
        if len(comp) == 1:
            n = comp[0]
            acc = direct[n]
            for s in edges[n]:
                ts = total.get(s)       # None: n itself (a self-call)
                if ts and not ts <= acc:
                    acc = acc | ts
            total[n] = acc
            continue
        acc = set()
        members = set(comp)
        for n in comp:
            acc |= direct[n]
            for s in edges[n]:
                if s not in members:
                    acc |= total[s]
        for n in comp:
            total[n] = acc
    return total


def propagate_aspects(module: Module, diags=None, exclude: set[str] = frozenset(), validate: bool = True,
                      calls: dict[str, list[str]] | None = None) -> bool:
    """Steps 1-6; returns whether the module changed.  ``calls``: the module's
    call graph, when the caller has it already."""
    table = aspect_table(module)
    names = {v: k for k, v in table.items()}
    direct, declaring = direct_aspects(module, table, TypeAspects(module, table))
    edges = aspect_graph(module, calls if calls is not None else CallGraph.of(module).edges)
    total = used_aspects(edges, direct)
    dropped = {table[a] for a in exclude if a in table}
    changed = False
    for name in module.functions:
        aspects = total[name]
        if not aspects or (dropped and not aspects - dropped):
            continue
        want = [f"i32 {a}" for a in sorted(aspects - dropped)]
        current = module.functions[name].metadata.get(USED)
        if current is not None and module.metadata_operands(current) == want:
            continue
        module.set_function_metadata(name, USED, want)
        changed = True
    if validate and diags is not None:
        _warn_undeclared(module, declaring, edges, direct, total, names, diags)
    return changed


def _warn_undeclared(module, declaring, edges, direct, total, names, diags):
    device_has = module.functions_with("sycl-device-has")
    for name in declaring:
        fn = module.functions[name]
        if fn.is_declaration:
            continue
        declared = declared_aspects(module, name, device_has)
        for a in sorted(total[name] - declared):
            path = find_path(edges, name, lambda n: a in direct[n]) or [name]
            notes = []
            for caller, callee in zip(path, path[1:]):
                notes.append(diags.note(call_loc(module, module.functions[caller], callee),
                                        f"'{caller}' calls '{callee}'" if callee in module.functions[caller].calls()
                                        else f"'{caller}' calls virtual functions of the set of '{callee}'"))
            notes.append(diags.note(function_loc(module, module.functions[path[-1]]),
                                    f"'{path[-1]}' uses aspect '{names.get(a, a)}'"))
            kind = "kernel" if fn.is_kernel else "function"
            diags.warning(function_loc(module, fn),
                          f"{kind} '{name}' uses aspect '{names.get(a, a)}', which is not listed in its device_has "
                          f"property (through {' -> '.join(path)})", notes)


@dataclass
class PropagateAspects:
    """The pass (options: ``exclude-aspects=a,b``, ``validate=false``)."""

    name: ClassVar[str] = "propagate-aspects"
    exclude_aspects: str = ""
    validate: bool = True

    def run(self, module: Module, am) -> PassResult:
        exclude = {a.strip() for a in self.exclude_aspects.split(",") if a.strip()}
        changed = propagate_aspects(module, am.ctx.diagnostics, exclude, self.validate, am.get("callgraph").edges)
        return PassResult.preserving("callgraph") if changed else PassResult.ALL
