"""The numbers post-link reads from its input IR, checked once, before any is used.

Post-link copies numbers from attributes and metadata into property sets whose
fields have fixed widths (``uint32``/``uint64``, ``../docs`` formats) and that
the runtime trusts: a device global's ``"sycl-device-global-size"`` (a uint32
in ``[SYCL/device globals]``, and the size of the storage the runtime
allocates), its ``"sycl-host-access"``, a kernel's ``!reqd_work_group_size``,
``!max_work_group_size``, ``!intel_reqd_sub_group_size``,
``!work_group_num_dim``, ``!sycl_fixed_targets`` and ``"sycl-optlevel"``.  The
IR may be hand-written, so any of them can be negative, too large, of the
wrong count or not a number; ``check_values`` (the first stage of
``split.split_module``) refuses such a module with a ``SplitError`` naming the
function or global, the key and the value, so that no later stage packs or
trusts a value out of range.
"""
from __future__ import annotations

from ..passes.ir import Module
from .image import SplitError
from ..passes.support.ir_contract import (DEVICE_GLOBAL_SIZE, HOST_ACCESS, INTEL_REQD_SUB_GROUP_SIZE,
                                          MAX_WORK_GROUP_SIZE, REQD_WORK_GROUP_SIZE, SYCL_FIXED_TARGETS,
                                          SYCL_OPTLEVEL, WORK_GROUP_NUM_DIM)

__all__ = ["check_values"]

U32_MAX = (1 << 32) - 1

#: metadata kind -> (fewest operands, most operands, smallest value, largest value)
FUNCTION_METADATA = {
    REQD_WORK_GROUP_SIZE: (1, 3, 1, U32_MAX),
    MAX_WORK_GROUP_SIZE: (1, 3, 1, U32_MAX),
    INTEL_REQD_SUB_GROUP_SIZE: (1, 1, 1, U32_MAX),
    WORK_GROUP_NUM_DIM: (1, 1, 0, 3),
    SYCL_FIXED_TARGETS: (0, None, 0, U32_MAX),
}

#: global attribute -> (smallest, largest, default when the attribute has no value)
GLOBAL_ATTRIBUTES = {
    DEVICE_GLOBAL_SIZE: (1, U32_MAX, None),
    HOST_ACCESS: (0, 3, 2),
}


def check_values(module: Module) -> None:
    """Raise ``SplitError`` for the first number of ``module`` that post-link
    reads and that is out of its range (see the module docstring)."""
    for name, fn in module.functions.items():
        md = fn.metadata
        if not md:
            continue
        for kind, limits in FUNCTION_METADATA.items():
            if kind in md:
                _check_metadata(module, name, kind, md[kind], *limits)
    for name, value in module.functions_with(SYCL_OPTLEVEL).items():
        if value is not None and not (value.isdigit() and int(value) <= U32_MAX):
            raise SplitError(f"function '@{name}': \"{SYCL_OPTLEVEL}\"=\"{_shown(value)}\" is not a number from 0 "
                             f"to {U32_MAX}")
    for key, (lo, hi, default) in GLOBAL_ATTRIBUTES.items():
        for name, value in module.globals_with(key).items():
            if value is None and default is not None:
                continue
            number = _integer(value)
            if number is None or not lo <= number <= hi:
                raise SplitError(f"global '@{name}': \"{key}\"=\"{_shown(value)}\" is not a number from {lo} to {hi}")


def _check_metadata(module: Module, name: str, kind: str, ref: str, fewest: int, most: int | None,
                    lo: int, hi: int) -> None:
    operands = module.metadata_operands(ref)
    values = [_metadata_integer(module, op) for op in operands]
    count = f"{fewest}" if fewest == most else f"{fewest} to {most}" if most is not None else f"{fewest} or more"
    where = f"function '@{name}': !{kind} {ref}"
    if not fewest <= len(values) <= (most if most is not None else len(values)):
        raise SplitError(f"{where} has {len(values)} operand{'s' if len(values) != 1 else ''}, not {count}")
    for op, v in zip(operands, values):
        if v is None or not lo <= v <= hi:
            raise SplitError(f"{where}: '{_shown(op)}' is not an integer from {lo} to {hi}")


def _metadata_integer(module: Module, op: str) -> int | None:
    """``i32 N`` (any integer type) as N; ``!M`` naming ``!{!"name", i32 N}`` as N
    (how aspect lists are written); anything else None."""
    if op.startswith("!") and op[1:].isdigit():
        inner = module.metadata_operands(op)
        op = inner[-1] if inner else ""
    parts = op.split()
    if len(parts) != 2 or not parts[0].startswith("i") or not parts[0][1:].isdigit():
        return None
    return _integer(parts[1])


def _integer(text: str | None) -> int | None:
    """A decimal integer of at most 20 digits (no number post-link reads needs
    more; a longer one is out of range, not worth converting), else None."""
    if text is None:
        return None
    digits = text[1:] if text[:1] == "-" else text
    if not digits.isdigit() or not digits.isascii() or len(digits) > 20:
        return None
    return int(text)


def _shown(text: str | None, limit: int = 40) -> str:
    text = "" if text is None else text
    return text if len(text) <= limit else text[:limit] + "..."
