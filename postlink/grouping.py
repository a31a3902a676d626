"""Entry points into groups, one device image per group (upstream's
``EntryPointGroup`` and ``groupEntryPointsByScope``).

Algorithm:
  1. Each entry point gets a group key by the split mode: ``kernel``: its own
     name; ``source`` and ``auto``: upstream's per-source category
     (``group_key``), so entry points of one translation unit that agree on
     the properties an image is built for share an image; ``none``:
     ``<GLOBAL>``, followed by the optional kernel features the entry point
     needs (``feature_key``: used and declared aspects, required work-group
     and sub-group size) when it needs any.  The optional-kernel-features
     design asks for that second split "after taking into account the
     -fsycl-device-code-split command line option" whatever the option, so
     that a kernel using no optional feature never shares an image (and its
     requirements) with one that does; upstream's code skips it for ``none``.
  2. In the JIT flow every virtual function goes to the one group of its set
     (``set_key``), whatever the mode and whatever aspects the function uses:
     the design's "all functions from the same set should be bundled into a
     dedicated device image".  (Upstream's code groups them by its per-source
     category, aspects included, or per function with ``-split=kernel``.)
  3. Entry points keep module order within their group; no entry point at all
     gives one empty ``<GLOBAL>`` group (the module's globals still make an
     image).
  4. Groups come out in *descending* key order (byte order), as upstream's
     ``std::map`` walked from its end; a set's group sorts before a kernel
     group of the same key.
  5. The ``copier`` group (``Group.copier``) also holds what upstream's
     ``ModuleCopier`` keeps beyond the entry points' closure: the last
     ``-split=none`` kernel group (the one needing no optional feature, when
     there is one), or the empty ``<GLOBAL>`` group.

``-ir-output-only`` asks for no split at all: its mode ``WHOLE`` is ``none``
without the optional-features split (upstream's ``Scope_Global``).
"""
from __future__ import annotations

from typing import NamedTuple

from ..passes.ir import Module
from ..passes.support.ir_contract import (INDIRECTLY_CALLABLE, INTEL_REQD_SUB_GROUP_SIZE, REQD_WORK_GROUP_SIZE,
                                          SYCL_GRF_SIZE, SYCL_JOINT_MATRIX, SYCL_JOINT_MATRIX_MAD, SYCL_MODULE_ID,
                                          SYCL_OPTLEVEL, SYCL_REGISTER_ALLOC_MODE, SYCL_USED_ASPECTS,
                                          WORK_GROUP_NUM_DIM)

from ..passes.propagate_aspects import used_aspects

__all__ = ["GLOBAL", "WHOLE", "Group", "group_key", "feature_key", "set_key", "group_entry_points"]

#: the key of the one group of ``-split=none``
GLOBAL = "<GLOBAL>"
#: the mode of ``-ir-output-only`` (not a ``-split`` choice): one kernel image
WHOLE = "whole"


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
    if not fn.metadata:                     # (most entry points: no attachment, every part empty)
        return key + "----" + (attrs.get(SYCL_OPTLEVEL) or "") + "---"
    aspects = sorted(_md_values(module, fn, SYCL_USED_ASPECTS))
    key += "".join(f"-{a}" for a in aspects) + "-"
    for kind in (REQD_WORK_GROUP_SIZE, WORK_GROUP_NUM_DIM, INTEL_REQD_SUB_GROUP_SIZE):
        key += "".join(f"-{v}" for v in _md_values(module, fn, kind)) + "-"
    key += (attrs.get(SYCL_OPTLEVEL) or "") + "-"
    for kind in (SYCL_JOINT_MATRIX, SYCL_JOINT_MATRIX_MAD):
        ops = module.function_metadata(fn, kind) or []
        key += "".join(f"-{o[2:-1] if o.startswith(chr(33) + chr(34)) else o}" for o in ops) + "-"
    return key


def feature_key(module: Module, name: str) -> str:
    """The optional kernel features entry point ``name`` needs, as the
    optional-kernel-features design lists what keeps two kernels apart:
    its aspects (used and declared), required work-group size and required
    sub-group size.  ``""`` when it needs none."""
    fn = module.functions[name]
    aspects = used_aspects(module, [name])
    wg = _md_values(module, fn, REQD_WORK_GROUP_SIZE)
    sg = _md_values(module, fn, INTEL_REQD_SUB_GROUP_SIZE)
    if not (aspects or wg or sg):
        return ""
    return "".join(f"-{v}" for v in aspects) + "-" + "".join(f"-{v}" for v in wg) + "-" + \
        "".join(f"-{v}" for v in sg) + "-"


def set_key(module: Module, vset: str, first: str) -> str:
    """The key of virtual-function set ``vset``'s one image: the module id of
    its first function ``first`` and the set, as upstream's per-source
    category begins (so sets and kernels keep upstream's relative order)."""
    return (module.function_attributes(first).get(SYCL_MODULE_ID) or "") + "-" + vset + "-"


class Group(NamedTuple):
    """One image's entry points: ``key`` (also the image module's name),
    ``members``, ``vset`` (the virtual-function set it holds, or ``None``)
    and ``copier`` (step 5)."""
    key: str
    members: list[str]
    vset: str | None = None
    copier: bool = False


def group_entry_points(module: Module, entries: list[str], mode: str, jit: bool,
                       virtual) -> list[Group]:
    """The groups, in output order (see the module docstring); ``virtual``:
    the module's ``"indirectly-callable"`` functions."""
    groups: dict[tuple[str, str | None], list[str]] = {}
    set_keys: dict[str, str] = {}
    plain_keys: dict[tuple, str] = {}       # attribute groups → the key of an entry point without attachments
    functions = module.functions
    for name in entries:
        vset = virtual.get(name) if jit else None
        if vset is not None:
            key = set_keys.get(vset)
            if key is None:
                key = set_keys[vset] = set_key(module, vset, name)
        elif mode == "kernel":
            key = name
        elif mode in ("source", "auto"):
            fn = functions[name]
            if fn.metadata:
                key = group_key(module, name)
            else:                           # (most: the key is their attributes')
                at = tuple(fn.attribute_groups)
                key = plain_keys.get(at)
                if key is None:
                    key = plain_keys[at] = group_key(module, name)
        elif mode == WHOLE:
            key = GLOBAL
        else:
            key = GLOBAL + feature_key(module, name)
        groups.setdefault((key, vset), []).append(name)
    if not groups:
        return [Group(GLOBAL, [], None, True)]
    order = sorted(groups, key=lambda k: (k[0].encode("utf-8", "surrogateescape"), k[1] is not None),
                   reverse=True)
    out = [Group(key, groups[key, vset], vset) for key, vset in order]
    if mode in ("none", WHOLE):
        last = max((i for i, g in enumerate(out) if g.vset is None), default=None)
        if last is not None:
            out[last] = out[last]._replace(copier=True)
    return out
