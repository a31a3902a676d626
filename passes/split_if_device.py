"""split-if-device: split a single-source module into its device and host halves.

The IR pass of the single-pass ``if_device`` design
(``../shared/specs/if_device_design.md``).

Algorithm:
  1. Device roots: kernels (``spir_kernel``), ``"indirectly-callable"``
     functions, SYCL_EXTERNAL functions (``"sycl-module-id"``, SPIR-V/SYCL
     builtins excepted) and device globals (``"sycl-device-global-size"``).
     Host roots: every other externally visible function definition, and the
     global constructor/destructor lists.
  2. The device module is everything the device roots reach through calls and
     references, not looking inside ``"sycl-call-if-on-host"`` helpers, whose
     bodies become ``ret void``.  The host module is the same from the host roots,
     with ``"sycl-call-if-on-device"`` helpers emptied.  Both are extracted
     from the input (cost proportional to each half).
  3. ``noinline`` is removed from the helpers in both halves, so inlining and
     optimisation can now remove them.
  4. Device-code rules on the device call tree (which skips the ``if_host``
     helpers, exactly as the design asks of the front end): a call to a
     host-only function (``"minisycl-host-only"``) and recursion are errors,
     reported at the call's ``!minisycl.loc`` when the front end made the IR.

IR contract: reads the attributes above and ``!minisycl.loc``; the pass's
module becomes the device module and ``PassContext.host_module`` the host one.
Tests: ``tests/lit/passes/split-if-device/``.
"""
from __future__ import annotations

import re

from .callgraph import CallGraph, find_path, sccs
from .ir import DISCARDABLE_LINKAGES, USED_LISTS, Module
from .manager import PassResult
from .srcloc import call_loc, function_loc

ON_DEVICE = "sycl-call-if-on-device"
ON_HOST = "sycl-call-if-on-host"
HOST_ONLY = "minisycl-host-only"
#: SPIR-V/SYCL/ESIMD builtins carry "sycl-module-id" but are not SYCL_EXTERNAL
#: entry points: upstream's isSpirvSyclBuiltin/isESIMDBuiltin take "_Z", then
#: any number of digits (none too), then "__spirv_", "__sycl_" or "__esimd_";
#: isGenericBuiltin takes "__builtin_" (tests/postlink/test_differential.py)
SYCL_BUILTIN = re.compile(r'_Z\d*__(?:spirv|sycl|esimd)_|__builtin_')
_HOST_ROOT_LISTS = ("llvm.global_ctors", "llvm.global_dtors")


def entry_points(module: Module) -> tuple[list[str], list[str]]:
    """(device roots, host roots) of step 1, in module order."""
    virtual = module.functions_with("indirectly-callable")
    external = module.functions_with("sycl-module-id")
    device, host = [], []
    for name, fn in module.functions.items():
        if fn.body is None:
            continue
        if fn.is_kernel:
            device.append(name)
            continue
        if (virtual or external) and (name in virtual or (name in external and not SYCL_BUILTIN.match(name))):
            device.append(name)
        if fn.linkage not in DISCARDABLE_LINKAGES:
            host.append(name)
    device += [n for n in module.globals_with("sycl-device-global-size") if not module.globals[n].is_declaration]
    host += [g for g in _HOST_ROOT_LISTS if g in module.globals]
    return device, host


def device_roots(module: Module) -> list[str]:
    return entry_points(module)[0]


def helpers(module: Module, marker: str) -> list[str]:
    return list(module.functions_with(marker))


def split(module: Module, roots: tuple[list[str], list[str]] | None = None) -> tuple[Module, Module]:
    """(device module, host module) of a single-source module; ``roots``: its
    ``entry_points``, when the caller has them already."""
    on_host, on_device = helpers(module, ON_HOST), helpers(module, ON_DEVICE)
    used = [g for g in USED_LISTS if g in module.globals]
    dev_roots, host_roots = roots or entry_points(module)
    halves = []
    for starts, opaque, suffix in ((dev_roots, on_host, ""), (host_roots, on_device, ".host")):
        names = module.closure(starts, opaque=opaque)
        reached = set(names)
        half = module.extract(names + used, stub=[h for h in opaque if h in reached], name=module.name + suffix,
                              closed=True)
        _drop_noinline(half)
        halves.append(half)
    return halves[0], halves[1]


def _drop_noinline(module: Module) -> None:
    """Remove ``noinline`` from the helpers.  Every function whose attribute
    group has a helper marker is a helper, so the groups are edited, not the
    functions (the groups are the module's own copies)."""
    for n in sorted(set(module.attribute_index(ON_HOST)) | set(module.attribute_index(ON_DEVICE))):
        attrs = module.attributes_of_group(n)
        if "noinline" in attrs:
            del attrs["noinline"]
            module.replace_attribute_group(n, attrs)


def check_device_code(device: Module, roots: list[str], diags, graph: dict[str, list[str]] | None = None) -> None:
    """Host-only calls and recursion in the device call tree (``graph``: its
    call graph, when the caller has it already)."""
    graph = graph if graph is not None else CallGraph.of(device).edges
    host_only = device.functions_with(HOST_ONLY)

    def where(loc):
        return "" if loc else f" (in {device.name})"

    if host_only:
        for name, callees in graph.items():
            for callee in callees:
                if callee in host_only and name not in host_only:
                    fn = device.functions[name]
                    chain = next((p for p in (find_path(graph, r, lambda n: n == name) for r in roots) if p), [name])
                    loc = call_loc(device, fn, callee) or function_loc(device, fn)
                    diags.error(loc, f"host-only function '{callee}' cannot be called from device code "
                                     f"(reached through {' <- '.join(reversed(chain))}); wrap the call in an "
                                     f"if_host block{where(loc)}")
    order = None
    for comp in sccs(graph):
        if len(comp) == 1 and comp[0] not in graph[comp[0]]:
            continue
        order = order or {n: i for i, n in enumerate(device.functions)}
        head = min(comp, key=order.__getitem__)
        members = set(comp)
        sub = {k: [c for c in graph[k] if c in members] for k in comp}
        cycle = [head] + find_path(sub, sub[head][0], lambda n: n == head)
        loc = call_loc(device, device.functions[cycle[-2]], head)
        diags.error(loc, "recursion is not allowed in device code: " + " -> ".join(cycle) + where(loc))


class SplitIfDevice:
    """The pass: the module becomes its device half; the host half goes to the context."""

    name = "split-if-device"

    def run(self, module: Module, am) -> PassResult:
        roots = entry_points(module)
        device, host = split(module, roots)
        module.replace_with(device)
        am.ctx.host_module = host
        if am.ctx.verify_host_soon:
            host.verify_soon()
        am.invalidate(PassResult.NONE)
        check_device_code(module, [r for r in roots[0] if r in module.functions], am.ctx.diagnostics,
                          am.get("callgraph").edges)
        return PassResult.preserving("callgraph")
