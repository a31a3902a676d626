"""Virtual-function outlining in the JIT flow (the design's virtual-function
images, ``docs/formats.md``, "Post-link decisions").

Algorithm:
  1. Kernels are annotated first with the sets they create objects of
     (``"minisycl-creates-virtual-functions"``, read by the properties): as
     ``analyze-virtual-functions`` records them, on a copy of the module when
     an annotation is missing or stale, so the input is never edited.  (After
     the build's pipeline they are all there already and nothing is copied.)
  2. Virtual functions are entry points of their own per-set images
     (``entry_points``, ``grouping``).  In every other image a virtual
     function is opaque: kept as a declaration where something refers to it,
     its body never copied and what only it reaches not either.
  3. An image whose entry points are virtual functions gives them external
     linkage, as the other images link against them.
  The AOT flow does none of this: images are self-contained (``aot_filter``).
"""
from __future__ import annotations

from ..passes.ir import DifferenceView, Module
from ..passes.support.ir_contract import CREATES_VIRTUAL_FUNCTIONS
from ..passes.virtual_functions import created_sets

__all__ = ["with_created_sets", "outlined_elsewhere", "holds_virtual_functions", "export_virtual_functions"]


def with_created_sets(module: Module) -> Module:
    """``module`` when every kernel carries its created sets as
    ``analyze-virtual-functions`` records them; otherwise a copy where they
    do (step 1)."""
    stale = {}
    for kernel, sets in created_sets(module).items():
        value = ",".join(sets)
        if module.function_attributes(kernel).get(CREATES_VIRTUAL_FUNCTIONS) != value:
            stale[kernel] = value
    if not stale:
        return module
    annotated = module.copy()
    for kernel, value in stale.items():
        annotated.update_function_attributes(kernel, add={CREATES_VIRTUAL_FUNCTIONS: value})
    return annotated


def outlined_elsewhere(virtual, members: list[str], jit: bool):
    """The virtual functions that stay declarations in the image of
    ``members`` (step 2): all but its own in the JIT flow, none in the AOT flow."""
    return DifferenceView(virtual, members) if jit else ()


def holds_virtual_functions(members: list[str], virtual, jit: bool) -> bool:
    """Whether the image of ``members`` is a virtual-function image (JIT flow)."""
    return jit and any(n in virtual for n in members)


def export_virtual_functions(part: Module, members: list[str], virtual) -> None:
    """Step 3 on one image's module."""
    for n in members:
        if n in virtual and part.functions[n].linkage != "external":
            part.set_linkage(n, "external")
