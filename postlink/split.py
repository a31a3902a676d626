"""Device code split and virtual-function outlining (``ModuleSplitter.cpp`` and
``sycl-post-link.cpp``'s image loop; ``../shared/reference/postlink-formats.md`` §3-4).

Algorithm:
  1. Entry points, in module order: kernels; unless only kernels are asked for,
     SYCL_EXTERNAL functions (``"sycl-module-id"``, builtins excepted); in the
     JIT flow, every ``"indirectly-callable"`` function.
  2. Each entry point gets a group key: its name (``kernel``), ``<GLOBAL>``
     (``none``), or upstream's per-source category (``source``/``auto``:
     module id, virtual-function set, aspects, work-group and sub-group sizes...).
     In the JIT flow a virtual function always gets the per-source category, so
     each set is outlined into its own image(s) whatever the mode (the seeds'
     design).  Images come out in *descending* key order, as upstream's.
  3. An image is its entry points plus everything they reach (copied into each
     image that needs it).  Virtual functions of other images stay declarations.
     Set images give their virtual functions external linkage.  A set image
     that uses aspects is followed by its dummy: the same image with the
     virtual functions' bodies emptied.
  4. AOT flow (a target): no outlining and no dummies; every image is
     self-contained, and the virtual functions of sets whose aspects the target
     lacks are emptied everywhere.  Images needing aspects (or a sub-group size)
     the target lacks are left out.
  5. Clean-up: device globals leave ``@llvm.compiler.used`` (dropped when
     empty); unused ones are not copied.  A ``device_image_scope`` variable in
     two images is upstream's error.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..frontend.diagnostics import UserError
from ..passes.ir import USED_LISTS, Excluding, Module
from ..passes.split_if_device import SYCL_BUILTIN
from ..passes.propagate_aspects import aspect_table
from ..passes.virtual_functions import analyze
from .device_config import TargetInfo
from .properties import compute_properties, is_image_scope, used_aspects
from .propertyset import PropertySets

__all__ = ["Image", "SplitError", "split_module", "entry_points", "group_key", "SPLIT_MODES"]

SPLIT_MODES = ("kernel", "source", "auto", "none")


class SplitError(UserError):
    """An input the post-link step refuses (upstream's errors)."""


@dataclass
class Image:
    module: Module
    entry_points: list[str]
    key: str
    properties: PropertySets = field(default_factory=PropertySets)
    dummy: bool = False


def entry_points(module: Module, only_kernels: bool = False, jit: bool = True) -> list[str]:
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


def _md_values(module: Module, fn, kind: str) -> list[int]:
    return module.metadata_ints(fn.metadata.get(kind))


def group_key(module: Module, name: str) -> str:
    """Upstream's per-source category of one entry point (``computeFuncCategoryForSplittingPerSource``)."""
    fn = module.functions[name]
    attrs = module.function_attributes(fn)
    parts = [attrs.get("sycl-module-id") or "", attrs.get("indirectly-callable") or "",
             attrs.get("sycl-register-alloc-mode") or "", attrs.get("sycl-grf-size") or ""]
    key = "".join(p + "-" for p in parts)
    aspects = sorted(_md_values(module, fn, "sycl_used_aspects"))
    key += "".join(f"-{a}" for a in aspects) + "-"
    for kind in ("reqd_work_group_size", "work_group_num_dim", "intel_reqd_sub_group_size"):
        key += "".join(f"-{v}" for v in _md_values(module, fn, kind)) + "-"
    key += (attrs.get("sycl-optlevel") or "") + "-"
    for kind in ("sycl_joint_matrix", "sycl_joint_matrix_mad"):
        ops = module.function_metadata(fn, kind) or []
        key += "".join(f"-{o[2:-1] if o.startswith(chr(33) + chr(34)) else o}" for o in ops) + "-"
    return key


def _set_aspect_names(module: Module, names_of: dict[int, str]) -> dict[str, set[str]]:
    """Virtual-function set → names of the aspects its functions use (the union)."""
    out: dict[str, set[str]] = {}
    for name, s in module.functions_with("indirectly-callable").items():
        if not module.functions[name].is_declaration:
            out.setdefault(s, set()).update(names_of.get(a, str(a)) for a in used_aspects(module, [name]))
    return out


def split_module(module: Module, *, mode: str = "none", only_kernels: bool = False, device_globals: bool = False,
                 target: TargetInfo | None = None, vf_keys: str = "design") -> list[Image]:
    """The device images of ``module`` (see the module docstring), in output order."""
    if mode not in SPLIT_MODES:
        raise SplitError(f"unknown split mode '{mode}' (expected one of: {', '.join(SPLIT_MODES)})")
    jit = target is None
    analyze(module)                       # records the sets kernels create objects of
    virtual = module.functions_with("indirectly-callable")
    table = aspect_table(module)
    names_of = {v: k for k, v in table.items()}
    stub: set[str] = set()
    if not jit:
        for s, needed in _set_aspect_names(module, names_of).items():
            if not target.supports(needed):
                stub.update(n for n, v in virtual.items() if v == s and not module.functions[n].is_declaration)
    entries = entry_points(module, only_kernels, jit)
    groups: dict[str, list[str]] = {}
    for name in entries:
        if name in virtual and jit and mode != "kernel":
            key = group_key(module, name)
        elif mode == "kernel":
            key = name
        elif mode in ("source", "auto"):
            key = group_key(module, name)
        else:
            key = "<GLOBAL>"
        groups.setdefault(key, []).append(name)
    if not groups:
        groups["<GLOBAL>"] = []
    used = [g for g in USED_LISTS if g in module.globals]
    dgs = set(module.globals_with("sycl-device-global-size"))
    images: list[Image] = []
    for key in sorted(groups, key=lambda k: k.encode(), reverse=True):
        members = groups[key]
        outlined = Excluding(virtual, members) if jit else ()
        names = module.closure(members, opaque=outlined)
        part = module.extract(names + used, declare=outlined, stub=stub, name=key)
        part.filter_used_lists(Excluding(part.globals.keys() | part.functions.keys(), dgs))
        holds_vfs = jit and any(n in virtual for n in members)
        if holds_vfs:
            for n in members:
                if n in virtual and part.functions[n].linkage != "external":
                    part.set_linkage(n, "external")
        props = compute_properties(part, members, split=mode, with_device_globals=device_globals, jit=jit,
                                   vf_keys=vf_keys, target=target.name if target else None)
        images.append(Image(part, members, key, props))
        if holds_vfs and used_aspects(part):
            images.append(_dummy(part, members, key, props, virtual))
    if device_globals and len(images) > 1:
        _check_image_scope(module, images)
    if target is not None:
        images = [im for im in images if _compatible(im, target, names_of)]
    return images


def _dummy(part: Module, members, key, props: PropertySets, virtual) -> Image:
    dummy = part.extract([n for n in part.functions if not part.functions[n].is_declaration] + list(part.globals),
                         stub=[n for n in members if n in virtual], name=key + ".dummy")
    dprops = PropertySets()
    for set_name, entries in props.sets.items():
        for k, (_, v) in entries.items():
            dprops.add(set_name, k, v)
    dprops.add("SYCL/virtual functions", "dummy-image", 1)
    return Image(dummy, list(members), key, dprops, dummy=True)


def _check_image_scope(module: Module, images: list[Image]) -> None:
    seen: dict[str, int] = {}
    for im in images:
        if im.dummy:
            continue
        for name in im.module.globals_with("sycl-device-global-size"):
            g = im.module.globals[name]
            attrs = im.module.global_attributes(g)
            if g.is_declaration or not is_image_scope(attrs):
                continue
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:
                raise SplitError(f"device_global variable '{name}' with property \"device_image_scope\" "
                                 f"is used in more than one device image.")


def _compatible(image: Image, target: TargetInfo, names_of: dict[int, str]) -> bool:
    needed = {names_of.get(a, str(a)) for a in used_aspects(image.module)}
    if not target.supports(needed):
        return False
    sg = image.properties.get("SYCL/device requirements", "reqd_sub_group_size")
    return sg is None or not target.sub_group_sizes or sg in target.sub_group_sizes
