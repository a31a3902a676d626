"""Which functions are SYCL entry points: the one definition the passes and the
post-link step share.

An entry point is a defined function that device code starts from:

* a kernel (``spir_kernel``);
* a ``SYCL_EXTERNAL`` function (``"sycl-module-id"``), except the SPIR-V, SYCL
  and ESIMD builtins (``SYCL_BUILTIN``), which carry the attribute but are the
  device library, not the user's entry points;
* an ``"indirectly-callable"`` function (a virtual function of a set), as each
  caller asks (``virtual_functions``):

  - ``"include"``: always (the device half of ``split-if-device``; JIT images,
    where virtual functions are reached through vtables, not calls);
  - ``"exclude"``: never, even a kernel or ``SYCL_EXTERNAL`` one (AOT images:
    the post-link step outlines virtual functions to images of their own);
  - ``"ignore"``: the attribute does not count; the function is one where it is
    a kernel or ``SYCL_EXTERNAL`` (upstream's ``propagate-aspects``).

``kernels_only`` drops the ``SYCL_EXTERNAL`` ones (post-link's
``-emit-only-kernels-as-entry-points``).  Order: module order.
"""
from __future__ import annotations

import re

from .ir import Module
from .support.ir_contract import INDIRECTLY_CALLABLE, SYCL_MODULE_ID

__all__ = ["SYCL_BUILTIN", "VIRTUAL_FUNCTIONS", "entry_points"]

#: SPIR-V/SYCL/ESIMD builtins carry "sycl-module-id" but are not SYCL_EXTERNAL
#: entry points: upstream's isSpirvSyclBuiltin/isESIMDBuiltin take "_Z", then
#: any number of digits (none too), then "__spirv_", "__sycl_" or "__esimd_";
#: isGenericBuiltin takes "__builtin_" (tests/postlink/test_differential.py)
SYCL_BUILTIN = re.compile(r'_Z\d*__(?:spirv|sycl|esimd)_|__builtin_')

VIRTUAL_FUNCTIONS = ("include", "exclude", "ignore")


def entry_points(module: Module, *, kernels_only: bool = False, virtual_functions: str = "include") -> list[str]:
    """The entry points of ``module`` (see the module docstring), in module order."""
    if virtual_functions not in VIRTUAL_FUNCTIONS:
        raise ValueError(f"virtual_functions: expected one of {', '.join(VIRTUAL_FUNCTIONS)}, "
                         f"got {virtual_functions!r}")
    virtual = module.functions_with(INDIRECTLY_CALLABLE) if virtual_functions != "ignore" else {}
    external = module.functions_with(SYCL_MODULE_ID)
    out = []
    for name, fn in module.functions.items():
        if fn.body is None:
            continue
        if name in virtual:
            if virtual_functions == "include":
                out.append(name)
        elif fn.is_kernel or (not kernels_only and name in external and not SYCL_BUILTIN.match(name)):
            out.append(name)
    return out
