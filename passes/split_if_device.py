"""split-if-device: split a single-source module into its device and host halves.

The IR pass of the single-pass ``if_device`` design
(DPC++'s ``if_device`` design, intel/llvm sycl/doc/design/DeviceIf.md).

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
     host-only function (``"minisycl-host-only"``) or to an undefined one
     (``"minisycl-undefined"``), a virtual call to a method without a set, and
     recursion are errors, reported at the call's ``!minisycl.loc`` when the
     front end made the IR (``check_device_code``).
  5. Virtual methods without ``indirectly_callable``
     (``"minisycl-host-only"="virtual"``) are host code: step 2 does not look
     into the body of one that only vtables reach, and after step 4 each
     device vtable slot naming one names a stub that stops the kernel with
     ``errc::runtime`` (``host_only_virtuals.py``).  One that device code calls
     directly is device code, as any called function.

IR contract: reads the attributes above and ``!minisycl.loc``; the pass's
module becomes the device module and ``PassContext.host_module`` the host one.
Tests: ``tests/lit/passes/split-if-device/``.
"""
from __future__ import annotations

from .callgraph import CallGraph, find_path, reachable_and_cyclic, sccs
from .ir import DISCARDABLE_LINKAGES, USED_LISTS, Module
from .entry_points import entry_points
from .host_only_virtuals import VIRTUAL, device_closure, stub_vtable_slots
from .manager import PassResult
from .srcloc import call_loc, display_chain, display_name, function_loc, virtual_call_sites
from .support.ir_contract import CALL_IF_ON_DEVICE, CALL_IF_ON_HOST, DEVICE_GLOBAL_SIZE, HOST_ONLY, UNDEFINED

_HOST_ROOT_LISTS = ("llvm.global_ctors", "llvm.global_dtors")


def device_and_host_roots(module: Module) -> tuple[list[str], list[str]]:
    """(device roots, host roots) of step 1, in module order."""
    return device_roots(module), host_roots(module)


def host_roots(module: Module) -> list[str]:
    """The host roots of step 1: every externally visible definition that is
    not a kernel, and the global constructor/destructor lists."""
    host = [name for name, fn in module.functions.items()     # (linkage first: most definitions are discardable)
            if fn.body is not None and fn.linkage not in DISCARDABLE_LINKAGES and not fn.is_kernel]
    host += [g for g in _HOST_ROOT_LISTS if g in module.globals]
    return host


def device_roots(module: Module) -> list[str]:
    """The device roots of step 1: the entry points (``passes/entry_points.py``,
    virtual functions included) and the defined device globals."""
    return entry_points(module) + [n for n in module.globals_with(DEVICE_GLOBAL_SIZE)
                                   if not module.globals[n].is_declaration]


def call_if_helpers(module: Module, marker: str) -> list[str]:
    """The ``if_device``/``if_host`` helpers marked ``marker`` (``ON_HOST``, ``ON_DEVICE``)."""
    return list(module.functions_with(marker))


def split_device_and_host(module: Module, roots: tuple[list[str], list[str]] | None = None
                          ) -> tuple[Module, Module]:
    """(device module, host module) of a single-source module (step 2); ``roots``:
    its ``device_and_host_roots``, when the caller has them already."""
    host = host_half(module, roots[1] if roots else host_roots(module))
    return device_half(module, roots[0] if roots else device_roots(module)), host


def host_half(module: Module, roots: list[str]) -> Module:
    """Step 2's host module: what ``roots`` (``host_roots``) reach, with the
    ``if_device`` helpers emptied."""
    return _half(module, roots, call_if_helpers(module, CALL_IF_ON_DEVICE), ".host")


def device_half(module: Module, roots: list[str]) -> Module:
    """Step 2's device module: what ``roots`` (``device_roots``) reach, with
    the ``if_host`` helpers emptied."""
    return _half(module, roots, call_if_helpers(module, CALL_IF_ON_HOST), "")


def _half(module: Module, starts: list[str], emptied: list[str], suffix: str) -> Module:
    """One half of step 2: what ``starts`` reach without looking into the
    ``emptied`` helpers, extracted from ``module`` (cost proportional to the half)."""
    used = [g for g in USED_LISTS if g in module.globals]
    if suffix:
        names, host_code = module.closure(starts, skip_bodies_of=emptied), []
    else:                   # host-only virtual methods that only vtables reach: bodies not followed (step 5)
        names, host_code = device_closure(module, starts, emptied)
    reached = set(names)
    # (a host-only virtual keeps its body and names here, its callees only declared, until step 5
    # replaces it: so the extraction declares what it needs instead of taking a closed set)
    half = module.extract(names + used, stub=[h for h in emptied if h in reached], name=module.name + suffix,
                          closed=not host_code)
    _drop_noinline(half)
    return half


def _drop_noinline(module: Module) -> None:
    """Remove ``noinline`` from the helpers.  Every function whose attribute
    group has a helper marker is a helper, so the groups are edited, not the
    functions (the groups are the module's own copies)."""
    for n in sorted(set(module.attribute_index(CALL_IF_ON_HOST)) | set(module.attribute_index(CALL_IF_ON_DEVICE))):
        attrs = module.attributes_of_group(n)
        if "noinline" in attrs:
            del attrs["noinline"]
            module.replace_attribute_group(n, attrs)


