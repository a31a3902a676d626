"""check-device-code: the device-code rules, on a single-source module, without editing it.

The rules of ``language.md``'s "Rules the compiler diagnoses" that need the
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

Diagnostics are at the front end's ``!minisycl.loc`` and use its names
(``!minisycl.name``) where it attached them (``srcloc.py``).
Tests: ``tests/lit/passes/check-device-code/``.
"""
from __future__ import annotations

from .callgraph import CallGraph
from .ir import Module
from .manager import PassResult
from .propagate_aspects import warn_undeclared_aspects
from .split_if_device import ON_HOST, call_if_helpers, check_device_code, device_roots
from .virtual_functions import check_virtual_calls


def check_device_rules(module: Module, diags) -> None:
    """Steps 1-4."""
    graph = CallGraph.of(module, skip_bodies=call_if_helpers(module, ON_HOST)).edges
    roots = [r for r in device_roots(module) if r in module.functions]
    check_device_code(module, roots, diags, graph)
    check_virtual_calls(module, diags, graph)
    warn_undeclared_aspects(module, diags, graph, only=set(CallGraph(graph).reachable(roots)))


class CheckDeviceCode:
    """The pass: diagnostics only; the module is not changed."""

    name = "check-device-code"

    def run(self, module: Module, am) -> PassResult:
        check_device_rules(module, am.ctx.diagnostics)
        return PassResult.ALL
