"""propagate-aspects, conditional calls: ``!sycl_conditionally_used_aspects``.

DPC++'s ``if_device_has`` / ``if_architecture_is`` (intel/llvm,
sycl/doc/design/DeviceIf.md) reach device code as calls to a *conditional
caller*, a declaration with ``"sycl-call-if-on-device-conditionally"``:
``call @caller(ptr @action, ptr %this, i32 c1, i32 c2, ...)``, where
``@action`` runs only on a device for which the *condition* ``c1, c2, ...``
(aspects and architectures joined by and/or/not, in prefix form) holds.  The
aspects the action uses are then used under that condition only: upstream's
``SYCLPropagateAspectsUsage`` keeps them out of ``!sycl_used_aspects`` and
lists them in ``!sycl_conditionally_used_aspects`` instead, as
``!{!{!{i32 c...}, !{i32 a...}}, ...}``: (conditions, aspects) pairs.  This
module is that part of the pass (``propagate_aspects.py`` calls it only
when some function has the attribute: otherwise nothing changes).

Algorithm (upstream's; where ours differs, it says so):
  1. Call graph: a call to a conditional caller whose first argument is a
     function ``@action`` adds the edge caller -> action.  The condition of
     such a call is the set of the integer constants from its third argument
     on, in upstream's ``SmallSet<int, 4>`` order (``AspectSet``): upstream
     keeps a set, not the expression.
  2. Unconditional functions: entry points that are no conditional caller
     and what they reach without entering one.  Conditional functions: the
     conditional callers that entry points reach, and what those reach.  A
     function no entry point reaches is unconditional (a conditional caller:
     conditional).  A function may be both.  (Upstream's walk visits each
     function once, so a function first reached unconditionally does not pass
     its conditional reach on; we compute the reachability itself.)
  3. The aspects a function's own text uses (types, instructions) count as
     used when it is unconditional and as conditionally used when it is
     conditional; its ``!sycl_used_aspects`` and ``!sycl_declared_aspects``
     always count as used/declared.  Used and declared aspects propagate only
     into unconditional callers (``unconditional_edges``), so nothing flows
     through a conditional caller.
  4. Conditions (``_conditions``): a walk along every call path from each
     entry point in turn; each callee takes its caller's conditions, plus the
     call's condition when the callee is a conditional caller; a later visit
     replaces an earlier one (upstream's walk).
  5. Pairs (``pairs``): every path from an entry point to a function that
     calls nothing, through at least one conditional caller, in the walk's
     order; along each, from its end upwards, a function adds the next
     one's conditional aspects to its own, takes the next one's conditions
     when it has none, records (its conditions, its aspects) when both are
     non-empty, then takes the next one's pairs; no pair twice (equal as
     sets).  Results and order are upstream's, which its
     ``PropogateConditionalAspects/conditional-aspects-{1..4}.ll`` check.
  6. Each function with pairs gets the metadata (``merged_pairs``): excluded
     aspects dropped, pairs left without aspects dropped, then the pairs it
     carried already that are not there yet.  (Upstream's code computes that
     list and then writes the unfiltered one; we write the computed one.)
     No pair, no metadata, as the design asks (upstream can leave an empty
     list on a function of a path without aspects).

Cost: steps 4 and 5 walk only the call paths that pass through a
conditional caller or lead to one (upstream walks every path from every
entry point); a path that would come back to a function already on it stops
there (upstream would recurse without end).  Paths are enumerated, as
upstream does: a call graph with many paths below conditional callers costs
as many.

Tests: ``tests/lit/passes/propagate-aspects/conditional-*.ll``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .callgraph import sccs
from .ir import Module, tokens, unquote_name
from .ir.lexer import closing, split_operands
from .aspect_set import AspectSet
from .support.ir_contract import CALL_IF_ON_DEVICE_CONDITIONALLY, SYCL_CONDITIONALLY_USED_ASPECTS

__all__ = ["ConditionalCalls", "conditional_calls", "merged_pairs"]


def _call_arguments(body: str, callees) -> list[tuple[str, list[str]]]:
    """(callee, argument operands as printed) of the direct calls in ``body``
    to functions of ``callees``, in body order."""
    out = []
    for line in body.split("\n"):
        if "@" not in line or "call" not in line:
            continue
        toks = tokens(line)
        for i, (tok, _, _) in enumerate(toks):
            if tok.startswith("@") and i + 1 < len(toks) and toks[i + 1][0] == "(":
                name = unquote_name(tok[1:])
                if name in callees and any(t[0] == "call" for t in toks[:i]):
                    end = closing(toks, i + 1)
                    out.append((name, split_operands(line[toks[i + 1][2]:toks[end - 1][1]])))
                break
    return out


def _value(operand: str) -> str:
    """The value of a call operand (``ptr noundef @f`` -> ``@f``, ``i32 -1`` -> ``-1``)."""
    parts = operand.split()
    return parts[-1] if parts else ""


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


@dataclass
class ConditionalCalls:
    """Steps 1-5 for one module (``conditional_calls`` builds it)."""

    callers: set[str]                               # the conditional callers
    edges: dict[str, list[str]]                     # the call graph with caller -> action edges
    entries: list[str]
    local: dict[str, dict[str, AspectSet]]          # function -> conditional caller -> condition
    unconditional: set[str] = field(default_factory=set)
    conditional: set[str] = field(default_factory=set)
    direct: dict = field(default_factory=dict)      # step 3: function -> its conditionally used aspects

    def unconditional_edges(self) -> dict[str, list[str]]:
        """The graph used and declared aspects propagate along (step 3)."""
        keep = self.unconditional
        return {n: (succ if n in keep else []) for n, succ in self.edges.items()}

    # --- step 4 ---------------------------------------------------------------------

    def _reaches_callers(self) -> set[str]:
        """Functions from which a conditional caller is reachable (callers included)."""
        edges, out = self.edges, set()
        for comp in sccs(edges):            # callees' components first
            if any(n in self.callers or any(s in out for s in edges.get(n, ())) for n in comp):
                out.update(comp)
        return out

    def _below_callers(self) -> set[str]:
        """Functions reachable from a conditional caller."""
        seen, work = set(), [s for c in self.callers for s in self.edges.get(c, ())]
        while work:
            n = work.pop()
            if n not in seen:
                seen.add(n)
                work.extend(self.edges.get(n, ()))
        return seen

    def _conditions(self, reaching: set[str], below: set[str]) -> dict:
        """Step 4: function -> its conditions (an ``AspectSet``), for the
        functions steps 5 may meet.  A callee from which no conditional caller
        is reachable passes its caller's conditions on unchanged to all it
        reaches: those that can lie below a conditional caller take them at
        once, the walk does not go in."""
        edges, callers, local = self.edges, self.callers, self.local
        cond: dict = {}
        reach_memo: dict[str, list[str]] = {}

        def below_from(c: str) -> list[str]:
            got = reach_memo.get(c)
            if got is None:
                seen, work, got = set(), [c], []
                while work:
                    n = work.pop()
                    if n in seen:
                        continue
                    seen.add(n)
                    if n in below:
                        got.append(n)
                    work.extend(edges.get(n, ()))
                reach_memo[c] = got
            return got

        for root in self.entries:
            on_path = {root}
            stack = [(root, iter(edges.get(root, ())))]
            while stack:
                f, it = stack[-1]
                c = next(it, None)
                if c is None:
                    stack.pop()
                    on_path.discard(f)
                    continue
                if c in on_path:
                    continue
                new = cond[f].copy() if f in cond else AspectSet()
                if c in callers:
                    new.update(local.get(f, {}).get(c, ()))
                if c in reaching:
                    cond[c] = new
                    on_path.add(c)
                    stack.append((c, iter(edges.get(c, ()))))
                else:
                    for n in below_from(c):
                        cond[n] = new.copy()
        return cond

    # --- step 5 ---------------------------------------------------------------------

    def _paths(self, reaching: set[str]):
        """The paths of step 5, in upstream's order (a generator)."""
        edges, callers = self.edges, self.callers
        for root in self.entries:
            if root not in reaching:
                continue
            path = [root]
            on_path = {root}
            through = [root in callers]             # whether path[:k+1] holds a conditional caller
            stack = [iter(edges.get(root, ()))]
            if not edges.get(root):
                if through[0]:
                    yield list(path)
                continue
            while stack:
                c = next(stack[-1], None)
                if c is None:
                    stack.pop()
                    on_path.discard(path.pop())
                    through.pop()
                    continue
                if c in on_path or not (through[-1] or c in reaching):
                    continue
                t = through[-1] or c in callers
                if not edges.get(c):
                    if t:
                        yield path + [c]
                    continue
                path.append(c)
                on_path.add(c)
                through.append(t)
                stack.append(iter(edges[c]))

    def pairs(self) -> dict[str, list[tuple[tuple[int, ...], tuple[int, ...]]]]:
        """Step 5: function -> its (conditions, aspects) pairs, in upstream's order."""
        reaching = self._reaches_callers()
        cond = self._conditions(reaching, self._below_callers())
        aspects = {n: a.copy() for n, a in self.direct.items()}
        out: dict[str, list] = {}
        seen: dict[str, set] = {}

        def add(name, pair, key):
            have = seen.setdefault(name, set())
            if key not in have:
                have.add(key)
                out.setdefault(name, []).append(pair)

        for path in self._paths(reaching):
            for i in range(len(path) - 1, -1, -1):
                f = path[i]
                mine = aspects.get(f)
                if i != len(path) - 1:
                    nxt = path[i + 1]
                    theirs = aspects.get(nxt)
                    if theirs:
                        if mine is None:
                            mine = aspects[f] = AspectSet()
                        mine.update(theirs)
                    if not cond.get(f) and nxt in cond:
                        cond[f] = cond[nxt].copy()
                c = cond.get(f)
                if c and mine:
                    add(f, (tuple(c), tuple(mine)), (frozenset(c), frozenset(mine)))
                if i != len(path) - 1:
                    for pair in out.get(path[i + 1], ()):
                        add(f, pair, (frozenset(pair[0]), frozenset(pair[1])))
        return out


