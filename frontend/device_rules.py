"""Language rules that need the device call graph (``language.md``, "Rules the compiler diagnoses").

Device code is every kernel, ``SYCL_EXTERNAL`` function and ``indirectly_callable``
method, plus everything they call, skipping what runs only on the host
(``if_host`` blocks and the ``otherwise`` of ``if_device``), exactly as the
single-pass ``if_device`` design asks of the front end.  On that graph:

1. host-only uses (``print``, ``host`` functions) are errors;
2. recursion is an error;
3. a call to a function that is only declared, and not ``SYCL_EXTERNAL``, is an error;
4. a virtual call needs an ``indirectly_callable`` target, and each kernel that
   reaches it must list the target's set in ``calls_indirectly``;
5. aspects used (``double`` → fp64, ``half`` → fp16, 64-bit atomics → atomic64),
   directly, through calls or through the virtual-function sets a kernel calls,
   that are missing from a function's ``device_has`` list are warnings with the chain;
6. work-group memory (``local T x[N];``) in a function a kernel without
   work-groups (``single_task``, ``id<N>``) reaches is an error.
"""
from __future__ import annotations

from ..passes.support.diagnostics import DiagnosticSink
from .symbols import FuncSym


def _device_edges(fn: FuncSym):
    return [(callee, loc) for callee, loc, region in fn.calls if region != "host"]


def device_roots(functions: list[FuncSym]) -> list[FuncSym]:
    return [f for f in functions if f.defined and (f.is_kernel or f.is_external or f.set_name is not None)]


def check(functions: list[FuncSym], diags: DiagnosticSink) -> list[FuncSym]:
    """Apply the rules; returns the device functions in a deterministic order."""
    roots = device_roots(functions)
    order: list[FuncSym] = []
    seen: set = set()
    parent: dict = {}
    stack = []
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        stack.append(root)
        while stack:
            fn = stack.pop()
            order.append(fn)
            for callee, loc in _device_edges(fn):
                if callee not in seen:
                    seen.add(callee)
                    parent[callee] = (fn, loc)
                    stack.append(callee)

    def chain(fn):
        names = [fn.display]
        while fn in parent:
            fn = parent[fn][0]
            names.append(fn.display)
        return " <- ".join(names)

    for fn in order:
        for what, loc, region in fn.host_uses:
            if region != "host":
                diags.error(loc, f"host-only function '{what}' cannot be called from device code"
                            f" (reached through {chain(fn)}); wrap it in an if_host block")
        for callee, loc in _device_edges(fn):
            if callee.is_host:
                diags.error(loc, f"host function '{callee.display}' cannot be called from device code"
                            f" (reached through {chain(fn)})", [diags.note(callee.loc, "declared 'host' here")])
            elif not callee.defined and not callee.is_external:
                diags.error(loc, f"device code calls '{callee.display}', which is not defined in this file "
                            f"and not declared SYCL_EXTERNAL")
        for m, loc, region in fn.vcalls:
            if region != "host" and m.set_name is None:
                diags.error(loc, f"virtual call to '{m.display}' from device code, but it has no indirectly_callable property")

    _check_recursion(order, diags)
    _check_work_group_memory(roots, diags)
    _check_virtual_sets(functions, roots, diags)
    _check_aspects(functions, order, diags)
    return order


def _check_recursion(order, diags):
    state: dict = {}
    for start in order:
        if state.get(start):
            continue
        path = [start]
        iters = [iter(_device_edges(start))]
        state[start] = 1
        while iters:
            nxt = next(iters[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                iters.pop()
                continue
            callee, loc = nxt
            s = state.get(callee)
            if s == 1:
                cycle = path[path.index(callee):] + [callee]
                diags.error(loc, "recursion is not allowed in device code: " + " -> ".join(f.display for f in cycle))
            elif s is None:
                state[callee] = 1
                path.append(callee)
                iters.append(iter(_device_edges(callee)))


def _check_work_group_memory(roots, diags):
    """Rule 6: ``local`` variables only in the call tree of nd_range kernels."""
    for k in roots:
        if not k.is_kernel or k.launch == "nd_range":
            continue
        kind = "single_task kernel" if k.launch == "single_task" else "kernel launched over a range"
        for fn in _reach(k):
            for name, loc in fn.local_decls:
                via = "" if fn is k else f" (reached through '{fn.display}')"
                diags.error(loc, f"work-group memory '{name}' in {kind} '{k.name}'{via}: 'local' variables "
                                 "need an nd_range kernel (first parameter nd_item<N>)",
                            [diags.note(k.loc, f"kernel '{k.name}' is defined here")])


def _reach(fn):
    """Device functions reachable from ``fn`` with the call site that first reaches each."""
    seen = {fn: None}
    todo = [fn]
    while todo:
        f = todo.pop()
        for callee, loc in _device_edges(f):
            if callee not in seen:
                seen[callee] = (f, loc)
                todo.append(callee)
    return seen


def _check_virtual_sets(functions, roots, diags):
    for k in roots:
        if not k.is_kernel:
            continue
        reached = _reach(k)
        for fn in reached:
            for m, loc, region in fn.vcalls:
                if region == "host" or m.set_name is None:
                    continue
                if m.set_name not in k.calls_sets:
                    via = "" if fn is k else f" (through '{fn.display}')"
                    if not k.calls_sets:
                        msg = f"kernel '{k.name}' makes a virtual call to '{m.display}'{via} but has no calls_indirectly property"
                    else:
                        msg = (f"kernel '{k.name}' makes a virtual call to '{m.display}'{via}, whose set "
                               f"'{m.set_name}' is not listed in its calls_indirectly property")
                    diags.error(loc, msg, [diags.note(k.loc, f"kernel '{k.name}' is defined here")])


def _check_aspects(functions, order, diags):
    by_set: dict = {}
    for f in functions:
        if f.set_name is not None and f.defined:
            by_set.setdefault(f.set_name, []).append(f)
    for fn in order:
        if fn.device_has is None:
            continue
        declared = set(fn.device_has)
        reported = set()
        sources = [(fn, None)] + [(m, s) for s in fn.calls_sets for m in by_set.get(s, [])]
        for start, via_set in sources:
            reached = _reach(start)
            for f, how in reached.items():
                for (aspect, region), (loc, what) in f.aspects.items():
                    if region == "host" or aspect in declared or aspect in reported:
                        continue
                    reported.add(aspect)
                    path = []
                    g = f
                    while reached[g] is not None:
                        caller, cloc = reached[g]
                        path.append(diags.note(cloc, f"'{caller.display}' calls '{g.display}' here"))
                        g = caller
                    path.reverse()
                    if via_set is not None:
                        path.insert(0, diags.note(fn.loc, f"'{fn.display}' calls virtual functions of set '{via_set}', which includes '{start.display}'"))
                    path.append(diags.note(loc, f"'{f.display}' uses aspect '{aspect.name}' here: {what}"))
                    kind = "kernel" if fn.is_kernel else "function"
                    diags.warning(fn.loc, f"{kind} '{fn.display}' uses aspect '{aspect.name}', which is not listed in its device_has property", path)
