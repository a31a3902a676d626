"""The property sets of one device image (``ComputeModuleRuntimeInfo.cpp``'s job).

Order of the sets (insertion order, as upstream): ``SYCL/device requirements``
(always; keys alphabetical), ``SYCL/misc properties`` (when a key applies),
``SYCL/device globals`` (``--device-globals``, only when there is one),
``SYCL/virtual functions`` (JIT flow only).  Values are read from the image's
IR: ``!sycl_used_aspects`` / ``!sycl_declared_aspects``, ``!reqd_work_group_size``,
``!intel_reqd_sub_group_size``, ``!work_group_num_dim``, ``!sycl_fixed_targets``,
the device-global attributes and the virtual-function attributes.

``optional_sets`` adds the sets upstream writes on request (``-emit-param-info``,
``-emit-exported-symbols``, ``-emit-kernel-names``, ``-emit-imported-symbols``,
``-emit-program-metadata``) and ``SYCL/devicelib req mask``, and
``in_upstream_order`` puts all sets in upstream's order (``SET_ORDER``).  The
mask: the SYCLLowerIR copy of upstream writes it for every image, the newest
copy never; we write it when it is not zero, so an image that uses a device
library says which (upstream's ``mask.ll``) and the others stay as they were.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from ..passes.ir import Module, split_operands
from ..passes.ir.lexer import string_bytes
from ..passes.propagate_aspects import used_aspects
from ..passes.support.numbers import parse_int
from .image import SplitError
from .propertyset import PropertySets, byte_array, string_value, u32_array, u64_array
from ..passes.support.ir_contract import (ASSERT_USED, CALLS_INDIRECTLY, CALLS_VF_SET_KEY, CREATES_VF_SET_KEY,
                                          CREATES_VIRTUAL_FUNCTIONS, DEVICELIB_REQ_MASK, DEVICE_GLOBALS,
                                          DEVICE_GLOBAL_SIZE, DEVICE_IMAGE_SCOPE, DEVICE_REQUIREMENTS,
                                          EXPORTED_SYMBOLS, FIXED_TARGET_KEY, HOST_PIPES, IMPLICIT_LOCAL_ARG,
                                          IMPORTED_SYMBOLS, JOINT_MATRIX_KEY, JOINT_MATRIX_MAD_KEY,
                                          INDIRECTLY_CALLABLE, INTEL_REQD_SUB_GROUP_SIZE, KERNEL_NAMES,
                                          KERNEL_PARAM_OPT, MAX_WORK_GROUP_SIZE, MISC_PROPERTIES, PROGRAM_METADATA,
                                          REFERENCED_INDIRECTLY, REGISTERED_KERNELS, REQD_SUB_GROUP_SIZE_KEY,
                                          REQD_WG_SIZE_U64_KEY, REQD_WORK_GROUP_SIZE,
                                          SPEC_CONSTANTS, SPEC_CONSTANTS_DEFAULTS, SYCL_FIXED_TARGETS, SYCL_JOINT_MATRIX,
                                          SYCL_JOINT_MATRIX_MAD,
                                          SPIR_KERNEL_OMIT_ARGS, SYCL_KERNEL_OMIT_ARGS, SYCL_OPTLEVEL, UNIQUE_ID,
                                          USES_VF_SET_KEY, VF_SET_KEY, VIRTUAL_FUNCTIONS, WORK_GROUP_NUM_DIM)

#: the device library function a failed ``assert`` calls
ASSERT_FAIL = "__devicelib_assert_fail"


def device_requirements(module: Module, entries: list[str], keep_wg_size: bool = True) -> dict:
    """The ``SYCL/device requirements`` values (key → int or raw bytes), keys sorted."""
    attached = [fn for fn in module.functions.values() if fn.metadata]    # one look at each function
    reqs: dict = {"aspects": u32_array(used_aspects(module, [fn.name for fn in attached]))}
    fixed, wg, sg, dims = set(), None, None, None
    for fn in attached:                     # (most functions have no attachment)
        md = fn.metadata
        if SYCL_FIXED_TARGETS in md:
            fixed.update(module.metadata_ints(md[SYCL_FIXED_TARGETS]))
        if wg is None and REQD_WORK_GROUP_SIZE in md:
            wg = module.metadata_ints(md[REQD_WORK_GROUP_SIZE])
        if dims is None and WORK_GROUP_NUM_DIM in md:
            dims = module.metadata_ints(md[WORK_GROUP_NUM_DIM])
    for name in entries:
        md = module.functions[name].metadata
        if sg is None and INTEL_REQD_SUB_GROUP_SIZE in md:
            sg = module.metadata_ints(md[INTEL_REQD_SUB_GROUP_SIZE])
    if fixed:
        reqs[FIXED_TARGET_KEY] = u32_array(sorted(fixed))
    reqs.update(joint_matrix_requirements(module, attached))
    if sg:
        reqs[REQD_SUB_GROUP_SIZE_KEY] = sg[0]
    if wg and keep_wg_size:
        reqs[REQD_WG_SIZE_U64_KEY] = u64_array(wg)
    elif dims:
        reqs[WORK_GROUP_NUM_DIM] = dims[0]
    return dict(sorted(reqs.items()))


#: joint-matrix metadata -> its [SYCL/device requirements] key
JOINT_MATRIX_KEYS = ((SYCL_JOINT_MATRIX, JOINT_MATRIX_KEY), (SYCL_JOINT_MATRIX_MAD, JOINT_MATRIX_MAD_KEY))


def joint_matrix_requirements(module: Module, attached: list | None = None) -> dict[str, bytes]:
    """``joint_matrix`` / ``joint_matrix_mad``: the string operand of
    ``!sycl_joint_matrix`` / ``!sycl_joint_matrix_mad`` as upstream's
    ``computeDeviceRequirements`` takes it: over every function of the image in
    module order, the last non-empty one (the split puts kernels with other
    strings in other images); a byte-array string.  ``attached``: the
    functions with attachments, in module order, when the caller has them."""
    out = {}
    if attached is None:
        attached = [fn for fn in module.functions.values() if fn.metadata]    # one look at each function
    for kind, key in JOINT_MATRIX_KEYS:
        value = b""
        for fn in attached:
            if kind in fn.metadata:
                ops = module.function_metadata(fn, kind) or []
                text = string_bytes(ops[0][1:]) if ops and ops[0].startswith('!"') else b""
                value = text or value
        if value:
            out[key] = byte_array(value)
    return out


def is_image_scope(attrs: dict) -> bool:
    """``"sycl-device-image-scope"`` present and not ``"false"`` (a bare attribute counts)."""
    return DEVICE_IMAGE_SCOPE in attrs and attrs[DEVICE_IMAGE_SCOPE] != "false"


def device_global_size(name: str, attrs: dict) -> int:
    """The ``"sycl-device-global-size"`` of device global ``name``: a uint32 in
    ``[SYCL/device globals]``, so anything else (negative, too large, not a
    number, of any length) is refused here, the one place that reads it."""
    text = attrs.get(DEVICE_GLOBAL_SIZE)
    size = parse_int(text, 10, 32) if isinstance(text, str) else None
    if size is None:
        raise SplitError(f"device global '{name}': \"{DEVICE_GLOBAL_SIZE}\"=\"{str(text)[:40]}\" "
                         f"is not a size (a decimal uint32)")
    return size


def device_globals(module: Module) -> dict[str, bytes]:
    """``unique id`` → ``{uint32 size, uint32 device_image_scope}`` for every device global."""
    out = {}
    for name in module.globals_with(DEVICE_GLOBAL_SIZE):
        g = module.globals[name]
        attrs = module.global_attributes(g)
        size = device_global_size(name, attrs)
        scope = is_image_scope(attrs)
        uid = attrs.get(UNIQUE_ID) or name
        out[uid] = byte_array(struct.pack("<II", size, int(scope)))
    return out


def _sets(values) -> str:
    return ",".join(sorted({s for v in values if v for s in v.split(",") if s}))


def virtual_function_properties(module: Module, vf_keys: str = "design") -> dict:
    """``SYCL/virtual functions`` of an image: the set an outlined image holds,
    or the sets its kernels call and create objects of."""
    held = module.functions_with(INDIRECTLY_CALLABLE)
    calling = module.functions_with(CALLS_INDIRECTLY)
    creating = module.functions_with(CREATES_VIRTUAL_FUNCTIONS) if vf_keys != "upstream" else {}
    if not (held or calling or creating):   # (most images: none of the three)
        return {}
    defined = {n for n, f in module.functions.items() if not f.is_declaration}
    for name, s in held.items():
        if name in defined:
            return {VF_SET_KEY: string_value(s)}
    calls = _sets(v for n, v in calling.items() if n in defined)
    out = {}
    if vf_keys == "upstream":
        if calls:
            out[USES_VF_SET_KEY] = string_value(calls)
        return out
    creates = _sets(v for n, v in creating.items() if n in defined)
    if calls:
        out[CALLS_VF_SET_KEY] = string_value(calls)
    if creates:
        out[CREATES_VF_SET_KEY] = string_value(creates)
    return out


def kernels_using_assert(module: Module) -> list[str]:
    """``[SYCL/assert used]`` (upstream's ``getKernelNamesUsingAssert``): the
    kernels from which ``__devicelib_assert_fail`` is reached through direct
    calls, in the order a walk up the callers from it finds them (callers in
    module order).  A ``"referenced-indirectly"`` function on the way means any
    kernel may reach it: then every kernel of the image, in module order."""
    if ASSERT_FAIL not in module.functions:
        return []
    callers: dict[str, list[str]] = {}
    for name, fn in module.functions.items():
        if not fn.is_declaration:
            for callee in dict.fromkeys(fn.calls()):
                callers.setdefault(callee, []).append(name)
    indirect = module.functions_with(REFERENCED_INDIRECTLY)
    seen, queue, kernels = {ASSERT_FAIL}, [ASSERT_FAIL], []
    while queue:
        for caller in callers.get(queue.pop(0), ()):
            if caller in seen:
                continue
            if caller in indirect:
                return [n for n, f in module.functions.items() if f.is_kernel]
            seen.add(caller)
            if module.functions[caller].is_kernel:
                kernels.append(caller)
            queue.append(caller)
    return kernels


def compute_properties(module: Module, entries: list[str], *, split: str = "none", with_device_globals: bool = False,
                       jit: bool = True, vf_keys: str = "design", target: str | None = None) -> PropertySets:
    props = PropertySets()
    for key, value in device_requirements(module, entries, keep_wg_size=split != "none").items():
        props.add(DEVICE_REQUIREMENTS, key, value)
    if target is not None:
        props.add(DEVICE_REQUIREMENTS, "compile_target", string_value(target))
    optlevel = module.functions_with(SYCL_OPTLEVEL)
    for name in entries:
        if name in optlevel and (optlevel[name] or "").isdigit():
            props.add(MISC_PROPERTIES, "optLevel", int(optlevel[name]))
            break
    for name in kernels_using_assert(module):
        props.add(ASSERT_USED, name, 1)
    if with_device_globals:
        for uid, value in device_globals(module).items():
            props.add(DEVICE_GLOBALS, uid, value)
    if jit:
        for key, value in virtual_function_properties(module, vf_keys).items():
            props.add(VIRTUAL_FUNCTIONS, key, value)
    return props


# --- the sets upstream writes on request (sycl-post-link's -emit-* flags) -------------

#: ``SYCL/kernel names`` sits between exported and imported symbols in the
#: newest code); a ``.prop`` file lists its sets in this order
SET_ORDER = (DEVICELIB_REQ_MASK, DEVICE_REQUIREMENTS, SPEC_CONSTANTS,
             SPEC_CONSTANTS_DEFAULTS, KERNEL_PARAM_OPT, EXPORTED_SYMBOLS, KERNEL_NAMES,
             IMPORTED_SYMBOLS, PROGRAM_METADATA, MISC_PROPERTIES, ASSERT_USED, IMPLICIT_LOCAL_ARG, DEVICE_GLOBALS,
             HOST_PIPES, VIRTUAL_FUNCTIONS, REGISTERED_KERNELS)


@dataclass(frozen=True)
class EmitOptions:
    """Which of upstream's optional sets to write (one field per ``-emit-*`` flag)."""

    param_info: bool = False            # -emit-param-info
    exported_symbols: bool = False      # -emit-exported-symbols
    kernel_names: bool = False          # -emit-kernel-names
    imported_symbols: bool = False      # -emit-imported-symbols
    program_metadata: bool = False      # -emit-program-metadata
    allow_dependencies: bool = False    # -allow-device-image-dependencies


# Bits of ``DeviceLibReqMask``: one per fallback device library, in the order of
# upstream's ``DeviceLibExt`` enum (``SYCLDeviceLibReqMask.cpp``).
DEVICELIB_BITS = {"assert": 0x1, "math": 0x2, "math_fp64": 0x4, "complex": 0x8, "complex_fp64": 0x10,
                  "cstring": 0x20, "imf": 0x40, "imf_fp64": 0x80, "imf_bf16": 0x100, "bfloat16": 0x200,
                  "gsort": 0x400}
# fp64 functions of the imf library whose names carry no "double"
_IMF_FP64 = re.compile(r'(?:fma|floor|ceil|fabs|trunc|rint|rcp64h|nearbyint|inv|sqrt|rsqrt|fmax|fmin|copysign'
                       r'|d(?:add|sub|mul|div|fma|sqrt|rcp)(?:_r[dnuz])?)\Z')
_MATH_INT = frozenset("abs div labs ldiv llabs lldiv".split())


def devicelib_library(name: str) -> str | None:
    """The fallback device library a ``__devicelib_*`` function belongs to, by the
    naming scheme of upstream's table: ``imf_*`` functions by their operand type
    (``bf16``/``bfloat16`` → imf_bf16, ``double``/the fp64 stems → imf_fp64);
    C math and complex functions by the ``f`` suffix of their float versions."""
    if not name.startswith("__devicelib_"):
        return None
    rest = name[len("__devicelib_"):]
    if rest in ("assert_read", "assert_fail"):
        return "assert"
    if rest in ("memcpy", "memset", "memcmp"):
        return "cstring"
    if rest.startswith(("ConvertFToBF16INTEL", "ConvertBF16ToFINTEL")):
        return "bfloat16"
    if rest.startswith(("default_work_group_", "default_sub_group_")):
        return "gsort"
    if rest.startswith("imf_"):
        op = rest[4:]
        if "double" in op or _IMF_FP64.match(op):
            return "imf_fp64"
        if "bf16" in op or "bfloat16" in op:
            return "imf_bf16"
        return "imf"
    if rest in ("__divsc3", "__mulsc3"):
        return "complex"
    if rest in ("__divdc3", "__muldc3"):
        return "complex_fp64"
    if re.fullmatch(r'c(?:abs|acosh?|arg|asinh?|atanh?|cosh?|exp|imag|log|polar|pow|proj|real|sinh?|sqrt|tanh?)f?', rest):
        return "complex" if rest.endswith("f") else "complex_fp64"
    if rest in _MATH_INT:
        return "math"
    if re.fullmatch(r'[a-z0-9]+', rest):
        return "math" if rest.endswith("f") else "math_fp64"
    return None


def devicelib_req_mask(module: Module) -> int:
    """``getSYCLDeviceLibReqMask``: the bits of the libraries of every
    ``__devicelib_*`` declaration, for SPIR modules only."""
    if not any(line.startswith('target triple = "spir') for line in module.header):
        return 0
    mask = 0
    for name, fn in module.functions.items():
        if fn.is_declaration and name.startswith("__devicelib_"):
            mask |= DEVICELIB_BITS.get(devicelib_library(name), 0)
    return mask


def param_count(fn) -> int:
    """Number of parameters of a function (``...`` is not one)."""
    inner = fn.params.strip()[1:-1].strip()
    return len([p for p in split_operands(inner) if p.strip() != "..."]) if inner else 0


def _flag_operand(op: str) -> bool:
    """A metadata operand as a truth value: ``i1 true``, ``i32 1`` → True."""
    value = op.split()[-1] if op else "0"
    return value == "true" or (value.lstrip("-").isdigit() and int(value) != 0)


def kernel_param_opt(module: Module) -> dict[str, bytes]:
    """``SYCL/kernel param opt``: kernel → bit array, bit i set when argument i was
    removed.  ``!sycl_kernel_omit_args`` (older upstream: ``!spir_kernel_omit_args``,
    ``SPIRKernelParamOptInfo.cpp``) gives the bits where a pass left it; we
    remove no arguments, so a kernel without it has every bit clear.  The payload
    is ceil(n/8) bytes, bit i at ``1 << i % 8`` of byte i / 8; the size prefix
    counts the arguments (docs/formats.md, "Byte arrays").  No arguments, no entry."""
    out = {}
    for name, fn in module.functions.items():
        omit = fn.metadata.get(SYCL_KERNEL_OMIT_ARGS, fn.metadata.get(SPIR_KERNEL_OMIT_ARGS))
        if omit is not None:
            bits = [_flag_operand(op) for op in module.metadata_operands(omit)]
        elif fn.is_kernel and not fn.is_declaration:
            bits = [False] * param_count(fn)
        else:
            continue
        if not bits:
            continue
        payload = bytearray((len(bits) + 7) // 8)
        for i, b in enumerate(bits):
            if b:
                payload[i // 8] |= 1 << (i % 8)
        out[name] = byte_array(bytes(payload), bits=len(bits))
    return out


_MANGLED_FIRST = re.compile(r'_Z(?:N[rVKO]*)?(\d+)')


def _demangled_starts_reserved(name: str) -> bool:
    """Whether the Itanium-demangled name starts with ``__`` (its first source name does)."""
    m = _MANGLED_FIRST.match(name)
    if not m:
        return False
    n = int(m.group(1))
    return name[m.end():m.end() + n].startswith("__")


def can_be_imported(module: Module, name: str) -> bool:
    """``canBeImportedFunction`` as the newest upstream has it: a declaration
    another image may define; not an intrinsic, not a name or demangled name
    starting with ``__`` (the devicelib functions, ``__spirv_*`` builtins and
    other implementation names).  Upstream's newest test imports declarations
    with no ``"sycl-module-id"`` as well (``emit_imported_symbols.ll``), so
    that attribute is not asked for (an earlier version asked for it)."""
    return not (name.startswith(("llvm.", "__")) or _demangled_starts_reserved(name))


def _demangled_starts(name: str, prefix: str) -> bool:
    m = _MANGLED_FIRST.match(name)
    return bool(m) and name[m.end():m.end() + int(m.group(1))].startswith(prefix)


def imported_functions(module: Module) -> list[str]:
    """The older ``-imports`` rule (``.imported_sym`` files): every function the
    image declares, in module order, except those whose Itanium-demangled
    name starts with ``__`` or ``_spirv`` (intrinsics excepted too: LLVM
    defines them, no image does)."""
    return [n for n, f in module.functions.items()
            if f.is_declaration and not n.startswith("llvm.")
            and not _demangled_starts(n, "__") and not _demangled_starts(n, "_spirv")]


def exported_symbols(module: Module, entries: list[str], virtual) -> list[str]:
    """``[SYCL/exported symbols]``: the ``spir_func`` entry points that are no
    virtual functions, then the external device globals without
    ``device_image_scope``."""
    out = [n for n in entries if n not in virtual and module.functions[n].calling_conv == "spir_func"]
    for name in module.globals_with(DEVICE_GLOBAL_SIZE):
        g = module.globals[name]
        if not g.is_declaration and g.linkage == "external" and not is_image_scope(module.global_attributes(g)):
            out.append(name)
    return out


def imported_symbols(module: Module, virtual, allow_dependencies: bool) -> list[str]:
    """``[SYCL/imported symbols]``: the declarations ``can_be_imported`` takes
    (virtual functions excepted: they are linked another way); with
    ``-allow-device-image-dependencies`` also declared external device globals."""
    out = [n for n, fn in module.functions.items()
           if fn.is_declaration and n not in virtual and can_be_imported(module, n)]
    if allow_dependencies:
        out += [n for n, g in module.globals.items()
                if g.is_declaration and g.linkage == "external" and g.value_type.startswith("%")
                and "device_global" in g.value_type]
    return out


def optional_sets(module: Module, entries: list[str], opts: EmitOptions) -> PropertySets:
    """The sets ``opts`` asks for, plus ``SYCL/devicelib req mask`` when the image
    uses a device library (a zero mask is not written: see the module docstring)."""
    props = PropertySets()
    mask = devicelib_req_mask(module)
    if mask:
        props.add(DEVICELIB_REQ_MASK, "DeviceLibReqMask", mask)
    virtual = module.functions_with(INDIRECTLY_CALLABLE)
    if opts.param_info:
        props.sets.setdefault(KERNEL_PARAM_OPT, {})          # upstream writes the header even when empty
        for name, value in kernel_param_opt(module).items():
            props.add(KERNEL_PARAM_OPT, name, value)
    if opts.exported_symbols:
        for name in exported_symbols(module, entries, virtual):
            props.add(EXPORTED_SYMBOLS, name, 1)
    if opts.kernel_names:
        for name in entries:
            if module.functions[name].is_kernel:
                props.add(KERNEL_NAMES, name, 1)
    if opts.imported_symbols:
        for name in imported_symbols(module, virtual, opts.allow_dependencies):
            props.add(IMPORTED_SYMBOLS, name, 1)
    if opts.program_metadata:
        for key, value in program_metadata(module).items():
            props.add(PROGRAM_METADATA, key, value)
    return props


def program_metadata(module: Module) -> dict:
    """``SYCL/program metadata``: per function (module order) ``@reqd_work_group_size``
    (uint32 array), ``@reqd_sub_group_size``, ``@work_group_num_dim`` (uint32) and
    ``@max_work_group_size`` (uint32 array); then ``<unique id>@global_id_mapping``
    (the device global's IR name) for every device global."""
    out: dict = {}
    for name, fn in module.functions.items():
        md = fn.metadata
        if REQD_WORK_GROUP_SIZE in md:
            out[f"{name}@{REQD_WORK_GROUP_SIZE}"] = u32_array(module.metadata_ints(md[REQD_WORK_GROUP_SIZE]))
        for kind, key in ((INTEL_REQD_SUB_GROUP_SIZE, REQD_SUB_GROUP_SIZE_KEY),
                          (WORK_GROUP_NUM_DIM, WORK_GROUP_NUM_DIM)):
            values = module.metadata_ints(md[kind]) if kind in md else []
            if values:
                out[f"{name}@{key}"] = values[0] & 0xFFFFFFFF
        if MAX_WORK_GROUP_SIZE in md:
            out[f"{name}@{MAX_WORK_GROUP_SIZE}"] = u32_array(module.metadata_ints(md[MAX_WORK_GROUP_SIZE]))
    for name in module.globals_with(DEVICE_GLOBAL_SIZE):
        uid = module.global_attributes(name).get(UNIQUE_ID) or name
        out[f"{uid}@global_id_mapping"] = string_value(name)
    return out


def in_upstream_order(*parts: PropertySets) -> PropertySets:
    """The sets of ``parts`` merged, in ``SET_ORDER`` (sets it does not name last)."""
    rank = {name: i for i, name in enumerate(SET_ORDER)}
    names = []
    for p in parts:
        names.extend(n for n in p.sets if n not in names)
    out = PropertySets()
    for name in sorted(names, key=lambda n: rank.get(n, len(SET_ORDER))):
        out.sets[name] = {}
        for p in parts:
            for key, entry in p.sets.get(name, {}).items():
                out.sets[name].setdefault(key, entry)
    return out
