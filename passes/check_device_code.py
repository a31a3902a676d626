"""check-device-code: the device-code rules, on a single-source module, without editing it.

The rules of ``docs/language.md``'s "Rules the compiler diagnoses" that need the
device call graph, as the front end runs them on each file it compiles
(``frontend.compile_source``) and as ``minisycl opt -passes=check-device-code``
runs them on any module.  Each rule lives with the pass that owns its facts;
this pass runs them where the transforming passes would, without splitting the
module, so that checking costs a look at the call graph and not a copy:

  1. The device call tree: the device roots of ``split-if-device`` (kernels,
     SYCL_EXTERNAL and ``"indirectly-callable"`` functions) and what they call,
     not looking inside the ``"sycl-call-if-on-host"`` helpers.
  2. ``split_if_device.check_device_code`` on that tree: host-only calls,
     calls to undefined functions, virtual calls to methods without a set,
     recursion (errors).
  3. ``virtual_functions.check_virtual_calls``: each kernel's virtual calls
     against its ``"calls-indirectly"`` (errors).
  4. ``propagate_aspects.warn_undeclared_aspects`` for the functions of the
     tree: aspects used but missing from ``device_has`` (warnings).
  5. Work-group memory (``addrspace(3)`` globals) only in the call tree of
     nd_range kernels (first parameter an ``nd_item``): each use reached from
     another kernel is an error at the variable's declaration (errors).

Diagnostics are at the front end's ``!minisycl.loc`` and use its names
(``!minisycl.name``) where it attached them (``srcloc.py``).
Tests: ``tests/lit/passes/check-device-code/``.
"""
from __future__ import annotations

import re

from .callgraph import CallGraph
from .ir import Module
from .ir.lexer import global_refs
from .manager import PassResult
from .propagate_aspects import warn_undeclared_aspects
from .split_if_device import call_if_helpers, check_device_code, device_roots
from .srcloc import display_name, function_loc, global_loc
from .virtual_functions import check_virtual_calls
from .support.ir_contract import CALL_IF_ON_HOST, SIGNATURE_ATTRIBUTE

_ND_ITEM = '%"class.sycl::_V1::nd_item.'


def check_device_rules(module: Module, diags) -> None:
    """Steps 1-4."""
    graph = CallGraph.of(module, skip_bodies=call_if_helpers(module, CALL_IF_ON_HOST)).edges
    roots = [r for r in device_roots(module) if r in module.functions]
    check_device_code(module, roots, diags, graph)
    check_virtual_calls(module, diags, graph)
    warn_undeclared_aspects(module, diags, graph, only=set(CallGraph(graph).reachable(roots)))
    check_work_group_memory(module, diags, graph)


def check_work_group_memory(module: Module, diags, graph) -> None:
    """Step 5."""
    local = {n for n, g in module.globals.items() if g.address_space == 3}
    if not local:
        return
    for k, fn in module.functions.items():
        if not fn.is_kernel or fn.body is None or fn.params.lstrip("(").startswith(_ND_ITEM):
            continue
        kind = "single_task kernel" if "id<" not in (module.function_attributes(fn).get(SIGNATURE_ATTRIBUTE)
                                                     or "") else "kernel launched over a range"
        shown = display_name(module, k)
        for f in CallGraph(graph).reachable([k]):
            body = module.functions[f].body if f in module.functions else None
            for g in sorted(local & set(global_refs(body or ""))):
                via = "" if f == k else f" (reached through '{display_name(module, f)}')"
                name = re.sub(r"\.\d+$", "", g).rsplit(".", 1)[-1]      # the front end's <function>.<name>[.N]
                diags.error(global_loc(module, g) or function_loc(module, module.functions[f]),
                            f"work-group memory '{name}' in {kind} '{shown}'{via}: 'local' variables need an "
                            f"nd_range kernel (first parameter nd_item<N>)",
                            [diags.note(function_loc(module, fn), f"kernel '{shown}' is defined here")])


class CheckDeviceCode:
    """The pass: diagnostics only; the module is not changed."""

    name = "check-device-code"

    def run(self, module: Module, am) -> PassResult:
        check_device_rules(module, am.ctx.diagnostics)
        return PassResult.ALL