def conditional_calls(module: Module, edges: dict[str, list[str]], entries: list[str]) -> ConditionalCalls | None:
    """Steps 1 and 2 for ``module`` (``edges``: its call graph as the pass
    follows it), or None when no function is a conditional caller."""
    callers = set(module.functions_with(CALL_IF_ON_DEVICE_CONDITIONALLY))
    if not callers:
        return None
    graph, local = _actions_and_conditions(module, edges, callers)
    out = ConditionalCalls(callers, graph, list(entries), local)
    _classify(out, module)
    return out


def _actions_and_conditions(module: Module, edges: dict[str, list[str]], callers: set[str]):
    """Step 1: the call graph with caller -> action edges, and function ->
    conditional caller -> condition."""
    graph = {n: list(s) for n, s in edges.items()}
    local: dict[str, dict] = {}
    for name, fn in module.functions.items():
        if fn.body is None or not any(c in fn.calls() for c in callers):
            continue
        for callee, args in _call_arguments(fn.body, callers):
            if not args:
                continue
            target = _value(args[0])
            if target.startswith("@") and unquote_name(target[1:]) in module.functions:
                action = unquote_name(target[1:])
                succ = graph.setdefault(callee, [])
                if action not in succ:
                    succ.append(action)
                graph.setdefault(action, [])
            condition = local.setdefault(name, {}).setdefault(callee, AspectSet())
            condition.update(v for v in (_int(_value(a)) for a in args[2:]) if v is not None)
    return graph, local


