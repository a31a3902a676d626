"""The property sets of one device image (``ComputeModuleRuntimeInfo.cpp``'s job).

Order of the sets (insertion order, as upstream): ``SYCL/device requirements``
(always; keys alphabetical), ``SYCL/misc properties`` (when a key applies),
``SYCL/device globals`` (``--device-globals``, only when there is one),
``SYCL/virtual functions`` (JIT flow only).  Values are read from the image's
IR: ``!sycl_used_aspects`` / ``!sycl_declared_aspects``, ``!reqd_work_group_size``,
``!intel_reqd_sub_group_size``, ``!work_group_num_dim``, ``!sycl_fixed_targets``,
the device-global attributes and the virtual-function attributes.
"""
from __future__ import annotations

import struct

from ..passes.ir import Module
from ..passes.virtual_functions import CREATES
from .propertyset import PropertySets, byte_array, string_value, u32_array, u64_array

DEVICE_REQUIREMENTS = "SYCL/device requirements"
MISC = "SYCL/misc properties"
DEVICE_GLOBALS = "SYCL/device globals"
VIRTUAL_FUNCTIONS = "SYCL/virtual functions"


def used_aspects(module: Module, names=None) -> list[int]:
    """Union of ``!sycl_used_aspects`` and ``!sycl_declared_aspects`` over the
    functions (project decision §8.2), without upstream's internal negative values."""
    out: set[int] = set()
    for name in names if names is not None else module.functions:
        md = module.functions[name].metadata
        for kind in ("sycl_used_aspects", "sycl_declared_aspects"):
            if kind in md:
                out.update(v for v in module.metadata_ints(md[kind]) if v >= 0)
    return sorted(out)


def device_requirements(module: Module, entries: list[str], keep_wg_size: bool = True) -> dict:
    """The ``SYCL/device requirements`` values (key → int or raw bytes), keys sorted."""
    reqs: dict = {"aspects": u32_array(used_aspects(module))}
    fixed, wg, sg, dims = set(), None, None, None
    for name, fn in module.functions.items():
        md = fn.metadata
        if "sycl_fixed_targets" in md:
            fixed.update(module.metadata_ints(md["sycl_fixed_targets"]))
        if wg is None and "reqd_work_group_size" in md:
            wg = module.metadata_ints(md["reqd_work_group_size"])
        if dims is None and "work_group_num_dim" in md:
            dims = module.metadata_ints(md["work_group_num_dim"])
    for name in entries:
        md = module.functions[name].metadata
        if sg is None and "intel_reqd_sub_group_size" in md:
            sg = module.metadata_ints(md["intel_reqd_sub_group_size"])
    if fixed:
        reqs["fixed_target"] = u32_array(sorted(fixed))
    if sg:
        reqs["reqd_sub_group_size"] = sg[0]
    if wg and keep_wg_size:
        reqs["reqd_work_group_size_uint64_t"] = u64_array(wg)
    elif dims:
        reqs["work_group_num_dim"] = dims[0]
    return dict(sorted(reqs.items()))


def is_image_scope(attrs: dict) -> bool:
    """``"sycl-device-image-scope"`` present and not ``"false"`` (a bare attribute counts)."""
    return "sycl-device-image-scope" in attrs and attrs["sycl-device-image-scope"] != "false"


def device_globals(module: Module) -> dict[str, bytes]:
    """``unique id`` → ``{uint32 size, uint32 device_image_scope}`` for every device global."""
    out = {}
    for name in module.globals_with("sycl-device-global-size"):
        g = module.globals[name]
        attrs = module.global_attributes(g)
        try:
            size = int(attrs["sycl-device-global-size"])
        except (TypeError, ValueError):
            continue
        scope = is_image_scope(attrs)
        uid = attrs.get("sycl-unique-id") or name
        out[uid] = byte_array(struct.pack("<II", size, int(scope)))
    return out


def _sets(values) -> str:
    return ",".join(sorted({s for v in values if v for s in v.split(",") if s}))


def virtual_function_properties(module: Module, vf_keys: str = "design") -> dict:
    """``SYCL/virtual functions`` of an image: the set an outlined image holds,
    or the sets its kernels call and create objects of."""
    defined = {n for n, f in module.functions.items() if not f.is_declaration}
    for name, s in module.functions_with("indirectly-callable").items():
        if name in defined:
            return {"virtual-functions-set": string_value(s)}
    calls = _sets(v for n, v in module.functions_with("calls-indirectly").items() if n in defined)
    out = {}
    if vf_keys == "upstream":
        if calls:
            out["uses-virtual-functions-set"] = string_value(calls)
        return out
    creates = _sets(v for n, v in module.functions_with(CREATES).items() if n in defined)
    if calls:
        out["calls-virtual-functions-set"] = string_value(calls)
    if creates:
        out["creates-virtual-functions-set"] = string_value(creates)
    return out


def compute_properties(module: Module, entries: list[str], *, split: str = "none", with_device_globals: bool = False,
                       jit: bool = True, vf_keys: str = "design", target: str | None = None) -> PropertySets:
    props = PropertySets()
    for key, value in device_requirements(module, entries, keep_wg_size=split != "none").items():
        props.add(DEVICE_REQUIREMENTS, key, value)
    if target is not None:
        props.add(DEVICE_REQUIREMENTS, "compile_target", string_value(target))
    optlevel = module.functions_with("sycl-optlevel")
    for name in entries:
        if name in optlevel and (optlevel[name] or "").isdigit():
            props.add(MISC, "optLevel", int(optlevel[name]))
            break
    if with_device_globals:
        for uid, value in device_globals(module).items():
            props.add(DEVICE_GLOBALS, uid, value)
    if jit:
        for key, value in virtual_function_properties(module, vf_keys).items():
            props.add(VIRTUAL_FUNCTIONS, key, value)
    return props
