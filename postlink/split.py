"""Device code split and virtual-function outlining (``ModuleSplitter.cpp`` and
``sycl-post-link.cpp``'s image loop; ``../shared/reference/postlink-formats.md`` §3-4).

Algorithm:
  0. Before the split, as upstream's ``processInputModule``: ``@llvm.used`` is
     dropped (``removeSYCLKernelsConstRefArray``), and device globals leave
     ``@llvm.compiler.used``; one that nothing else uses is dropped with them
     (``removeDeviceGlobalFromCompilerUsed``).
  1. Entry points, in module order: kernels; unless only kernels are asked for,
     SYCL_EXTERNAL functions (``"sycl-module-id"``, builtins excepted); in the
     JIT flow, every ``"indirectly-callable"`` function.
  2. Each entry point gets a group key: its name (``kernel``), ``<GLOBAL>``
     (``none``), or upstream's per-source category (``source``/``auto``:
     module id, virtual-function set, aspects, work-group and sub-group sizes...).
     In the JIT flow a virtual function always gets the per-source category, so
     each set is outlined into its own image(s) whatever the mode (the seeds'
     design).  Images come out in *descending* key order, as upstream's.
  3. What an image holds (upstream's dependency graph, then its clean-up):
     its entry points, what is left of ``@llvm.compiler.used``, and everything
     they reach through references (copied into each image that needs it),
     where a function making an indirect call also reaches every
     ``"referenced-indirectly"`` function of the call's function type
     (``passes/ir``: ``indirect_call_types``).  With ``none`` the image is the module as
     upstream's ``ModuleCopier`` keeps it after Internalize and GlobalDCE:
     also every global variable that is not discardable (so a module without
     entry points still gives its globals), every ``"referenced-indirectly"``
     function, and what they reach.  Virtual functions of other images stay
     declarations; set images give their virtual functions external linkage.
     A set image that uses aspects is followed by its dummy: the same image
     with the virtual functions' bodies emptied.
  4. Internalize (upstream's ``ModuleDesc::cleanup``): in each image, a defined
     function that is not one of its entry points and is neither
     ``"indirectly-callable"`` nor ``"referenced-indirectly"`` becomes
     ``internal`` (visibility reset, a comdat of its own dropped).  So a
     SYCL_EXTERNAL function is external only in the image where it is an
     entry point.  Globals keep their linkage.
  5. AOT flow (a target; ``minisycl build --target``): no outlining and no
     dummies; every image is self-contained, and the virtual functions of sets
     whose aspects the target lacks are emptied everywhere.  Images needing
     aspects (or a sub-group size) the target lacks are left out.  (``minisycl
     post-link -o TARGET,FILE`` splits once as upstream does and only filters
     the table: ``target_compatible``.)
  6. A ``device_image_scope`` variable in two images is upstream's error.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..frontend.diagnostics import UserError
from ..passes.ir import DISCARDABLE_LINKAGES, Excluding, Module, function_type, indirect_call_types
from ..passes.split_if_device import SYCL_BUILTIN
from ..passes.propagate_aspects import aspect_table
from ..passes.virtual_functions import analyze
from .device_config import TargetInfo
from .properties import compute_properties, is_image_scope, used_aspects
from .propertyset import PropertySets

__all__ = ["Image", "SplitError", "split_module", "entry_points", "group_key", "target_compatible", "SPLIT_MODES"]

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
    dgs = set(module.globals_with("sycl-device-global-size"))
    dead, used = _trim_compiler_used(module, dgs)
    by_type = _indirect_callees(module)
    # what upstream's Internalize keeps (and so GlobalDCE too), besides the entry points
    preserved = set(module.functions_with("referenced-indirectly")) | set(virtual)
    copier_roots = [n for n, g in module.globals.items()
                    if g.linkage not in DISCARDABLE_LINKAGES and n not in ("llvm.used", "llvm.compiler.used") and n not in dead]
    # (in the JIT flow the virtual functions live in their set images: declared
    # here only where something refers to them, as StripDeadPrototypes leaves it)
    # (one of discardable linkage is kept by Internalize as it is, then deleted
    # by GlobalDCE when nothing uses it: no root)
    copier_roots += [n for n in module.functions if n in preserved and not module.functions[n].is_declaration
                     and not (jit and n in virtual) and module.functions[n].linkage not in DISCARDABLE_LINKAGES]
    images: list[Image] = []
    for key in sorted(groups, key=lambda k: k.encode("utf-8", "surrogateescape"), reverse=True):
        members = groups[key]
        outlined = Excluding(virtual, members) if jit else ()
        roots = members + used + (copier_roots if key == "<GLOBAL>" else [])
        names = _closure(module, roots, outlined, by_type)
        part = module.extract(names + (["llvm.compiler.used"] if used else []), declare=outlined, stub=stub,
                              name=key)
        part.filter_used_lists(Excluding(part.globals.keys() | part.functions.keys(), dgs))
        holds_vfs = jit and any(n in virtual for n in members)
        if holds_vfs:
            for n in members:
                if n in virtual and part.functions[n].linkage != "external":
                    part.set_linkage(n, "external")
        internalize(part, _Either(members, preserved))
        props = compute_properties(part, members, split=mode, with_device_globals=device_globals, jit=jit,
                                   vf_keys=vf_keys, target=target.name if target else None)
        images.append(Image(part, members, key, props))
        if holds_vfs and used_aspects(part):
            images.append(_dummy(part, members, key, props, virtual))
    if device_globals and len(images) > 1:
        _check_image_scope(module, images)
    if target is not None:
        images = [im for im in images if target_compatible(im, target)]
    return images


def _trim_compiler_used(module: Module, dgs: set[str]) -> tuple[set[str], list[str]]:
    """Upstream's ``removeDeviceGlobalFromCompilerUsed``: device globals leave
    ``@llvm.compiler.used``, and the ones nothing else uses go (``@llvm.used``,
    which upstream erases first, does not count as a use).  Returns (the device
    globals dropped, the members that stay)."""
    used = module.globals.get("llvm.compiler.used")
    if used is None:
        return set(), []
    users = module.users()
    dead = {r for r in used.refs() if r in dgs and not users.get(r, set()) - {"llvm.used", "llvm.compiler.used"}}
    return dead, [r for r in used.refs() if r not in dgs]


def _indirect_callees(module: Module) -> dict[str, list[str]]:
    """Function type → the defined ``"referenced-indirectly"`` functions of that
    type (kernels excepted: they cannot be called), the candidates of an
    indirect call in upstream's dependency graph."""
    out: dict[str, list[str]] = {}
    for name in module.functions_with("referenced-indirectly"):
        fn = module.functions[name]
        if not fn.is_declaration and not fn.is_kernel:
            out.setdefault(function_type(fn), []).append(name)
    return out


