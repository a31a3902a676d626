"""propagate-aspects: which optional device features (aspects) each function uses.

Upstream's ``SYCLPropagateAspectsUsage`` semantics
(``docs/formats.md``, "IR conventions between the stages"), extended for
virtual functions as DPC++'s virtual-functions design (intel/llvm, sycl/doc/design/VirtualFunctions.md) asks.

Algorithm:
  1. Aspect numbers come from ``!sycl_aspects`` (name → number); without it,
     from the SYCL table in ``device_configs/aspects.py``.
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
     nothing from their virtual functions.  The stub that stands in a device
     vtable for a host-only virtual method (``"minisycl-host-only-stub"``,
     ``host_only_virtuals.py``) uses no aspect, whatever its signature.  Strongly connected components are
     merged, so call cycles are handled.
  5. The result is written as ``!sycl_used_aspects !{i32 ...}`` on every
     function that uses any aspect, as upstream builds it: the derived aspects
     less the excluded ones (``exclude-aspects``), then the declared ones
     (propagated the same way; never excluded), then the function's own
     existing ones (also kept).  The order is upstream's ``SmallSet<int, 4>``
     (``AspectSet``): insertion order up to four values, ascending from five;
     a function inserts its own aspects by first use, then its callees' in
     call order, as upstream's depth-first walk from the entry points does
     (``upstream_order``).  The attachment goes where LLVM prints it
     (``AttachmentOrder``: by metadata kind ID).
  6. With ``validate``, a function whose used aspects are not all in its
     declared list gets a warning with the call chain to the first user.
  7. With ``fixed-targets=a,b`` (upstream's
     ``-sycl-propagate-aspects-usage-fixed-targets``), every entry point gets
     ``!sycl_fixed_targets`` with those aspects' numbers, in the order given
     (names ``!sycl_aspects`` does not know are skipped, as upstream does); the
     post-link step writes it as ``fixed_target``.  Upstream attaches an empty
     list when the option is absent; we attach nothing then.
  8. Calls to DPC++'s conditional callers (``if_device_has``,
     ``if_architecture_is``): what their actions use is conditionally used,
     written as ``!sycl_conditionally_used_aspects`` after
     ``!sycl_used_aspects`` (``propagate_aspects_conditional.py``, which
     changes steps 3 and 4 only for modules that have such callers).

Tests: ``tests/lit/passes/propagate-aspects/``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from ..device_configs.aspects import Aspect
from .aspect_set import AspectSet
from .callgraph import CallGraph, find_path, sccs
from .ir import Module, attachment_pairs, metadata_attachments, quote_name, tokens, unquote_name
from .ir.sycl_names import set_display
from .ir.lexer import has_word, skip_type, type_refs, type_ref_matches, word_positions
from .entry_points import entry_points
from .propagate_aspects_conditional import conditional_calls, merged_pairs
from .manager import PassResult
from .srcloc import aspect_use, call_loc, display_chain, display_name, function_loc
from .support.ir_contract import (CALLS_INDIRECTLY, HOST_ONLY_STUB, INDIRECTLY_CALLABLE, SYCL_ASPECTS,
                                  SYCL_CONDITIONALLY_USED_ASPECTS, SYCL_DECLARED_ASPECTS, SYCL_DEVICE_HAS,
                                  SYCL_FIXED_TARGETS, SYCL_TYPES_THAT_USE_ASPECTS, SYCL_USED_ASPECTS)



def atomic_value_types(body: str) -> list[tuple[int, str]]:
    """(position, value type) of the atomic instructions in a body
    (``atomicrmw``, ``cmpxchg``, ``load atomic``, ``store atomic``), read from
    their tokens."""
    out, at = [], 0
    for line in body.split("\n"):
        start, at = at, at + len(line) + 1
        if "atomic" not in line and "cmpxchg" not in line:
            continue
        toks = tokens(line)
        kw = [t[0] for t in toks]
        for i, w in enumerate(kw):
            if w in ("atomicrmw", "cmpxchg"):
                j = kw.index(",", i)            # after the pointer operand
                out.append((start + toks[i][1], line[toks[j + 1][1]:toks[skip_type(toks, j + 1) - 1][2]]))
                break
            if w == "atomic" and i > 0 and kw[i - 1] in ("load", "store"):
                j = i + 1 + (kw[i + 1] == "volatile")
                out.append((start + toks[i][1], line[toks[j][1]:toks[skip_type(toks, j) - 1][2]]))
                break
    return out


def instruction_aspect_refs(body: str) -> list[tuple[int, str]]:
    """(position, ``!N``) of the ``!sycl_used_aspects`` attachments on instructions."""
    out, at = [], 0
    for line in body.split("\n"):
        start, at = at, at + len(line) + 1
        if SYCL_USED_ASPECTS in line:
            ref = metadata_attachments(line).get(SYCL_USED_ASPECTS)
            if ref is not None:
                out.append((start, ref))
    return out


def aspect_table(module: Module) -> dict[str, int]:
    """Aspect name → number, from ``!sycl_aspects`` or the SYCL table."""
    table = {}
    for ops in module.named_metadata_operands(SYCL_ASPECTS):
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
        for ops in module.named_metadata_operands(SYCL_TYPES_THAT_USE_ASPECTS):
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
        # one search for any of their names (as ``any(t in text ...)``, without a generator per text)
        self._named = re.compile("|".join(map(re.escape, self.by_type))).search if self.by_type else None

    def may_use(self, text: str) -> bool:
        """A cheap first look: whether ``text`` may spell a type that carries aspects."""
        return self.fp64 is not None and "double" in text or \
            self._named is not None and "%" in text and self._named(text) is not None

    def of_text(self, text: str) -> set[int]:
        return {a for _, aspects in self.uses_in(text, 0) for a in aspects}

    def uses_in(self, text: str, base: int) -> list[tuple[int, list[int]]]:
        """(position, aspects) of every type token in ``text`` that carries aspects."""
        out = []
        if self.fp64 is not None and "double" in text:
            out.extend((at + base, [self.fp64]) for at in word_positions(text, "double"))
        if self._named is not None and "%" in text and self._named(text) is not None:    # a cheap first look
            by_type = self.by_type
            out.extend((at + base, sorted(by_type[t])) for t, at in type_ref_matches(text) if t in by_type)
        return out


def direct_aspects(module: Module, table: dict[str, int], types: TypeAspects, conditional=None
                   ) -> tuple[dict[str, AspectSet], dict[str, AspectSet]]:
    """Step 3: per function, the aspects it uses by itself and the aspects it
    declares (``!sycl_declared_aspects``, then ``"sycl-device-has"``), each in
    upstream's insertion order: used ones by first use in the function's text
    (signature, then instructions: types, named globals' value types, 64-bit
    atomics, instruction ``!sycl_used_aspects``), then its own
    ``!sycl_used_aspects``.  The aspects of a struct that carries several come
    in ascending order (upstream's order there is hash order).  Functions
    that use (declare) none are absent from the first (second) mapping: most
    functions use none, and nothing is built for them.  ``conditional`` (a
    ``ConditionalCalls``, step 8): the uses in a function's text count as used
    only when it is unconditional, and go to ``conditional.direct`` when it is
    conditional."""
    atomic64 = table.get("atomic64")
    device_has = module.functions_with(SYCL_DEVICE_HAS)
    typed_globals = {}
    for name, g in module.globals.items():
        if not g.is_alias:
            aspects = types.of_text(g.value_type)
            if aspects:
                typed_globals[name] = sorted(aspects)
    used_out, declared_out = {}, {}
    stubs = module.functions_with(HOST_ONLY_STUB)
    for name, fn in module.functions.items():
        md = fn.metadata
        if SYCL_DECLARED_ASPECTS in md or name in device_has:
            declared = AspectSet(module.metadata_ints(md[SYCL_DECLARED_ASPECTS]) if SYCL_DECLARED_ASPECTS in md else ())
            if name in device_has:
                declared.update(declared_aspects(module, name, device_has))
            if declared:
                declared_out[name] = declared
        body = fn.body if name not in stubs else None     # a stub stands for host code: no aspects
        events = None if body is None else _use_events(module, fn, body, types, typed_globals, atomic64)
        if events or SYCL_USED_ASPECTS in md:
            used = AspectSet()
            if events:
                events.sort(key=lambda e: e[0])
                if conditional is None or name in conditional.unconditional:
                    for _, aspects in events:
                        used.update(aspects)
                if conditional is not None and name in conditional.conditional:
                    conditional.direct[name] = AspectSet(a for _, aspects in events for a in aspects)
            if SYCL_USED_ASPECTS in md:
                used.update(module.metadata_ints(md[SYCL_USED_ASPECTS]))
            if used:
                used_out[name] = used
    return used_out, declared_out


def _use_events(module: Module, fn, body: str, types: TypeAspects, typed_globals: dict[str, list[int]],
                atomic64: int | None) -> list[tuple[int, list[int]]]:
    """``direct_aspects``'s uses of aspects in one function's text: (offset in
    its header + body, the aspects used there), in no particular order."""
    header = fn.header
    base = len(header) + 1
    if types.may_use(header) or types.may_use(body):
        events = types.uses_in(header, 0)
        events += types.uses_in(body, base)
    else:
        events = []
    if typed_globals:
        for r in fn.refs():
            if r in typed_globals:
                events.append((body.find("@" + quote_name(r)) + base, typed_globals[r]))
    if atomic64 is not None and ("atomic" in body or "cmpxchg" in body):
        events.extend((at + base, [atomic64]) for at, ty in atomic_value_types(body)
                      if ty in ("i64", "double"))
    if SYCL_USED_ASPECTS in body:
        events.extend((at + base, module.metadata_ints(ref)) for at, ref in instruction_aspect_refs(body))
    return events


def used_aspects(module: Module, names=None) -> list[int]:
    """The aspects recorded on functions (all of ``module``'s, or ``names``):
    the union of their ``!sycl_used_aspects`` and ``!sycl_declared_aspects``,
    sorted, without upstream's internal negative values (project decision
    §8.2).  What this pass wrote, as the post-link step reads it for device
    requirements and for choosing images."""
    refs: set[str] = set()              # (functions share nodes: each read once)
    for name in names if names is not None else module.functions:
        md = module.functions[name].metadata
        if md:
            for kind in (SYCL_USED_ASPECTS, SYCL_DECLARED_ASPECTS):
                if kind in md:
                    refs.add(md[kind])
    out: set[int] = set()
    for ref in refs:
        out.update(v for v in module.metadata_ints(ref) if v >= 0)
    return sorted(out)


def declared_aspects(module: Module, name: str, device_has: dict | None = None) -> set[int]:
    """``!sycl_declared_aspects`` and ``"sycl-device-has"`` of one function."""
    fn = module.functions[name]
    out = set(module.metadata_ints(fn.metadata.get(SYCL_DECLARED_ASPECTS)))
    has = (device_has if device_has is not None else module.functions_with(SYCL_DEVICE_HAS)).get(name)
    if has:
        out |= {int(x) for x in has.split(",") if x.strip().lstrip("-").isdigit()}
    return out


def aspect_graph(module: Module, calls: dict[str, list[str]]) -> dict[str, list[str]]:
    """The call graph ``calls`` plus "calls-indirectly" → every function of the named sets."""
    funcs = module.functions
    calls_sets = module.functions_with(CALLS_INDIRECTLY)
    if not calls_sets:
        return calls
    by_set: dict[str, list[str]] = {}
    for name, s in module.functions_with(INDIRECTLY_CALLABLE).items():
        if not funcs[name].is_declaration:
            by_set.setdefault(s, []).append(name)
    edges = dict(calls)
    for name, c in calls_sets.items():
        succ = list(calls[name])
        for s in (c or "").split(","):
            succ.extend(by_set.get(s, ()))
        edges[name] = succ
    return edges


_NONE = frozenset()


def aspects_through_calls(edges: dict[str, list[str]], direct: dict[str, set[int]],
                          comps: list[list[str]] | None = None) -> dict[str, set[int]]:
    """Step 4: each function's aspects with those of everything it reaches
    (``direct``: a function's own aspects; one it lacks has none; ``comps``:
    ``sccs(edges)``, when the caller has them already).  A function that
    reaches none is absent from the result.  The sets may be shared between
    functions; they are not to be changed."""
    total: dict[str, set[int]] = {}
    if not direct:
        return total            # nothing uses any: nothing reaches one
    get = total.get
    for comp in comps if comps is not None else sccs(edges):
        if len(comp) == 1:
            n = comp[0]
            acc = direct.get(n) or _NONE
            for s in edges[n]:
                ts = get(s)         # None: n itself (a self-call), or nothing reached
                if ts and not ts <= acc:
                    acc = acc | ts
            if acc:
                total[n] = acc
            continue
        acc = set()
        members = set(comp)
        for n in comp:
            acc |= direct.get(n) or _NONE
            for s in edges[n]:
                if s not in members:
                    acc |= get(s) or _NONE
        if acc:
            for n in comp:
                total[n] = acc
    return total


def upstream_order(edges: dict[str, list[str]], own: dict[str, AspectSet], entries: list[str],
                   total: dict[str, set[int]] | None = None) -> dict[str, AspectSet]:
    """The order upstream's depth-first walk gives (``propagateAspectsThroughCG``):
    from each entry point, every callee not yet visited is walked first; a
    function's aspects are its own, then its callees' in call order (each
    callee's already merged).  Only the order is used: the sets come from
    ``aspects_through_calls``, which also gets call cycles right.  ``own``
    and the result leave out functions without aspects.  ``total`` (that
    function's result for ``own``): a function that reaches no aspect is not
    walked into, as nothing it reaches has any (the walk's result is the same)."""
    order = {n: a.copy() for n, a in own.items()}
    visited: set[str] = set()
    walked = (lambda n: True) if total is None else total.__contains__
    for root in entries:
        if not walked(root):
            continue
        stack = [[root, list(dict.fromkeys(edges.get(root, ()))), 0, AspectSet()]]
        while stack:
            frame = stack[-1]
            f, callees, i, local = frame
            if i < len(callees):
                c = callees[i]
                if c not in visited and walked(c):
                    visited.add(c)
                    stack.append([c, list(dict.fromkeys(edges.get(c, ()))), 0, AspectSet()])
                    continue
                mine = order.get(c)
                if mine:
                    local.update(mine)
                frame[2] = i + 1
            else:
                if local:
                    mine = order.get(f)
                    if mine is None:
                        mine = order[f] = AspectSet()
                    mine.update(local)
                stack.pop()
    return order


def _in_order(order: AspectSet | None, members: set[int]) -> list[int]:
    """``members`` in ``order``'s order; those it lacks (call cycles) ascending after."""
    first = [a for a in order if a in members] if order else []
    return first + sorted(members - set(first))


def propagate_aspects(module: Module, diags=None, exclude: set[str] = frozenset(), validate: bool = True,
                      calls: dict[str, list[str]] | None = None, fixed_targets: list[str] = ()) -> bool:
    """Steps 1-7; returns whether the module changed.  ``calls``: the module's
    call graph, when the caller has it already."""
    table = aspect_table(module)
    names = {v: k for k, v in table.items()}
    edges = aspect_graph(module, calls if calls is not None else CallGraph.of(module).edges)
    entries = entry_points(module, virtual_functions="ignore")
    conditional = conditional_calls(module, edges, entries)
    if conditional is not None:
        edges = conditional.unconditional_edges()
    used, declared = direct_aspects(module, table, TypeAspects(module, table), conditional)
    device_has = module.functions_with(SYCL_DEVICE_HAS)
    declaring = [n for n in module.functions if SYCL_DECLARED_ASPECTS in module.functions[n].metadata or n in device_has]
    comps = sccs(edges)
    used_total = aspects_through_calls(edges, {n: set(a) for n, a in used.items()}, comps)
    declared_total = aspects_through_calls(edges, {n: set(a) for n, a in declared.items()}, comps)
    used_order = upstream_order(edges, used, entries, used_total)
    declared_order = upstream_order(edges, declared, entries, declared_total)
    dropped = {table[a] for a in exclude if a in table}
    kinds = AttachmentOrder(module)
    pairs = {}
    if conditional is not None:
        pairs = {n: merged_pairs(module, n, p, dropped) for n, p in conditional.pairs().items()}
    changed = _attach_used(module, kinds, (used_order, used_total), (declared_order, declared_total), dropped, pairs)
    if fixed_targets:
        changed |= _attach_fixed_targets(module, kinds, [f"i32 {table[t]}" for t in fixed_targets if t in table],
                                         entries)
    if validate and diags is not None and declaring:
        direct = {n: set(used.get(n, _NONE)) | set(declared.get(n, _NONE)) for n in used.keys() | declared.keys()}
        total = {n: used_total.get(n, _NONE) | declared_total.get(n, _NONE) for n in declaring}
        _warn_undeclared(module, declaring, edges, direct, total, names, diags)
    return changed


def _attach_used(module: Module, kinds, used, declared, dropped: set[int], pairs=None) -> bool:
    """Step 6: ``!sycl_used_aspects`` of each function that uses or declares an
    aspect, in upstream's order (``used`` and ``declared``: (order, totals)),
    then (step 8) its ``!sycl_conditionally_used_aspects`` (``pairs``: name ->
    the operands, or None); function after function, so that new nodes are
    numbered as LLVM numbers them.  Returns whether any changed."""
    changed = False
    for name in list(module.functions):
        changed |= _attach_used_one(module, kinds, name, used, declared, dropped)
        cond = pairs.get(name) if pairs else None
        if cond is not None:
            current = module.functions[name].metadata.get(SYCL_CONDITIONALLY_USED_ASPECTS)
            if current is None or _operand_tree(module, current) != cond:
                module.set_function_metadata(name, SYCL_CONDITIONALLY_USED_ASPECTS, cond)
                kinds.place(name)
                changed = True
    return changed


def _operand_tree(module: Module, ref: str) -> list:
    """The operands of node ``ref``, a node operand as the list of its own (as
    ``set_function_metadata`` takes them)."""
    return [_operand_tree(module, op) if op.startswith("!") and op[1:].isdigit() else op
            for op in module.metadata_operands(ref)]


def _attach_used_one(module: Module, kinds, name: str, used, declared, dropped: set[int]) -> bool:
    """``_attach_used`` for one function's ``!sycl_used_aspects``."""
    (used_order, used_total), (declared_order, declared_total) = used, declared
    if name not in used_total and name not in declared_total:
        return False
    out = AspectSet(a for a in _in_order(used_order.get(name), used_total.get(name, _NONE)) if a not in dropped)
    out.update(_in_order(declared_order.get(name), declared_total.get(name, _NONE)))
    if not out:
        return False
    current = module.functions[name].metadata.get(SYCL_USED_ASPECTS)
    if current is not None:
        out.update(module.metadata_ints(current))
    want = [f"i32 {a}" for a in out]
    if current is not None and module.metadata_operands(current) == want:
        return False
    module.set_function_metadata(name, SYCL_USED_ASPECTS, want)
    kinds.place(name)
    return True


def _attach_fixed_targets(module: Module, kinds, values: list[str], entries) -> bool:
    """The fixed targets' aspects on every entry point; returns whether any changed."""
    changed = False
    for name in entries:
        current = module.functions[name].metadata.get(SYCL_FIXED_TARGETS)
        if current is None or module.metadata_operands(current) != values:
            module.set_function_metadata(name, SYCL_FIXED_TARGETS, values)
            kinds.place(name)
            changed = True
    return changed


def warn_undeclared_aspects(module: Module, diags, calls: dict[str, list[str]], only=None) -> None:
    """Step 7 alone, without editing the module (the ``check-device-code``
    pass): ``calls`` is the call graph to follow, ``only`` the functions whose
    ``device_has`` lists are checked (all when ``None``)."""
    device_has = module.functions_with(SYCL_DEVICE_HAS)
    declaring = [n for n, f in module.functions.items() if (only is None or n in only)
                 and (SYCL_DECLARED_ASPECTS in f.metadata or n in device_has)]
    if not declaring:
        return
    table = aspect_table(module)
    used, declared = direct_aspects(module, table, TypeAspects(module, table))
    direct = {n: set(used.get(n, _NONE)) | set(declared.get(n, _NONE)) for n in used.keys() | declared.keys()}
    edges = aspect_graph(module, calls)
    _warn_undeclared(module, declaring, edges, direct, aspects_through_calls(edges, direct),
                     {v: k for k, v in table.items()}, diags)


def _warn_undeclared(module, declaring, edges, direct, total, names, diags):
    """Step 7: a warning for each aspect a function with ``device_has`` uses
    (itself, through calls or through the virtual-function sets it calls) that
    the list lacks, with the chain to the use; names, and the use's place and
    reason, are the source's where the front end attached them."""
    device_has = module.functions_with(SYCL_DEVICE_HAS)
    set_of = module.functions_with(INDIRECTLY_CALLABLE)
    for name in declaring:
        fn = module.functions[name]
        if fn.is_declaration:
            continue
        declared = declared_aspects(module, name, device_has)
        for a in sorted(total.get(name, _NONE) - declared):
            aspect = names.get(a, a)
            path = find_path(edges, name, lambda n: a in direct.get(n, _NONE)) or [name]
            notes = []
            for caller, callee in zip(path, path[1:]):
                shown, target = display_name(module, caller), display_name(module, callee)
                if callee in module.functions[caller].calls():
                    if shown != target:
                        notes.append(diags.note(call_loc(module, module.functions[caller], callee),
                                                f"'{shown}' calls '{target}' here"))
                else:
                    notes.append(diags.note(function_loc(module, module.functions[caller]),
                                            f"'{shown}' calls virtual functions of {set_display(set_of.get(callee) or '')}, "
                                            f"which includes '{target}'"))
            user = module.functions[path[-1]]
            use = aspect_use(module, user, a)
            if use is not None:
                notes.append(diags.note(use[0], f"'{display_name(module, path[-1])}' uses aspect '{aspect}' here: "
                                                f"{use[1]}"))
            else:
                notes.append(diags.note(function_loc(module, user),
                                        f"'{display_name(module, path[-1])}' uses aspect '{aspect}'"))
            kind = "kernel" if fn.is_kernel else "function"
            diags.warning(function_loc(module, fn),
                          f"{kind} '{display_name(module, name)}' uses aspect '{aspect}', which is not listed in its "
                          f"device_has property (through {' -> '.join(display_chain(module, path))})", notes)


@dataclass
class PropagateAspects:
    """The pass (options: ``exclude-aspects=a,b``, ``validate=false``,
    ``fixed-targets=a,b``: upstream's ``-sycl-propagate-aspects-usage-fixed-targets``)."""

    name: ClassVar[str] = "propagate-aspects"
    exclude_aspects: str = field(default="", metadata={"help": "aspects (comma-separated) not propagated"})
    validate: bool = field(default=True, metadata={"help": "warn where used aspects are not in device_has"})
    fixed_targets: str = field(default="", metadata={"help": f"aspects recorded as !{SYCL_FIXED_TARGETS} (upstream's "
                                                             "-sycl-propagate-aspects-usage-fixed-targets)"})

    def run(self, module: Module, am) -> PassResult:
        exclude = {a.strip() for a in self.exclude_aspects.split(",") if a.strip()}
        fixed = [t.strip() for t in self.fixed_targets.split(",") if t.strip()]
        changed = propagate_aspects(module, am.ctx.diagnostics, exclude, self.validate, am.get("callgraph").edges,
                                    fixed)
        return PassResult.preserving("callgraph") if changed else PassResult.ALL


# --- where LLVM prints a function's attachments --------------------------------------

#: LLVM's fixed metadata kinds (``FixedMetadataKinds.def``), in kind-ID order
FIXED_KINDS = ("dbg", "tbaa", "prof", "fpmath", "range", "tbaa.struct", "invariant.load", "alias.scope", "noalias",
               "nontemporal", "llvm.mem.parallel_loop_access", "nonnull", "dereferenceable",
               "dereferenceable_or_null", "make.implicit", "unpredictable", "invariant.group", "align", "llvm.loop",
               "type", "section_prefix", "absolute_symbol", "associated", "callees", "irr_loop", "llvm.access.group",
               "callback", "llvm.preserve.access.index", "vcall_visibility", "noundef", "annotation", "nosanitize",
               "func_sanitize", "exclude", "memprof", "callsite", "kcfi_type", "pcsections", "DIAssignID",
               "coro.outside.frame", "mmra", "noalias.addrspace")
#: kinds this pass may add, in the order upstream's pass first asks its context for them
_PASS_KINDS = (SYCL_USED_ASPECTS, SYCL_DECLARED_ASPECTS, SYCL_CONDITIONALLY_USED_ASPECTS, SYCL_FIXED_TARGETS)


class AttachmentOrder:
    """Puts a function's metadata attachments where LLVM prints them: sorted by
    kind ID.  Fixed kinds have the lowest IDs; a context gives every other kind
    the next ID when it first sees it, which while parsing is the order of first
    use in the text, and for this pass's own kinds (when the input has none) the
    order upstream's pass asks for them, after all the parsed ones.
    ``Module.set_function_metadata`` appends; ``place`` moves the attachments."""

    def __init__(self, module: Module):
        self.module = module
        self._rank: dict[str, int] | None = None

    def rank(self, kind: str) -> int:
        if self._rank is None:
            rank = {k: i for i, k in enumerate(FIXED_KINDS)}
            m = self.module
            texts = [g.line for g in m.globals.values()]
            for f in m.functions.values():      # header, then body: no attachment spans the line between
                texts.append(f.header)
                if f.body is not None:
                    texts.append(f.body)
            for text in texts:
                if "!" in text:
                    for k, _ in attachment_pairs(text):
                        rank.setdefault(k, len(rank))
            for k in _PASS_KINDS:
                rank.setdefault(k, len(rank))
            self._rank = rank
        return self._rank.get(kind, len(self._rank))

    def place(self, name: str) -> None:
        self.module.order_function_attachments(name, self.rank)
