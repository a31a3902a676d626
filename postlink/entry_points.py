"""Which functions are the entry points of the device images (upstream's
``isEntryPoint`` in ``ModuleSplitter.cpp``).

Algorithm, in module order over the defined functions:
  * a kernel is an entry point;
  * a SYCL_EXTERNAL function (it carries ``"sycl-module-id"``) is one unless
    only kernels are asked for (``-emit-only-kernels-as-entry-points``) or it
    is a SPIR-V/SYCL builtin (``passes.split_if_device.SYCL_BUILTIN``);
  * a virtual function (``"indirectly-callable"``) is one in the JIT flow,
    whatever else it is, and never in the AOT flow: there it is only reached
    through the vtables of the images that use it.
"""
from __future__ import annotations

from ..passes.ir import Module
from ..passes.split_if_device import SYCL_BUILTIN

__all__ = ["entry_points"]


def entry_points(module: Module, only_kernels: bool = False, jit: bool = True) -> list[str]:
    """The entry points of ``module`` (see the module docstring), in module order."""
    virtual = module.functions_with("indirectly-callable")
    external = module.functions_with("sycl-module-id")
    out = []
    for name, fn in module.functions.items():
        if fn.is_declaration:
            continue
        if name in virtual:
            if jit:
                out.append(name)
        elif fn.is_kernel or (not only_kernels and name in external and not SYCL_BUILTIN.match(name)):
            out.append(name)
    return out
