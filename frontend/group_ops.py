"""The work-group and sub-group built-ins of the kernel language (``docs/language.md``,
"Work-groups, sub-groups and reductions"): one table the checker (which
functions exist, their arguments, which operator fits which type) and the
emitter (which SPIR-V built-in each becomes) both take their facts from.

The IR is DPC++'s (the contract of ``passes/work_item_loops.py``): barriers are
``__spirv_ControlBarrier``, group algorithms ``__spirv_Group<Op>`` with the
execution scope (2 work-group, 3 sub-group) and the group operation (0 reduce,
1 inclusive scan, 2 exclusive scan), votes ``__spirv_GroupAny``/``All``,
broadcasts ``__spirv_GroupBroadcast``, shuffles ``__spirv_SubgroupShuffle*INTEL``
and the sub-group queries ``__spirv_BuiltInSubgroup*``, all mangled as
Itanium C++ names (``_Z17__spirv_GroupFAddiif``).
"""
from __future__ import annotations

from typing import NamedTuple

WORKGROUP, SUBGROUP = 2, 3
#: memory semantics of a barrier: SequentiallyConsistent | WorkgroupMemory (0x110), the
#: work-group fence ``group_barrier`` implies
BARRIER_SEMANTICS = 272

#: operator -> (which types it fits: "arith", "int" or "bool", SPIR-V name by type class)
OPERATORS = {
    "plus": ("arith", {"int": "IAdd", "float": "FAdd"}),
    "multiplies": ("arith", {"int": "IMulKHR", "float": "FMulKHR"}),
    "minimum": ("arith", {"sint": "SMin", "uint": "UMin", "float": "FMin"}),
    "maximum": ("arith", {"sint": "SMax", "uint": "UMax", "float": "FMax"}),
    "bit_and": ("int", {"int": "BitwiseAndKHR"}),
    "bit_or": ("int", {"int": "BitwiseOrKHR"}),
    "bit_xor": ("int", {"int": "BitwiseXorKHR"}),
    "logical_and": ("bool", {"bool": "LogicalAndKHR"}),
    "logical_or": ("bool", {"bool": "LogicalOrKHR"}),
}

#: what the operators' type classes mean, for messages
FITS = {"arith": "integer or floating-point", "int": "integer", "bool": "bool"}


def operator_fits(op: str, ty) -> bool:
    """Whether operator ``op`` applies to values of language type ``ty``."""
    fits = OPERATORS[op][0]
    if fits == "arith":
        return (ty.is_int or ty.is_float) and not ty.is_bool
    if fits == "int":
        return ty.is_int and not ty.is_bool
    return ty.is_bool


def group_builtin(op: str, ty) -> str:
    """``__spirv_Group<Name>`` of operator ``op`` over ``ty`` (which it fits)."""
    names = OPERATORS[op][1]
    if ty.is_float:
        key = "float"
    elif ty.is_bool:
        key = "bool"
    elif "int" in names:
        key = "int"
    else:
        key = "sint" if ty.signed else "uint"
    return "__spirv_Group" + names[key]


class GroupFunction(NamedTuple):
    kind: str       # barrier, algorithm, broadcast, vote, shuffle
    scope: int      # WORKGROUP or SUBGROUP
    detail: object  # group operation, vote name, shuffle built-in


def _both(name: str, kind: str, detail) -> dict:
    return {f"{name}_over_group" if kind == "algorithm" else f"{name}_group": GroupFunction(kind, WORKGROUP, detail),
            f"{name}_over_sub_group" if kind == "algorithm" else f"{name}_sub_group": GroupFunction(kind, SUBGROUP, detail)}


#: function name -> what it is; every one takes the ``nd_item`` first
GROUP_FUNCTIONS: dict[str, GroupFunction] = {
    "group_barrier": GroupFunction("barrier", WORKGROUP, None),
    "sub_group_barrier": GroupFunction("barrier", SUBGROUP, None),
    **_both("reduce", "algorithm", 0), **_both("inclusive_scan", "algorithm", 1),
    **_both("exclusive_scan", "algorithm", 2),
    **_both("any_of", "vote", "any"), **_both("all_of", "vote", "all"), **_both("none_of", "vote", "none"),
    "group_broadcast": GroupFunction("broadcast", WORKGROUP, None),
    "sub_group_broadcast": GroupFunction("broadcast", SUBGROUP, None),
    "select_from_sub_group": GroupFunction("shuffle", SUBGROUP, "__spirv_SubgroupShuffleINTEL"),
    "permute_sub_group_by_xor": GroupFunction("shuffle", SUBGROUP, "__spirv_SubgroupShuffleXorINTEL"),
    "shift_sub_group_left": GroupFunction("shuffle", SUBGROUP, "__spirv_SubgroupShuffleDownINTEL"),
    "shift_sub_group_right": GroupFunction("shuffle", SUBGROUP, "__spirv_SubgroupShuffleUpINTEL"),
}

#: how many arguments each kind takes (the nd_item included)
ARITY = {"barrier": 1, "algorithm": 3, "broadcast": 3, "vote": 2, "shuffle": 3}

#: nd_item member function -> the SPIR-V built-in it reads (all ``uint``)
SUB_GROUP_QUERIES = {
    "get_sub_group_id": "__spirv_BuiltInSubgroupId",
    "get_sub_group_local_id": "__spirv_BuiltInSubgroupLocalInvocationId",
    "get_sub_group_size": "__spirv_BuiltInSubgroupSize",
    "get_max_sub_group_size": "__spirv_BuiltInSubgroupMaxSize",
    "get_sub_group_range": "__spirv_BuiltInNumSubgroups",
}

_CODES = {("int", 8, True): "c", ("int", 8, False): "h", ("int", 16, True): "s", ("int", 16, False): "t",
          ("int", 32, True): "i", ("int", 32, False): "j", ("int", 64, True): "l", ("int", 64, False): "m",
          ("float", 16): "DF16_", ("float", 32): "f", ("float", 64): "d"}


def type_code(ty) -> str:
    """The Itanium code of a scalar language type (``float`` → ``f``)."""
    if ty.is_bool:
        return "b"
    if ty.is_float:
        return _CODES[("float", ty.bits)]
    return _CODES[("int", ty.bits, ty.signed)]


def mangle(name: str, codes: str) -> str:
    """``_Z<len><name><codes>``, as DPC++ names the SPIR-V built-ins."""
    return f"_Z{len(name)}{name}{codes or 'v'}"
