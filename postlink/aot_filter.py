"""The AOT flow's filtering for one target's device config (``minisycl build
--target``; upstream's ``isTargetCompatibleWithModule``).

Algorithm:
  1. Before the split (``emptied_virtual_functions``): the virtual functions
     of every set whose functions use aspects the target lacks have their
     bodies emptied in every image (there are no separate virtual-function
     images in the AOT flow, so this is what keeps such a set from making
     its users incompatible).
  2. After the split (``target_compatible``): an image whose IR uses an aspect
     the target does not list, or that requires a sub-group size the target
     does not list, is left out.
  ``minisycl post-link -o TARGET,FILE`` runs this flow for each target with a
  device config when the module has virtual functions (``aot_tables``): its
  tables get images of their own, split for that target.  Without virtual
  functions the two flows give the same images, so every table shares one
  split, named after the first table, as upstream's
  ``multiple-filtered-outputs.ll`` test has it (step 2 per table).
"""
from __future__ import annotations

from ..device_configs.targets import TargetInfo
from ..passes.ir import Module
from ..passes.propagate_aspects import aspect_table
from .image import Image
from ..passes.propagate_aspects import used_aspects
from ..passes.support.ir_contract import DEVICE_REQUIREMENTS, INDIRECTLY_CALLABLE, REQD_SUB_GROUP_SIZE_KEY

__all__ = ["emptied_virtual_functions", "target_compatible", "aot_tables"]


def _set_aspect_names(module: Module, names_of: dict[int, str]) -> dict[str, set[str]]:
    """Virtual-function set → names of the aspects its functions use (the union)."""
    out: dict[str, set[str]] = {}
    for name, s in module.functions_with(INDIRECTLY_CALLABLE).items():
        if not module.functions[name].is_declaration:
            out.setdefault(s, set()).update(names_of.get(a, str(a)) for a in used_aspects(module, [name]))
    return out


def emptied_virtual_functions(module: Module, target: TargetInfo, virtual) -> set[str]:
    """Step 1: the defined virtual functions to empty for ``target``;
    ``virtual``: the module's ``"indirectly-callable"`` functions."""
    names_of = {v: k for k, v in aspect_table(module).items()}
    emptied: set[str] = set()
    for s, needed in _set_aspect_names(module, names_of).items():
        if not target.supports(needed):
            emptied.update(n for n, v in virtual.items() if v == s and not module.functions[n].is_declaration)
    return emptied


def target_compatible(image: Image, target: TargetInfo) -> bool:
    """Step 2: whether ``target`` keeps ``image``.  Upstream's
    ``isTargetCompatibleWithModule``: the image is left out when its IR uses an
    aspect whose name the target does not list (``may_support_other_aspects``
    is not consulted), or when it requires a sub-group size the target does
    not list.  Aspect names come from the image's ``!sycl_aspects``, so a dummy
    image (bodies emptied, their aspect metadata gone) fits targets that lack
    the set's aspects.  A target missing from the device configs is handled by
    the caller: upstream keeps every image for it (its ``TargetTable`` lookup
    fails and it returns true)."""
    names_of = {v: k for k, v in aspect_table(image.module).items()}
    needed = {names_of.get(a, str(a)) for a in used_aspects(image.module)}
    if not target.supports(needed):
        return False
    sg = image.properties.get(DEVICE_REQUIREMENTS, REQD_SUB_GROUP_SIZE_KEY)
    return sg is None or sg in target.sub_group_sizes


def aot_tables(module: Module, tables: list) -> tuple[list, dict]:
    """``post-link``'s ``-o [TARGET,]FILE`` tables (``TableSpec``) by flow:
    (the tables that share the JIT split, {target name: (its device config,
    its tables)} for the AOT flow).  A table is in the AOT flow when it names
    a target that has a device config and ``module`` defines virtual
    functions (``"indirectly-callable"``); otherwise the flows agree and it
    shares the JIT split (a target without a device config keeps every image,
    as upstream)."""
    virtual = any(not module.functions[n].is_declaration for n in module.functions_with(INDIRECTLY_CALLABLE))
    shared, aot = [], {}
    for spec in tables:
        if virtual and spec.config is not None:
            aot.setdefault(spec.config.name, (spec.config, []))[1].append(spec)
        else:
            shared.append(spec)
    return shared, aot