def _closure(module: Module, roots: list[str], opaque, by_type: dict[str, list[str]]) -> list[str]:
    """``Module.closure`` plus upstream's indirect-call edges: a function that
    makes an indirect call reaches every candidate of the call's type.

    Then upstream's clean-up: Internalize leaves a ``"referenced-indirectly"``
    function as it is, so GlobalDCE deletes one of discardable linkage
    (``internal``, ``linkonce_odr``, ...) that nothing live uses, with what
    only it reached; the non-discardable ones the closure took in stay, as
    roots of their own."""
    names = module.closure(roots, opaque=opaque)
    if not by_type:
        return names
    seen, looked, joined = set(names), set(), []
    while True:
        extra = []
        for n in names:
            fn = module.functions.get(n)
            if n in looked or fn is None or fn.is_declaration or n in opaque:
                continue
            looked.add(n)
            for sig in sorted(indirect_call_types(fn.body or "")):
                extra.extend(c for c in by_type.get(sig, ()) if c not in seen and c not in extra)
        if not extra:
            break
        joined += extra
        more = [n for n in module.closure(extra, opaque=opaque) if n not in seen]
        seen.update(more)
        names = names + more
    if all(module.functions[c].linkage not in DISCARDABLE_LINKAGES for c in joined):
        return names
    preserved = module.functions_with("referenced-indirectly")
    kept = [n for n in names if n in preserved and n not in opaque and not module.functions[n].is_declaration
            and module.functions[n].linkage not in DISCARDABLE_LINKAGES]
    return module.closure(list(roots) + kept, opaque=opaque)


class _Either:
    """Names in either of two collections, without building their union per image."""

    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = set(a), b

    def __contains__(self, name) -> bool:
        return name in self.a or name in self.b


_INTERNALIZABLE = frozenset(("external", "weak", "weak_odr", "linkonce", "linkonce_odr"))

def internalize(part: Module, keep: set[str]) -> list[str]:
    """Upstream's Internalize step of ``ModuleDesc::cleanup`` on one image: every
    defined function not in ``keep`` with an external-ish linkage (``external``,
    ``weak``, ``weak_odr``, ``linkonce``, ``linkonce_odr``; not
    ``available_externally`` nor ``dllexport``) becomes ``internal`` with default
    visibility.  A comdat that only this function uses is dropped; one shared
    with an entity that stays external keeps its members external, as LLVM's
    pass does.  Returns the internalized names."""
    comdat_of = {}
    for name, ent in list(part.functions.items()) + list(part.globals.items()) if part.comdats else ():
        if ent.is_declaration:
            continue
        key = ent.comdat()
        if key is not None:
            comdat_of[name] = key

    def stays_external(name):
        fn = part.functions.get(name)
        return fn is None or name in keep or fn.linkage not in _INTERNALIZABLE or " dllexport " in fn.header
    external_comdats = {k for n, k in comdat_of.items() if stays_external(n)}
    done = []
    for name, fn in list(part.functions.items()):
        if fn.is_declaration or stays_external(name) or comdat_of.get(name) in external_comdats:
            continue
        key = comdat_of.get(name)
        alone = key is not None and sum(1 for k in comdat_of.values() if k == key) == 1
        part.make_internal(name, drop_comdat=alone)
        if alone:
            part.comdats.pop(key, None)
        done.append(name)
    return done


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


def target_compatible(image: Image, target: TargetInfo) -> bool:
    """Upstream's ``isTargetCompatibleWithModule``: the image is left out for
    ``target`` when its IR uses an aspect whose name the target does not list
    (``may_support_other_aspects`` is not consulted), or when it requires a
    sub-group size the target does not list.  Aspect names come from the
    image's ``!sycl_aspects``, so a dummy image (bodies emptied, their aspect
    metadata gone) fits targets that lack the set's aspects.  A target missing
    from the device configs is handled by the caller: upstream keeps every
    image for it (its ``TargetTable`` lookup fails and it returns true)."""
    names_of = {v: k for k, v in aspect_table(image.module).items()}
    needed = {names_of.get(a, str(a)) for a in used_aspects(image.module)}
    if not target.supports(needed):
        return False
    sg = image.properties.get("SYCL/device requirements", "reqd_sub_group_size")
    return sg is None or sg in target.sub_group_sizes