def _classify(out: ConditionalCalls, module: Module) -> None:
    """Step 2: ``out.unconditional`` and ``out.conditional``."""
    graph, callers, entries = out.edges, out.callers, out.entries
    unconditional, conditional = out.unconditional, out.conditional
    work = [e for e in entries if e not in callers]
    while work:
        n = work.pop()
        if n not in unconditional:
            unconditional.add(n)
            work.extend(s for s in graph.get(n, ()) if s not in callers)
    work = [e for e in entries if e in callers] + [s for n in unconditional for s in graph.get(n, ()) if s in callers]
    while work:
        n = work.pop()
        if n not in conditional:
            conditional.add(n)
            work.extend(graph.get(n, ()))
    for name in module.functions:
        if name not in unconditional and name not in conditional:
            (conditional if name in callers else unconditional).add(name)


def merged_pairs(module: Module, name: str, pairs, dropped: set[int]) -> list | None:
    """Step 6: the operands of ``name``'s ``!sycl_conditionally_used_aspects``
    (each pair a list of two lists: nodes of their own), or None for none."""
    out, keys = [], set()

    def add(c, a):
        key = (frozenset(c), frozenset(a))
        if a and key not in keys:
            keys.add(key)
            out.append([[f"i32 {v}" for v in c], [f"i32 {v}" for v in a]])

    for c, a in pairs:
        add(c, [v for v in a if v not in dropped])
    current = module.functions[name].metadata.get(SYCL_CONDITIONALLY_USED_ASPECTS)
    for ref in module.metadata_operands(current) if current else ():
        inner = module.metadata_operands(ref) if ref.startswith("!") and ref[1:].isdigit() else []
        if len(inner) == 2:
            add(module.metadata_ints(inner[0]), module.metadata_ints(inner[1]))
    return out or None
