"""analyze-virtual-functions: virtual calls and object construction in kernels.

Upstream's ``SYCLVirtualFunctionsAnalysis``, with the design's separation of
"calls" and "creates" (``docs/formats.md``, "IR conventions between the stages" and "Post-link decisions").
Option ``mode``: ``design`` (the default, below) or ``upstream`` (at the end).

Algorithm (design mode):
  1. A vtable is a global whose initialiser names an ``"indirectly-callable"``
     function; its sets are those functions' sets.
  2. For each kernel, walk its static call tree (direct calls).
  3. An indirect call marked ``"virtual-call"`` anywhere in that tree, in a
     kernel without ``"calls-indirectly"``, is an error; so is one whose target
     (``!minisycl.vcall``, when the front end attached it) is in a set the
     kernel's ``"calls-indirectly"`` does not list.
  4. The sets of the vtables the tree names are the sets the kernel creates
     objects of.  They are recorded on the kernel as the string attribute
     ``"minisycl-creates-virtual-functions"="A,B"`` (sorted), where the post-link
     step reads them for ``creates-virtual-functions-set``, and in
     ``PassContext.created_sets``.

Upstream mode does what upstream's pass does instead of step 4: "creates" is
folded into "calls".  For each ``"indirectly-callable"`` function F, in module
order, with set S: the globals that name F (vtables), the functions whose
instructions name one of those globals, and the kernels whose static call tree
holds one of those functions.  Each such kernel gets S appended to its
``"calls-indirectly"`` (created when absent; a set already listed is not
repeated), so existing sets come first and new ones follow in discovery order.
Differences from upstream's code, on purpose: the whole call tree counts
(upstream misses a callee without calls of its own two or more calls deep),
and "already listed" compares whole set names (upstream's substring test
skips ``set-a`` when ``set-ab`` is listed).  Step 3's errors are the same in
both modes; they look at the attributes as they were before the pass.

Tests: ``tests/lit/passes/analyze-virtual-functions/``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from .callgraph import CallGraph, find_path
from . import PipelineError
from .ir import Module
from .ir.sycl_names import set_display
from .manager import PassResult
from .srcloc import call_loc, display_name, function_loc, virtual_call_sites
from .support.ir_contract import CALLS_INDIRECTLY, CREATES_VIRTUAL_FUNCTIONS, INDIRECTLY_CALLABLE, VIRTUAL_CALL



def vtable_sets(module: Module) -> dict[str, list[str]]:
    """Step 1: vtable name → sorted virtual-function sets of the functions it holds."""
    set_of = module.functions_with(INDIRECTLY_CALLABLE)
    out = {}
    if not set_of:
        return out
    for name, g in module.globals.items():
        sets = sorted({set_of[r] for r in g.refs() if r in set_of})
        if sets:
            out[name] = sets
    return out


def record_created_sets(module: Module, diags=None) -> dict[str, list[str]]:
    """Steps 2-4 (design mode): check the kernels' virtual calls, record the sets
    each kernel creates objects of on it; returns kernel → created sets (kernels
    that create none are absent)."""
    vtables = vtable_sets(module)
    graph = CallGraph.of(module).edges
    created: dict[str, list[str]] = {}
    for name, fn in module.functions.items():
        if not fn.is_kernel or fn.is_declaration:
            continue
        attrs = module.function_attributes(fn)
        tree = CallGraph(graph).reachable([name])
        if diags is not None:
            _check_virtual_calls(module, graph, name, tree, diags)
        sets = sorted({s for f in tree for r in module.functions[f].refs() if r in vtables for s in vtables[r]})
        if sets:
            created[name] = sets
            if attrs.get(CREATES_VIRTUAL_FUNCTIONS) != ",".join(sets):
                module.update_function_attributes(name, add={CREATES_VIRTUAL_FUNCTIONS: ",".join(sets)})
    return created


def created_sets(module: Module) -> dict[str, list[str]]:
    """Kernel → sorted sets of the vtables its call tree names (what
    ``PassContext.created_sets`` holds in both modes, and what ``analyze``
    records), without editing the module.  Walked the other way round: from
    each function that names a vtable up through its callers, once per set,
    so the cost is one look at each function's references (and at its calls
    only where another function names one of those) plus the callers of those
    few functions, not every kernel's whole call tree: post-link asks this of
    every module it splits."""
    vtables = vtable_sets(module)
    if not vtables:
        return {}
    functions = module.functions
    naming: dict[str, list[str]] = {}       # set → the functions naming one of its vtables
    named: set[str] = set()                 # what some function names (its callees among them)
    for name, fn in functions.items():
        refs = fn.refs()
        named.update(refs)
        if not vtables.keys().isdisjoint(refs):
            for r in refs:
                for s in vtables.get(r, ()):
                    naming.setdefault(s, []).append(name)
    callers = None                          # made only when another function names one of those
    found: dict[str, set[str]] = {}
    for s, sources in naming.items():
        seen = set(sources)
        work = [f for f in seen if f in named]
        if work and callers is None:
            callers = _callers(functions)
        while work:
            for caller in callers.get(work.pop(), ()):
                if caller not in seen:
                    seen.add(caller)
                    work.append(caller)
        for name in seen:
            found.setdefault(name, set()).add(s)
    return {name: sorted(found[name]) for name, fn in functions.items()
            if name in found and fn.is_kernel and not fn.is_declaration}


def _callers(functions) -> dict[str, list[str]]:
    """Function → the functions of ``functions`` that call it directly."""
    callers: dict[str, list[str]] = {}
    for name, fn in functions.items():
        for callee in fn.calls():
            if callee in functions:
                callers.setdefault(callee, []).append(name)
    return callers


def check_virtual_calls(module: Module, diags, graph: dict[str, list[str]]) -> None:
    """Step 3 alone, without editing the module (the ``check-device-code``
    pass), over the call graph ``graph``."""
    if not module.attribute_index(VIRTUAL_CALL):
        return
    for name, fn in module.functions.items():
        if fn.is_kernel and not fn.is_declaration:
            _check_virtual_calls(module, graph, name, CallGraph(graph).reachable([name]), diags)


def _check_virtual_calls(module, graph, kernel, tree, diags):
    """Step 3 for one kernel: each ``"virtual-call"`` in its tree needs the
    kernel's ``"calls-indirectly"``, and, where the front end attached the
    target (``!minisycl.vcall``), the target's set listed in it.  A target
    without a set is ``split-if-device``'s error, not this one."""
    listed = [s for s in (module.function_attributes(kernel).get(CALLS_INDIRECTLY) or "").split(",") if s]
    shown = display_name(module, kernel)
    for f in tree:
        fn = module.functions[f]
        if not fn.indirect_call_attribute_groups():
            continue
        for loc, target, set_name in virtual_call_sites(module, fn):
            if target is not None and (not set_name or (listed and set_name in listed)):
                continue
            if target is None and listed:
                continue
            to = f" to '{target}'" if target is not None else ""
            caller = display_name(module, f)
            via = f" (through '{caller}')" if caller != shown else ""
            where = "" if loc else f" (in {module.name})"
            if listed:
                msg = (f"kernel '{shown}' makes a virtual call{to}{via}, which belongs to {set_display(set_name)}; "
                       f"that set is not listed in its calls_indirectly property{where}")
            else:
                msg = f"kernel '{shown}' makes a virtual call{to}{via} but has no calls_indirectly property{where}"
            path = find_path(graph, kernel, lambda n: n == f)
            notes = [diags.note(call_loc(module, module.functions[a], b),
                                f"'{display_name(module, a)}' calls '{display_name(module, b)}' here")
                     for a, b in zip(path, path[1:]) if display_name(module, a) != display_name(module, b)]
            kernel_loc = function_loc(module, module.functions[kernel])
            if kernel_loc is not None:
                notes.append(diags.note(kernel_loc, f"kernel '{shown}' is defined here"))
            diags.error(loc or function_loc(module, fn), msg, notes)


