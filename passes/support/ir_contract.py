"""The IR contract between the stages: every name they exchange, in one list.

The front end, the passes, post-link and the runtime talk through names
written into the IR (function and global attributes, metadata kinds) and into
the property sets of the device images (set names, keys).  Each name is
defined here once, as a constant the stages import (no stage spells one as a
string literal: ``tests/test_ir_contract.py`` checks that), and each is
registered with what writes it and what reads it:

- a minisycl module (``frontend.emitter.globals``, ``passes.virtual_functions``,
  ``postlink.properties``, ``runtime.program``...), which the test checks
  really imports the constant;
- ``UPSTREAM_COMPILER``: DPC++'s own front end or ``sycl-post-link`` writes it
  (an input minisycl accepts may carry it);
- ``UPSTREAM_RUNTIME``: DPC++'s runtime reads it (an output minisycl writes for
  upstream's tools).

The test also checks that every name written is read by some stage (or by
upstream's runtime) and every name read is written by some stage (or by
upstream's compiler).  It lives in ``passes/support`` because every layer may
import that one (``tests/test_layering.py``); it imports nothing.

The conventions themselves (what each value means) are in docs/formats.md,
"IR conventions between the stages" and "Property sets".
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Name", "CONTRACT", "UPSTREAM_COMPILER", "UPSTREAM_RUNTIME"]

#: writer: DPC++'s clang or sycl-post-link (an input may carry the name)
UPSTREAM_COMPILER = "upstream DPC++ compiler"
#: reader: DPC++'s runtime (the name is part of an output upstream reads)
UPSTREAM_RUNTIME = "upstream DPC++ runtime"

FUNCTION_ATTRIBUTE = "function attribute"
GLOBAL_ATTRIBUTE = "global attribute"
CALL_ATTRIBUTE = "call-site attribute"
METADATA = "metadata kind"
NAMED_METADATA = "named metadata"
PROPERTY_SET = "property set"
PROPERTY = "property key"


@dataclass(frozen=True)
class Name:
    """One name of the contract: its spelling, what it is, who writes and reads it."""
    text: str
    kind: str
    writers: tuple[str, ...]
    readers: tuple[str, ...]
    what: str


#: spelling -> its entry, in the order of this file
CONTRACT: dict[str, Name] = {}


def _name(text: str, kind: str, writers, readers, what: str) -> str:
    if text in CONTRACT:
        raise AssertionError(f"contract name {text!r} registered twice")
    CONTRACT[text] = Name(text, kind, tuple(writers), tuple(readers), what)
    return text


_FE = "frontend.emitter.globals"

# --- function attributes ---------------------------------------------------------------

SYCL_MODULE_ID = _name(
    "sycl-module-id", FUNCTION_ATTRIBUTE, [_FE, UPSTREAM_COMPILER],
    ["passes.entry_points", "postlink.grouping"],
    "a function defined in a source file (its name): an entry point of the split")
INDIRECTLY_CALLABLE = _name(
    "indirectly-callable", FUNCTION_ATTRIBUTE, [_FE, UPSTREAM_COMPILER],
    ["passes.entry_points", "passes.propagate_aspects", "passes.virtual_functions", "postlink.aot_filter",
     "postlink.grouping", "postlink.properties", "postlink.split"],
    "a virtual function of the set named by the value (``_ZTSv``: the default set)")
CALLS_INDIRECTLY = _name(
    "calls-indirectly", FUNCTION_ATTRIBUTE, [_FE, "passes.virtual_functions", UPSTREAM_COMPILER],
    ["passes.propagate_aspects", "passes.virtual_functions", "postlink.properties"],
    "a kernel that may call the virtual functions of the listed sets (comma-separated)")
REFERENCED_INDIRECTLY = _name(
    "referenced-indirectly", FUNCTION_ATTRIBUTE, [UPSTREAM_COMPILER], ["postlink.image_contents", "postlink.properties"],
    "a function whose address is taken for an indirect call: kept with its callers' images")
SYCL_DEVICE_HAS = _name(
    "sycl-device-has", FUNCTION_ATTRIBUTE, [UPSTREAM_COMPILER], ["passes.propagate_aspects"],
    "the aspects a function declares (clang's spelling of ``device_has``; minisycl's front end "
    "writes !sycl_declared_aspects)")
SYCL_OPTLEVEL = _name(
    "sycl-optlevel", FUNCTION_ATTRIBUTE, [UPSTREAM_COMPILER],
    ["postlink.grouping", "postlink.ir_values", "postlink.options", "postlink.properties"],
    "the optimization level a kernel was compiled at ([SYCL/misc properties] optLevel)")
SYCL_REGISTER_ALLOC_MODE = _name(
    "sycl-register-alloc-mode", FUNCTION_ATTRIBUTE, [UPSTREAM_COMPILER], ["postlink.grouping"],
    "Intel GPU register allocation mode: kernels of different modes go to different images")
SYCL_GRF_SIZE = _name(
    "sycl-grf-size", FUNCTION_ATTRIBUTE, [UPSTREAM_COMPILER], ["postlink.grouping"],
    "Intel GPU register file size: kernels of different sizes go to different images")
CALL_IF_ON_DEVICE = _name(
    "sycl-call-if-on-device", FUNCTION_ATTRIBUTE, ["frontend.emitter.functions", UPSTREAM_COMPILER],
    ["passes.split_if_device"],
    "the helper holding an ``if_device`` block's body")
CALL_IF_ON_HOST = _name(
    "sycl-call-if-on-host", FUNCTION_ATTRIBUTE, ["frontend.emitter.functions", UPSTREAM_COMPILER],
    ["passes.check_device_code", "passes.link", "passes.split_if_device"],
    "the helper holding an ``if_host`` block's body")
CALL_IF_ON_DEVICE_CONDITIONALLY = _name(
    "sycl-call-if-on-device-conditionally", FUNCTION_ATTRIBUTE, [UPSTREAM_COMPILER],
    ["passes.propagate_aspects_conditional"],
    "DPC++'s conditional caller (``if_device_has``, ``if_architecture_is``): ``call @caller(ptr @action, ptr "
    "%this, i32 ...condition)``; the action's aspects are used only under the condition")
HOST_ONLY = _name(
    "minisycl-host-only", FUNCTION_ATTRIBUTE, ["frontend.emitter.calls", _FE],
    ["passes.host_only_virtuals", "passes.link", "passes.split_if_device"],
    "host code: ``virtual`` (a virtual method without indirectly_callable), ``declared`` "
    "(a host-only declaration), or bare (``print``'s printf)")
HOST_ONLY_STUB = _name(
    "minisycl-host-only-stub", FUNCTION_ATTRIBUTE, ["passes.host_only_virtuals"], ["passes.propagate_aspects"],
    "the device stub standing in a vtable for a host-only virtual method (the value: the method)")
UNDEFINED = _name(
    "minisycl-undefined", FUNCTION_ATTRIBUTE, [_FE], ["passes.split_if_device"],
    "a function declared and never defined in the program (device code may not call it)")
SIGNATURE_ATTRIBUTE = _name(
    "minisycl-kernel-signature", FUNCTION_ATTRIBUTE, [_FE],
    ["passes.check_device_code", "passes.ir.kernel_params", "passes.lower_to_nvptx", "postlink.build",
     "runtime.spec_constants"],
    "a kernel's parameters as the front end spells them (``id<1>, float*, float``): how the runtime packs them")
CREATES_VIRTUAL_FUNCTIONS = _name(
    "minisycl-creates-virtual-functions", FUNCTION_ATTRIBUTE, ["passes.virtual_functions"],
    ["postlink.outlining", "postlink.properties"],
    "a kernel that constructs objects of classes with virtual functions of the listed sets")
WG_KERNEL = _name(
    "minisycl-work-group-kernel", FUNCTION_ATTRIBUTE, ["passes.work_item_loops"], ["passes.work_item_loops"],
    "a work-group function made by lower-work-groups (the value: its kernel)")
WG_POINTS = _name(
    "minisycl-wg-points", FUNCTION_ATTRIBUTE, ["passes.work_item_loops"], ["passes.work_item_loops"],
    "the barrier points of a work-group function, ``|``-separated")
WG_STATIC_LOCAL = _name(
    "minisycl-wg-static-local", FUNCTION_ATTRIBUTE, ["passes.work_item_loops"], ["passes.work_item_loops"],
    "bytes of work-group local memory a work-group function allocates itself")
WG_SUB_GROUP_SIZE = _name(
    "minisycl-wg-sub-group-size", FUNCTION_ATTRIBUTE, ["passes.work_item_loops"], ["passes.work_item_loops"],
    "the sub-group size a work-group function was lowered for")

# --- call-site attributes --------------------------------------------------------------

VIRTUAL_CALL = _name(
    "virtual-call", CALL_ATTRIBUTE, ["frontend.emitter.calls", UPSTREAM_COMPILER], ["passes.srcloc", "passes.virtual_functions"],
    "an indirect call that is a virtual call")

# --- global attributes (device globals) -------------------------------------------------

DEVICE_GLOBAL_SIZE = _name(
    "sycl-device-global-size", GLOBAL_ATTRIBUTE, [_FE, UPSTREAM_COMPILER],
    ["passes.split_if_device", "postlink.device_globals", "postlink.image_contents", "postlink.initial_values",
     "postlink.ir_values", "postlink.properties", "runtime.image_link"],
    "a device global, and the size in bytes of its value")
UNIQUE_ID = _name(
    "sycl-unique-id", GLOBAL_ATTRIBUTE, [_FE, UPSTREAM_COMPILER], ["postlink.initial_values", "postlink.properties"],
    "a device global's program-wide identity ([SYCL/device globals] key, the bundle's table)")
DEVICE_IMAGE_SCOPE = _name(
    "sycl-device-image-scope", GLOBAL_ATTRIBUTE, [_FE, UPSTREAM_COMPILER],
    ["postlink.initial_values", "postlink.properties"],
    "a device global with one copy per image (the ``device_image_scope`` property)")
HOST_ACCESS = _name(
    "sycl-host-access", GLOBAL_ATTRIBUTE, [_FE, UPSTREAM_COMPILER], ["postlink.initial_values", "postlink.ir_values"],
    "a device global's ``host_access`` property (0 read, 1 write, 2 read_write, 3 none)")
INIT_MODE = _name(
    "sycl-init-mode", GLOBAL_ATTRIBUTE, [_FE, UPSTREAM_COMPILER], ["postlink.initial_values"],
    "a device global's ``init_mode`` property")
IMPLEMENT_IN_CSR = _name(
    "sycl-implement-in-csr", GLOBAL_ATTRIBUTE, [_FE, UPSTREAM_COMPILER], ["postlink.initial_values"],
    "a device global's ``implement_in_csr`` property")

# --- metadata ---------------------------------------------------------------------------

SYCL_USED_ASPECTS = _name(
    "sycl_used_aspects", METADATA, ["passes.propagate_aspects", UPSTREAM_COMPILER],
    ["passes.propagate_aspects", "postlink.grouping"],
    "the aspects a function uses, itself or through its callees (aspect numbers)")
SYCL_DECLARED_ASPECTS = _name(
    "sycl_declared_aspects", METADATA, [_FE, UPSTREAM_COMPILER], ["passes.propagate_aspects"],
    "the aspects a function declares (``device_has``)")
SYCL_CONDITIONALLY_USED_ASPECTS = _name(
    "sycl_conditionally_used_aspects", METADATA, ["passes.propagate_aspects", UPSTREAM_COMPILER],
    ["passes.propagate_aspects_conditional"],
    "the aspects a function uses under conditions: ``!{!{!{i32 condition...}, !{i32 aspect...}}, ...}`` pairs "
    "(not device requirements: the post-link step leaves them alone, as upstream's does)")
SYCL_FIXED_TARGETS = _name(
    "sycl_fixed_targets", METADATA, ["passes.propagate_aspects", UPSTREAM_COMPILER],
    ["postlink.ir_values", "postlink.properties"],
    "the targets a kernel was fixed to (``propagate-aspects{fixed-targets=...}``)")
SYCL_ASPECTS = _name(
    "sycl_aspects", NAMED_METADATA, [_FE, UPSTREAM_COMPILER], ["passes.propagate_aspects"],
    "the aspect table: ``!{!\"name\", i32 number}`` pairs")
SYCL_TYPES_THAT_USE_ASPECTS = _name(
    "sycl_types_that_use_aspects", NAMED_METADATA, [_FE, UPSTREAM_COMPILER], ["passes.propagate_aspects"],
    "types whose use implies aspects (``half``: fp16, ``double``: fp64)")
REQD_WORK_GROUP_SIZE = _name(
    "reqd_work_group_size", METADATA, [_FE, UPSTREAM_COMPILER],
    ["passes.work_item_sweeps", "postlink.grouping", "postlink.inspect", "postlink.ir_values", "postlink.options",
     "postlink.properties"],
    "a kernel's required work-group size (also a [SYCL/program metadata] key suffix)")
INTEL_REQD_SUB_GROUP_SIZE = _name(
    "intel_reqd_sub_group_size", METADATA, [_FE, UPSTREAM_COMPILER],
    ["passes.work_item_loops", "postlink.grouping", "postlink.ir_values", "postlink.properties"],
    "a kernel's required sub-group size")
WORK_GROUP_NUM_DIM = _name(
    "work_group_num_dim", METADATA, [UPSTREAM_COMPILER, "postlink.properties"],
    ["postlink.grouping", "postlink.ir_values", "postlink.options", "postlink.properties", UPSTREAM_RUNTIME],
    "a kernel's number of work-group dimensions (also the [SYCL/device requirements] key of that name)")
MAX_WORK_GROUP_SIZE = _name(
    "max_work_group_size", METADATA, [UPSTREAM_COMPILER], ["postlink.ir_values", "postlink.options", "postlink.properties"],
    "a kernel's maximum work-group size ([SYCL/program metadata])")
SYCL_KERNEL_OMIT_ARGS = _name(
    "sycl_kernel_omit_args", METADATA, [UPSTREAM_COMPILER], ["postlink.options", "postlink.properties"],
    "the kernel arguments upstream's dead-argument elimination removed ([SYCL/kernel param opt])")
SPIR_KERNEL_OMIT_ARGS = _name(
    "spir_kernel_omit_args", METADATA, [UPSTREAM_COMPILER], ["postlink.options", "postlink.properties"],
    "the older spelling of sycl_kernel_omit_args, still read")
SYCL_EXPLICIT_SIMD = _name(
    "sycl_explicit_simd", METADATA, [UPSTREAM_COMPILER], ["postlink.cli"],
    "an ESIMD function (refused: minisycl has no ESIMD)")
SYCL_JOINT_MATRIX = _name(
    "sycl_joint_matrix", METADATA, [UPSTREAM_COMPILER], ["postlink.grouping", "postlink.properties"],
    "the joint_matrix types a kernel uses: kernels of different ones go to different images")
SYCL_JOINT_MATRIX_MAD = _name(
    "sycl_joint_matrix_mad", METADATA, [UPSTREAM_COMPILER], ["postlink.grouping", "postlink.properties"],
    "the joint_matrix_mad shapes a kernel uses: kernels of different ones go to different images")
SRCLOC = _name(
    "minisycl.loc", METADATA, [_FE, "frontend.emitter.groups"], ["passes.srcloc"],
    "a source location ``!{!\"file\", i32 line, i32 col}`` for diagnostics after the front end")
SOURCE_NAME = _name(
    "minisycl.name", METADATA, ["frontend.emitter.calls", "frontend.emitter.functions", _FE], ["passes.srcloc"],
    "a function's source name (``Shape::area``), for diagnostics")
VIRTUAL_TARGET = _name(
    "minisycl.vcall", METADATA, ["frontend.emitter.calls"], ["passes.srcloc"],
    "on a virtual call: ``!{!\"Shape::area\", !\"set\"}`` (the method and its set)")
NVVM_ANNOTATIONS = _name(
    "nvvm.annotations", NAMED_METADATA, [UPSTREAM_COMPILER, "postlink.nvvm"], ["postlink.nvvm"],
    "NVPTX kernel markers ``!{ptr @k, !\"kernel\", i32 1}``: post-link restores its images' entries")
ASPECT_USES = _name(
    "minisycl.aspect_uses", METADATA, [_FE], ["passes.srcloc"],
    "where a function uses aspects: ``!{i32 aspect, !\"file\", i32 line, i32 col, !\"what\", ...}``")

# --- property sets -----------------------------------------------------------------------

_PL = "postlink.properties"
DEVICELIB_REQ_MASK = _name(
    "SYCL/devicelib req mask", PROPERTY_SET, [_PL], [_PL, UPSTREAM_RUNTIME],
    "the device libraries an image needs")
DEVICE_REQUIREMENTS = _name(
    "SYCL/device requirements", PROPERTY_SET, [_PL],
    ["postlink", "postlink.aot_filter", "postlink.bundle", _PL, "runtime.program", UPSTREAM_RUNTIME],
    "what a device must have to run an image: aspects, sizes, fixed targets")
SPEC_CONSTANTS = _name(
    "SYCL/specialization constants", PROPERTY_SET, ["postlink.spec_constants"],
    ["postlink.options", _PL, "runtime.program", "runtime.spec_constants", UPSTREAM_RUNTIME],
    "an image's specialization constants: id -> where its value lies in the buffer")
SPEC_CONSTANTS_DEFAULTS = _name(
    "SYCL/specialization constants default values", PROPERTY_SET, ["postlink.spec_constants"],
    [_PL, "runtime.spec_constants", UPSTREAM_RUNTIME],
    "the default values of an image's specialization constants")
KERNEL_PARAM_OPT = _name(
    "SYCL/kernel param opt", PROPERTY_SET, [_PL], ["postlink.options", _PL, UPSTREAM_RUNTIME],
    "per kernel, the arguments removed (-emit-param-info)")
EXPORTED_SYMBOLS = _name(
    "SYCL/exported symbols", PROPERTY_SET, [_PL], ["postlink.options", _PL, UPSTREAM_RUNTIME],
    "an image's SYCL_EXTERNAL definitions (-emit-exported-symbols)")
KERNEL_NAMES = _name(
    "SYCL/kernel names", PROPERTY_SET, [_PL], ["postlink.options", _PL, UPSTREAM_RUNTIME],
    "an image's kernels (-emit-kernel-names)")
IMPORTED_SYMBOLS = _name(
    "SYCL/imported symbols", PROPERTY_SET, [_PL], ["postlink.options", _PL, UPSTREAM_RUNTIME],
    "the SYCL_EXTERNAL functions an image declares (-emit-imported-symbols)")
PROGRAM_METADATA = _name(
    "SYCL/program metadata", PROPERTY_SET, [_PL], ["postlink.options", _PL, UPSTREAM_RUNTIME],
    "per kernel, its work-group and sub-group requirements (-emit-program-metadata)")
MISC_PROPERTIES = _name(
    "SYCL/misc properties", PROPERTY_SET, [_PL, "postlink.spec_constants"],
    ["postlink.options", _PL, "runtime.program", UPSTREAM_RUNTIME],
    "optLevel, specConstsReplacedWithDefault")
ASSERT_USED = _name(
    "SYCL/assert used", PROPERTY_SET, [UPSTREAM_COMPILER], [_PL, UPSTREAM_RUNTIME],
    "upstream's: the kernels that call assert (minisycl only orders it)")
IMPLICIT_LOCAL_ARG = _name(
    "SYCL/implicit local arg", PROPERTY_SET, [UPSTREAM_COMPILER], [_PL, UPSTREAM_RUNTIME],
    "upstream's: kernels with an implicit local-memory argument (minisycl only orders it)")
DEVICE_GLOBALS = _name(
    "SYCL/device globals", PROPERTY_SET, [_PL], ["postlink.inspect", "postlink.options", _PL, UPSTREAM_RUNTIME],
    "an image's device globals: unique id -> {size, device_image_scope}")
HOST_PIPES = _name(
    "SYCL/host pipes", PROPERTY_SET, [UPSTREAM_COMPILER], [_PL, UPSTREAM_RUNTIME],
    "upstream's: host pipes (minisycl only orders it)")
VIRTUAL_FUNCTIONS = _name(
    "SYCL/virtual functions", PROPERTY_SET, [_PL, "postlink.dummies"],
    ["postlink.bundle", "postlink.options", _PL, "runtime.program", UPSTREAM_RUNTIME],
    "the virtual-function sets an image holds, calls or creates objects of")
REGISTERED_KERNELS = _name(
    "SYCL/registered kernels", PROPERTY_SET, [UPSTREAM_COMPILER], [_PL, UPSTREAM_RUNTIME],
    "upstream's: kernels registered by name (minisycl only orders it)")

# --- property keys the runtime reads --------------------------------------------------------

REQD_SUB_GROUP_SIZE_KEY = _name(
    "reqd_sub_group_size", PROPERTY, [_PL],
    ["postlink.aot_filter", "postlink.options", "runtime.program", UPSTREAM_RUNTIME],
    "[SYCL/device requirements]: the image's required sub-group size")
REQD_WG_SIZE_U64_KEY = _name(
    "reqd_work_group_size_uint64_t", PROPERTY, [_PL], ["postlink.inspect", "runtime.program", UPSTREAM_RUNTIME],
    "[SYCL/device requirements]: the image's required work-group size (uint64 array)")
FIXED_TARGET_KEY = _name(
    "fixed_target", PROPERTY, [_PL], ["postlink.inspect", UPSTREAM_RUNTIME],
    "[SYCL/device requirements]: the aspects of the targets the image's kernels were fixed to (from "
    "!sycl_fixed_targets)")
JOINT_MATRIX_KEY = _name(
    "joint_matrix", PROPERTY, [_PL], [UPSTREAM_RUNTIME],
    "[SYCL/device requirements]: the joint_matrix types the image's kernels use (from !sycl_joint_matrix)")
JOINT_MATRIX_MAD_KEY = _name(
    "joint_matrix_mad", PROPERTY, [_PL], [UPSTREAM_RUNTIME],
    "[SYCL/device requirements]: the joint_matrix_mad shapes the image's kernels use (from !sycl_joint_matrix_mad)")
VF_SET_KEY = _name(
    "virtual-functions-set", PROPERTY, ["postlink.properties"], ["postlink.bundle", "runtime.program", UPSTREAM_RUNTIME],
    "[SYCL/virtual functions]: the set an outlined image holds")
CALLS_VF_SET_KEY = _name(
    "calls-virtual-functions-set", PROPERTY, ["postlink.properties"], ["postlink.bundle", "runtime.program"],
    "[SYCL/virtual functions]: the sets an image's kernels call (the design's key)")
CREATES_VF_SET_KEY = _name(
    "creates-virtual-functions-set", PROPERTY, ["postlink.properties"], ["postlink.bundle", "runtime.program"],
    "[SYCL/virtual functions]: the sets an image's kernels create objects of (the design's key)")
USES_VF_SET_KEY = _name(
    "uses-virtual-functions-set", PROPERTY, ["postlink.properties"],
    ["postlink.bundle", "postlink.options", "runtime.program", UPSTREAM_RUNTIME],
    "[SYCL/virtual functions]: upstream's key for the sets called (``--vf-keys=upstream``)")
DUMMY_IMAGE_KEY = _name(
    "dummy-image", PROPERTY, ["postlink.dummies"], [UPSTREAM_RUNTIME],
    "[SYCL/virtual functions]: a dummy image (the set's functions without bodies)")
