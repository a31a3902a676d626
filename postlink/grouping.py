"""Entry points into groups, one device image per group (upstream's
``EntryPointGroup`` and ``groupEntryPointsByScope``).

Algorithm:
  1. Each entry point gets a group key by the split mode: ``kernel``: its own
     name; ``none``: ``<GLOBAL>``; ``source`` and ``auto``: upstream's
     per-source category (``group_key``), so entry points of one translation
     unit that agree on the properties an image is built for share an image.
  2. In the JIT flow a virtual function always gets the per-source category
     (unless the mode is ``kernel``), so each virtual-function set is outlined
     into its own image(s) whatever the mode (the seeds' design).
  3. Entry points keep module order within their group; no entry point at all
     gives one empty ``<GLOBAL>`` group (the module's globals still make an
     image).
  4. Groups come out in *descending* key order (byte order), as upstream's
     ``std::map`` walked from its end.
"""
from __future__ import annotations

from ..passes.ir import Module
from ..passes.support.ir_contract import (INDIRECTLY_CALLABLE, INTEL_REQD_SUB_GROUP_SIZE, REQD_WORK_GROUP_SIZE,
                                          SYCL_GRF_SIZE, SYCL_JOINT_MATRIX, SYCL_JOINT_MATRIX_MAD, SYCL_MODULE_ID,
                                          SYCL_OPTLEVEL, SYCL_REGISTER_ALLOC_MODE, SYCL_USED_ASPECTS,
                                          WORK_GROUP_NUM_DIM)

__all__ = ["GLOBAL", "group_key", "group_entry_points"]

#: the key of the one group of ``-split=none``
GLOBAL = "<GLOBAL>"


def _md_values(module: Module, fn, kind: str) -> list[int]:
    return module.metadata_ints(fn.metadata.get(kind))


def group_key(module: Module, name: str) -> str:
    """Upstream's per-source category of one entry point
    (``computeFuncCategoryForSplittingPerSource``): its module id,
    virtual-function set, register-allocation mode and GRF size, aspects,
    required work-group size and dimensions, required sub-group size,
    optimisation level and joint-matrix metadata, joined with dashes."""
    fn = module.functions[name]
    attrs = module.function_attributes(fn)
    parts = [attrs.get(SYCL_MODULE_ID) or "", attrs.get(INDIRECTLY_CALLABLE) or "",
             attrs.get(SYCL_REGISTER_ALLOC_MODE) or "", attrs.get(SYCL_GRF_SIZE) or ""]
    key = "".join(p + "-" for p in parts)
    aspects = sorted(_md_values(module, fn, SYCL_USED_ASPECTS))
    key += "".join(f"-{a}" for a in aspects) + "-"
    for kind in (REQD_WORK_GROUP_SIZE, WORK_GROUP_NUM_DIM, INTEL_REQD_SUB_GROUP_SIZE):
        key += "".join(f"-{v}" for v in _md_values(module, fn, kind)) + "-"
    key += (attrs.get(SYCL_OPTLEVEL) or "") + "-"
    for kind in (SYCL_JOINT_MATRIX, SYCL_JOINT_MATRIX_MAD):
        ops = module.function_metadata(fn, kind) or []
        key += "".join(f"-{o[2:-1] if o.startswith(chr(33) + chr(34)) else o}" for o in ops) + "-"
    return key


def group_entry_points(module: Module, entries: list[str], mode: str, jit: bool,
                       virtual) -> list[tuple[str, list[str]]]:
    """``(key, entry points)`` per group, in output order (see the module
    docstring); ``virtual``: the module's ``"indirectly-callable"`` functions."""
    groups: dict[str, list[str]] = {}
    for name in entries:
        if name in virtual and jit and mode != "kernel":
            key = group_key(module, name)
        elif mode == "kernel":
            key = name
        elif mode in ("source", "auto"):
            key = group_key(module, name)
        else:
            key = GLOBAL
        groups.setdefault(key, []).append(name)
    if not groups:
        groups[GLOBAL] = []
    return [(key, groups[key]) for key in sorted(groups, key=lambda k: k.encode("utf-8", "surrogateescape"), reverse=True)]