def fold_created_into_calls(module: Module, diags=None) -> dict[str, list[str]]:
    """Upstream mode (see the module docstring); returns kernel → the sets added
    to its ``"calls-indirectly"`` (kernels that got none are absent)."""
    set_of = module.functions_with(INDIRECTLY_CALLABLE)
    if not set_of:
        return {}
    graph = CallGraph.of(module).edges
    kernels = [n for n, f in module.functions.items() if f.is_kernel and not f.is_declaration]
    trees = {k: set(CallGraph(graph).reachable([k])) for k in kernels}
    if diags is not None:
        for k in kernels:
            _check_virtual_calls(module, graph, k, [f for f in module.functions if f in trees[k]], diags)
    users: dict[str, list[str]] = {}         # global -> functions whose bodies name it
    for name, fn in module.functions.items():
        for r in fn.refs():
            if r in module.globals:
                users.setdefault(r, []).append(name)
    added: dict[str, list[str]] = {}
    for fname, vset in set_of.items():
        vtables = [g for g, gv in module.globals.items() if fname in gv.refs()]
        using = {u for g in vtables for u in users.get(g, ())}
        for k in kernels:
            if not using & trees[k]:
                continue
            current = module.function_attributes(k).get(CALLS_INDIRECTLY) or ""
            sets = [s for s in current.split(",") if s]
            if vset in sets:
                continue
            module.update_function_attributes(k, add={CALLS_INDIRECTLY: ",".join(sets + [vset])})
            added.setdefault(k, []).append(vset)
    return added


MODES = ("design", "upstream")


@dataclass
class AnalyzeVirtualFunctions:
    """The pass (option ``mode=design|upstream``)."""

    name: ClassVar[str] = "analyze-virtual-functions"
    mode: str = field(default="design", metadata={"choices": MODES, "help": "design: calls and creates apart; "
                                                                               "upstream: creates folded into calls"})

    def __post_init__(self):
        if self.mode not in MODES:
            raise PipelineError(f"pass '{self.name}': option 'mode' expects one of {', '.join(MODES)}, "
                                f"got '{self.mode}'")

    def run(self, module: Module, am) -> PassResult:
        before = {k: module.functions[k].header for k in module.functions if module.functions[k].is_kernel}
        if self.mode == "upstream":
            fold_created_into_calls(module, am.ctx.diagnostics)
            am.ctx.created_sets = created_sets(module)
        else:
            am.ctx.created_sets = record_created_sets(module, am.ctx.diagnostics)
        changed = any(module.functions[k].header != h for k, h in before.items())
        return PassResult.preserving("callgraph") if changed else PassResult.ALL
