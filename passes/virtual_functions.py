"""analyze-virtual-functions: virtual calls and object construction in kernels.

Upstream's ``SYCLVirtualFunctionsAnalysis``, with the design's separation of
"calls" and "creates" (``../shared/reference/postlink-formats.md`` §3.1, §8).

Algorithm:
  1. A vtable is a global whose initialiser names an ``"indirectly-callable"``
     function; its sets are those functions' sets.
  2. For each kernel, walk its static call tree (direct calls).
  3. An indirect call marked ``"virtual-call"`` anywhere in that tree, in a
     kernel without ``"calls-indirectly"``, is an error.
  4. The sets of the vtables the tree names are the sets the kernel creates
     objects of.  They are recorded on the kernel as the string attribute
     ``"minisycl-creates-virtual-functions"="A,B"`` (sorted), where the post-link
     step reads them for ``creates-virtual-functions-set``, and in
     ``PassContext.created_sets``.

Tests: ``tests/lit/passes/analyze-virtual-functions/``.
"""
from __future__ import annotations

from typing import ClassVar

from .callgraph import CallGraph, find_path
from .ir import Module
from .manager import PassResult
from .srcloc import call_loc, function_loc, indirect_call_locs

CREATES = "minisycl-creates-virtual-functions"


def vtable_sets(module: Module) -> dict[str, list[str]]:
    """Step 1: vtable name → sorted virtual-function sets of the functions it holds."""
    set_of = module.functions_with("indirectly-callable")
    out = {}
    if not set_of:
        return out
    for name, g in module.globals.items():
        sets = sorted({set_of[r] for r in g.refs() if r in set_of})
        if sets:
            out[name] = sets
    return out


def analyze(module: Module, diags=None) -> dict[str, list[str]]:
    """Steps 2-4; returns kernel → created sets (kernels that create none are absent)."""
    vtables = vtable_sets(module)
    graph = CallGraph.of(module).edges
    created: dict[str, list[str]] = {}
    for name, fn in module.functions.items():
        if not fn.is_kernel or fn.is_declaration:
            continue
        attrs = module.function_attributes(fn)
        tree = CallGraph(graph).reachable([name])
        if diags is not None and not attrs.get("calls-indirectly"):
            _check_virtual_calls(module, graph, name, tree, diags)
        sets = sorted({s for f in tree for r in module.functions[f].refs() if r in vtables for s in vtables[r]})
        if sets:
            created[name] = sets
            if attrs.get(CREATES) != ",".join(sets):
                module.update_function_attributes(name, add={CREATES: ",".join(sets)})
    return created


def _check_virtual_calls(module, graph, kernel, tree, diags):
    for f in tree:
        fn = module.functions[f]
        if not fn.indirect_call_attribute_groups():
            continue
        for loc in indirect_call_locs(module, fn, "virtual-call"):
            path = find_path(graph, kernel, lambda n: n == f)
            notes = [diags.note(call_loc(module, module.functions[a], b), f"'{a}' calls '{b}'")
                     for a, b in zip(path, path[1:])]
            where = "" if loc else f" (in {module.name})"
            diags.error(loc or function_loc(module, fn),
                        f"kernel '{kernel}' makes a virtual call (in '{f}') but has no calls_indirectly property{where}",
                        notes)


class AnalyzeVirtualFunctions:
    name: ClassVar[str] = "analyze-virtual-functions"

    def run(self, module: Module, am) -> PassResult:
        before = {k: module.functions[k].header for k in module.functions if module.functions[k].is_kernel}
        am.ctx.created_sets = analyze(module, am.ctx.diagnostics)
        changed = any(module.functions[k].header != h for k, h in before.items())
        return PassResult.preserving("callgraph") if changed else PassResult.ALL