def check_device_code(device: Module, roots: list[str], diags, graph: dict[str, list[str]] | None = None) -> None:
    """Step 4's rules on the device call tree: the functions ``roots`` reach by
    direct calls in ``graph`` (its call graph, when the caller has it already;
    the ``if_host`` helpers' calls left out), bodies of host-only functions
    not looked into.

    * a call to a host-only function (``"minisycl-host-only"``: ``print``'s
      ``printf``; with the value ``"declared"``: a function declared ``host``,
      with a note where) is an error, with the chain from a root; the value
      ``"virtual"`` (a virtual method without ``indirectly_callable``) is not:
      a direct call makes it device code, checked as any other;
    * a call to a function marked ``"minisycl-undefined"`` (declared in the
      file, not defined there, not SYCL_EXTERNAL) is an error;
    * a virtual call whose attached target (``!minisycl.vcall``) has no set
      (is not indirectly callable) is an error;
    * recursion (a call cycle) is an error, at the call that closes it.
    Names are the source's (``!minisycl.name``) where the front end attached them."""
    graph = graph if graph is not None else CallGraph.of(device).edges
    host_only = {n: v for n, v in device.functions_with(HOST_ONLY).items() if v != VIRTUAL}
    undefined = device.functions_with(UNDEFINED)
    reach, cyclic = reachable_and_cyclic(graph, roots)

    refused = host_only.keys() | undefined.keys()
    for caller in reach:
        if caller in host_only:
            continue
        fn = device.functions[caller]
        callees = graph.get(caller, ())
        if callees and not refused.isdisjoint(callees):
            _check_callees(device, fn, dict.fromkeys(callees), roots, graph, host_only, undefined, diags)
        if fn.indirect_call_attribute_groups():
            for loc, target, set_name in virtual_call_sites(device, fn):
                if target is not None and not set_name:
                    diags.error(loc or function_loc(device, fn),
                                f"virtual call to '{target}' from device code, but it has no indirectly_callable "
                                f"property{_where(device, loc)}")
    if cyclic:
        _check_recursion(device, graph, reach, diags)


def _where(device: Module, loc) -> str:
    """What an error without a source location says about where it is."""
    return "" if loc else f" (in {device.name})"


def _check_callees(device: Module, fn, callees, roots, graph, host_only: dict, undefined: dict, diags) -> None:
    """``check_device_code``'s first two rules on the calls of ``fn``."""
    caller = fn.name

    def name(n):
        return display_name(device, n)

    for callee in callees:
        if callee not in host_only and callee not in undefined:
            continue
        loc = call_loc(device, fn, callee) or function_loc(device, fn)
        if callee in undefined:
            diags.error(loc, f"device code calls '{name(callee)}', which is not defined in this file and not "
                             f"declared SYCL_EXTERNAL{_where(device, loc)}")
            continue
        chain = next((p for p in (find_path(graph, r, lambda n: n == caller) for r in roots) if p), [caller])
        through = " <- ".join(reversed(display_chain(device, chain)))
        if host_only[callee] == "declared":
            diags.error(loc, f"host function '{name(callee)}' cannot be called from device code "
                             f"(reached through {through}){_where(device, loc)}",
                        [diags.note(function_loc(device, device.functions[callee]), "declared 'host' here")])
        else:
            diags.error(loc, f"host-only function '{name(callee)}' cannot be called from device code "
                             f"(reached through {through}); wrap the call in an if_host block{_where(device, loc)}")


def _check_recursion(device: Module, graph, reach, diags) -> None:
    """``check_device_code``'s last rule: recursion is an error, at the call that closes it."""
    # the call tree is ``graph`` on ``reach`` (which holds every callee of its members):
    # walked from ``reach`` in its order, the components come as they would from the tree
    tree = graph
    order = None
    for comp in sccs(graph, reach):
        if len(comp) == 1 and comp[0] not in tree.get(comp[0], ()):
            continue
        order = order or {n: i for i, n in enumerate(device.functions)}
        head = min(comp, key=order.__getitem__)
        members = set(comp)
        sub = {k: [c for c in tree.get(k, ()) if c in members] for k in comp}
        cycle = [head] + find_path(sub, sub[head][0], lambda n: n == head)
        loc = call_loc(device, device.functions[cycle[-2]], head)
        shown = display_chain(device, cycle)
        if len(shown) == 1:                     # a cycle through one function's if_device helpers
            shown = shown * 2
        diags.error(loc, "recursion is not allowed in device code: " + " -> ".join(shown) + _where(device, loc))


class SplitIfDevice:
    """The pass: the module becomes its device half; the host half goes to the context."""

    name = "split-if-device"

    def run(self, module: Module, am) -> PassResult:
        # the host half first: LLVM verifies it (when the caller writes it) beside all that follows
        host = host_half(module, host_roots(module))
        if am.ctx.verify_host_in_background:
            host.start_verification()
        roots = device_roots(module)
        module.take_contents_of(device_half(module, roots))
        am.ctx.host_module = host
        am.invalidate(PassResult.NONE)
        check_device_code(module, [r for r in roots if r in module.functions], am.ctx.diagnostics,
                          am.get("callgraph").edges)
        if stub_vtable_slots(module):
            return PassResult.NONE
        return PassResult.preserving("callgraph")
