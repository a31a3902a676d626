"""The work-group built-ins of the IR contract, and the IR of their group steps.

Which calls ``lower-work-groups`` (``work_item_loops.py``) treats as exchange
points and queries, spelled as DPC++ spells them (see the table in that
module's docstring), and for each collective the IR of its *group step*: the
code that runs once per work-group between two sweeps over its work-items,
reading every work-item's operands from per-work-item slots and writing every
work-item's result.

A step walks the work-group in *segments*: the whole group for work-group
scope, consecutive runs of the sub-group size S (the last may be shorter) for
sub-group scope, so one template serves both.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Point", "classify_call", "is_group_builtin", "QUERIES", "identity", "group_step", "WORKGROUP", "SUBGROUP"]

WORKGROUP, SUBGROUP = 2, 3           # SPIR-V Scope values

#: SPIR-V GroupOperation values
REDUCE, INCLUSIVE, EXCLUSIVE = 0, 1, 2

#: group arithmetic built-in (name without __spirv_Group / __spirv_GroupNonUniform) -> combining operation
_ARITH = {"IAdd": "add", "FAdd": "fadd", "IMulKHR": "mul", "IMul": "mul", "FMulKHR": "fmul", "FMul": "fmul",
          "SMin": "smin", "UMin": "umin", "FMin": "fmin", "SMax": "smax", "UMax": "umax", "FMax": "fmax",
          "BitwiseAndKHR": "and", "BitwiseOrKHR": "or", "BitwiseXorKHR": "xor",
          "BitwiseAnd": "and", "BitwiseOr": "or", "BitwiseXor": "xor",
          "LogicalAndKHR": "and", "LogicalOrKHR": "or", "LogicalAnd": "and", "LogicalOr": "or"}

#: sub-group queries: built-in name -> what the lowering computes
QUERIES = {"__spirv_BuiltInSubgroupLocalInvocationId": "sglid", "__spirv_BuiltInSubgroupId": "sgid",
           "__spirv_BuiltInSubgroupSize": "sgsize", "__spirv_BuiltInSubgroupMaxSize": "sgmax",
           "__spirv_BuiltInNumSubgroups": "nsg",
           "__spirv_SubgroupLocalInvocationId": "sglid", "__spirv_SubgroupId": "sgid",
           "__spirv_SubgroupSize": "sgsize", "__spirv_SubgroupMaxSize": "sgmax", "__spirv_NumSubgroups": "nsg"}

_MANGLED = re.compile(r"_Z(\d+)(\w+)")


def base_name(symbol: str) -> str:
    """``_Z17__spirv_GroupFAddiif`` → ``__spirv_GroupFAdd``; C names as they are."""
    m = _MANGLED.fullmatch(symbol)
    if m:
        n = int(m.group(1))
        return m.group(2)[:n]
    return symbol


def is_group_builtin(name: str) -> bool:
    """Whether ``name`` (mangled or not) is a work-group built-in: a barrier, a
    group or sub-group collective or a sub-group query."""
    base = base_name(name)
    return base.startswith("__spirv_") and (base in QUERIES or base.startswith(
        ("__spirv_ControlBarrier", "__spirv_Group", "__spirv_Subgroup", "__spirv_BuiltInSubgroup",
         "__spirv_BuiltInNumSubgroups")))


@dataclass
class Point:
    """One exchange point: a barrier or a collective call."""
    kind: str                   # barrier, arith, vote, broadcast, shuffle, shuffle_xor, shuffle_down, shuffle_up
    scope: int
    builtin: str
    op: str = ""                # combining operation (arith, vote)
    group_op: int = REDUCE
    result: str = ""            # the call's result name (without %), "" for barriers
    type: str = ""              # the result / value type
    operands: list = field(default_factory=list)    # [(type, value)] stored per work-item
    where: str = ""

    @property
    def fused(self) -> bool:
        """A work-group reduce: each work-item's value is combined into one
        accumulator during the sweep (``%wg.g.x<j>_0``, one element, starting at
        the identity) instead of being stored per work-item for the step to read
        back: the sweep is then the reduction loop itself, which LLVM vectorises
        (the order of a reduce is SYCL's to leave open)."""
        return self.kind == "arith" and self.scope == WORKGROUP and self.group_op == REDUCE

    @property
    def scalar_result(self) -> bool:
        """A work-group-scope result every work-item gets the same of: the step writes
        it once (``%wg.g.y<j>`` is one element), not once per work-item."""
        return self.scope == WORKGROUP and (self.kind in ("vote", "broadcast")
                                            or (self.kind == "arith" and self.group_op == REDUCE))

    def describe(self, index: int) -> str:
        what = {"barrier": "sub-group barrier" if self.scope == SUBGROUP else "work-group barrier"}.get(
            self.kind, f"{'sub-group' if self.scope == SUBGROUP else 'work-group'} collective")
        return f"{what} #{index} ({self.builtin}{', ' + self.where if self.where else ''})"


def _const(value: str) -> int | None:
    try:
        return int(value)
    except ValueError:
        return None


def classify_call(callee: str, args: list[tuple[str, str]], result: str, rtype: str) -> Point | None:
    """The exchange point a call to ``callee`` is, or None.  ``args``: (type, value)
    pairs.  Raises ``ValueError`` for a misuse (a scope that is not a constant)."""
    name = base_name(callee)
    if not name.startswith("__spirv_"):
        return None

    def scope_of(i: int) -> int:
        s = _const(args[i][1]) if len(args) > i else None
        if s not in (WORKGROUP, SUBGROUP):
            raise ValueError(f"{name}: the execution scope must be the constant 2 (work-group) or 3 (sub-group)")
        return s

    if name == "__spirv_ControlBarrier":
        return Point("barrier", scope_of(0), name)
    for prefix in ("__spirv_GroupNonUniform", "__spirv_Group"):
        if name.startswith(prefix) and name[len(prefix):] in _ARITH:
            op = _const(args[1][1])
            if op not in (REDUCE, INCLUSIVE, EXCLUSIVE):
                raise ValueError(f"{name}: the group operation must be the constant 0, 1 or 2")
            return Point("arith", scope_of(0), name, _ARITH[name[len(prefix):]], op, result, rtype, [args[2]])
    if name in ("__spirv_GroupAll", "__spirv_GroupAny", "__spirv_GroupNonUniformAll", "__spirv_GroupNonUniformAny"):
        return Point("vote", scope_of(0), name, "and" if name.endswith("All") else "or", REDUCE, result, rtype,
                     [args[1]])
    if name in ("__spirv_GroupBroadcast", "__spirv_GroupNonUniformBroadcast"):
        if args[2][0].startswith("<"):
            raise ValueError(f"{name}: only a linear (scalar) local id is supported")
        return Point("broadcast", scope_of(0), name, "", REDUCE, result, rtype, [args[1], args[2]])
    intel = {"__spirv_SubgroupShuffleINTEL": "shuffle", "__spirv_SubgroupShuffleXorINTEL": "shuffle_xor",
             "__spirv_SubgroupShuffleDownINTEL": "shuffle_down", "__spirv_SubgroupShuffleUpINTEL": "shuffle_up"}
    if name in intel:
        return Point(intel[name], SUBGROUP, name, "", REDUCE, result, rtype, list(args))
    uniform = {"__spirv_GroupNonUniformShuffle": "shuffle", "__spirv_GroupNonUniformShuffleXor": "shuffle_xor",
               "__spirv_GroupNonUniformShuffleDown": "shuffle_down", "__spirv_GroupNonUniformShuffleUp": "shuffle_up"}
    if name in uniform:
        kind = uniform[name]
        ops = [args[1], args[1], args[2]] if kind in ("shuffle_down", "shuffle_up") else [args[1], args[2]]
        return Point(kind, scope_of(0), name, "", REDUCE, result, rtype, ops)
    return None


# -- identities and combining -------------------------------------------------------------------

_FLOAT_SUFFIX = {"half": "f16", "float": "f32", "double": "f64"}


def identity(op: str, ty: str) -> str:
    """SYCL's known identity of ``op`` over ``ty``, as an LLVM constant."""
    if ty in _FLOAT_SUFFIX:
        half = ty == "half"
        return {"fadd": "0xH0000" if half else "0.0", "fmul": "0xH3C00" if half else "1.0",
                "fmin": "0xH7C00" if half else "0x7FF0000000000000",
                "fmax": "0xHFC00" if half else "0xFFF0000000000000"}[op]
    bits = int(ty[1:])
    if bits == 1:
        return {"and": "true", "or": "false", "xor": "false", "add": "false", "umax": "false", "umin": "true"}.get(op, "false")
    return str({"add": 0, "or": 0, "xor": 0, "umax": 0, "mul": 1, "and": -1, "umin": -1,
                "smin": (1 << (bits - 1)) - 1, "smax": -(1 << (bits - 1))}[op])


def combine(op: str, ty: str, out: str, a: str, b: str, decls: set, reassoc: bool = False) -> str:
    """One line: ``out = a op b``; intrinsic declarations it needs go to ``decls``.
    ``reassoc``: a floating-point add or multiply may be reassociated (a reduction,
    whose order SYCL leaves open: LLVM then vectorises the group step)."""
    if op in ("fadd", "fmul") and reassoc:
        return f"  {out} = {op} reassoc {ty} {a}, {b}"
    if op in ("add", "mul", "and", "or", "xor", "fadd", "fmul"):
        return f"  {out} = {op} {ty} {a}, {b}"
    if op in ("smin", "smax", "umin", "umax"):
        intr = f"llvm.{op}.{ty}"
    elif op in ("fmin", "fmax"):
        intr = f"llvm.{'minnum' if op == 'fmin' else 'maxnum'}.{_FLOAT_SUFFIX[ty]}"
    else:
        raise ValueError(f"no combining operation '{op}'")
    decls.add(f"declare {ty} @{intr}({ty}, {ty})")
    return f"  {out} = call {ty} @{intr}({ty} {a}, {ty} {b})"


# -- group steps --------------------------------------------------------------------------------

def group_step(j: int, p: Point, decls: set, done: str = "wg.resume") -> str:
    """The blocks of point ``j``'s group step (label ``wg.step<j>``), ending in a
    branch to ``done``.  Operand k of work-item i is at ``%wg.g.x<j>_<k>[i]``, its
    result goes to ``%wg.g.y<j>[i]``; ``%wg.g.n`` work-items, segment length
    ``%wg.g.S`` for sub-group scope."""
    t = f"%wg.g.t{j}."
    ty = p.type
    seg = "%wg.g.S" if p.scope == SUBGROUP else "%wg.g.n"
    L = [f"wg.step{j}:", f"  br label %wg.st{j}.s",
         f"wg.st{j}.s:",
         f"  {t}s = phi i64 [ 0, %wg.step{j} ], [ {t}e, %wg.st{j}.se ]",
         f"  {t}e0 = add i64 {t}s, {seg}",
         f"  {t}e = call i64 @llvm.umin.i64(i64 {t}e0, i64 %wg.g.n)",
         f"  {t}size = sub i64 {t}e, {t}s"]
    decls.add("declare i64 @llvm.umin.i64(i64, i64)")

    def x(k: int, idx: str, name: str) -> list[str]:
        kt = p.operands[k][0]
        return [f"  {t}{name}.p = getelementptr {kt}, ptr %wg.g.x{j}_{k}, i64 {idx}",
                f"  {t}{name} = load {kt}, ptr {t}{name}.p"]

    def as_i64(k: int, v: str, name: str) -> list[str]:
        kt = p.operands[k][0]
        return [f"  {name} = zext {kt} {v} to i64"] if kt != "i64" else [f"  {name} = add i64 {v}, 0"]

    def y(idx: str, v: str, name: str) -> list[str]:
        return [f"  {t}{name}.q = getelementptr {ty}, ptr %wg.g.y{j}, i64 {idx}", f"  store {ty} {v}, ptr {t}{name}.q"]

    if p.fused:
        L += [f"  {t}acc1 = load {ty}, ptr %wg.g.x{j}_0",
              f"  store {ty} {identity(p.op, ty)}, ptr %wg.g.x{j}_0",      # the next sweep starts afresh
              f"  br label %wg.st{j}.f0"]
        fill, value = True, f"{t}acc1"
    elif p.kind in ("arith", "vote"):
        fill = p.kind == "vote" or p.group_op == REDUCE
        L += [f"  br label %wg.st{j}.i", f"wg.st{j}.i:",
              f"  {t}i = phi i64 [ {t}s, %wg.st{j}.s ], [ {t}i1, %wg.st{j}.i ]",
              f"  {t}acc = phi {ty} [ {identity(p.op, ty)}, %wg.st{j}.s ], [ {t}acc1, %wg.st{j}.i ]"]
        L += x(0, f"{t}i", "v")
        L.append(combine(p.op, ty, f"{t}acc1", f"{t}acc", f"{t}v", decls, reassoc=fill))
        if not fill:
            L += y(f"{t}i", f"{t}acc1" if p.group_op == INCLUSIVE else f"{t}acc", "r")
        L += [f"  {t}i1 = add i64 {t}i, 1", f"  {t}c = icmp ult i64 {t}i1, {t}e",
              f"  br i1 {t}c, label %wg.st{j}.i, label %wg.st{j}.{'f0' if fill else 'se'}"]
        value = f"{t}acc1"
    elif p.kind == "broadcast":
        L += x(1, f"{t}s", "id0")
        L += as_i64(1, f"{t}id0", f"{t}id")
        L += [f"  {t}ok = icmp ult i64 {t}id, {t}size", f"  {t}off = select i1 {t}ok, i64 {t}id, i64 0",
              f"  {t}src = add i64 {t}s, {t}off"]
        L += x(0, f"{t}src", "bv")
        L.append(f"  br label %wg.st{j}.f0")
        fill, value = True, f"{t}bv"
    else:        # shuffles: each work-item reads its source lane in its segment
        L += [f"  br label %wg.st{j}.i", f"wg.st{j}.i:",
              f"  {t}i = phi i64 [ {t}s, %wg.st{j}.s ], [ {t}i1, %wg.st{j}.i ]",
              f"  {t}lane = sub i64 {t}i, {t}s"]
        last = len(p.operands) - 1
        L += x(last, f"{t}i", "d0")
        L += as_i64(last, f"{t}d0", f"{t}d")
        L += x(0, f"{t}i", "own")
        if p.kind == "shuffle":
            L += [f"  {t}src = add i64 {t}d, 0"]
        elif p.kind == "shuffle_xor":
            L += [f"  {t}src = xor i64 {t}lane, {t}d"]
        elif p.kind == "shuffle_down":
            L += [f"  {t}src = add i64 {t}lane, {t}d"]
        else:
            L += [f"  {t}src = sub i64 {t}lane, {t}d"]      # negative: wraps to a huge lane
        L += [f"  {t}in = icmp ult i64 {t}src, {t}size", f"  {t}sc = select i1 {t}in, i64 {t}src, i64 {t}lane",
              f"  {t}at = add i64 {t}s, {t}sc"]
        L += x(0 if p.kind != "shuffle_up" else 1, f"{t}at", "got")
        if p.kind in ("shuffle_down", "shuffle_up"):
            # SPIR-V INTEL: lanes past the sub-group come from the other operand (next / previous)
            other = 1 if p.kind == "shuffle_down" else 0
            if p.kind == "shuffle_down":
                L += [f"  {t}o = sub i64 {t}src, %wg.g.S"]
            else:
                L += [f"  {t}o = add i64 {t}src, %wg.g.S"]
            L += [f"  {t}oin = icmp ult i64 {t}o, {t}size", f"  {t}osc = select i1 {t}oin, i64 {t}o, i64 {t}lane",
                  f"  {t}oat = add i64 {t}s, {t}osc"]
            L += x(other, f"{t}oat", "ogot")
            L += [f"  {t}alt = select i1 {t}oin, {ty} {t}ogot, {ty} {t}own"]
            L += [f"  {t}res = select i1 {t}in, {ty} {t}got, {ty} {t}alt"]
        else:
            L += [f"  {t}res = select i1 {t}in, {ty} {t}got, {ty} {t}own"]
        L += y(f"{t}i", f"{t}res", "r")
        L += [f"  {t}i1 = add i64 {t}i, 1", f"  {t}c = icmp ult i64 {t}i1, {t}e",
              f"  br i1 {t}c, label %wg.st{j}.i, label %wg.st{j}.se"]
        fill, value = False, ""
    if fill and p.scalar_result:
        L += [f"wg.st{j}.f0:", f"  store {ty} {value}, ptr %wg.g.y{j}", f"  br label %wg.st{j}.se"]
    elif fill:
        L += [f"wg.st{j}.f0:", f"  br label %wg.st{j}.f", f"wg.st{j}.f:",
              f"  {t}k = phi i64 [ {t}s, %wg.st{j}.f0 ], [ {t}k1, %wg.st{j}.f ]"]
        L += y(f"{t}k", value, "w")
        L += [f"  {t}k1 = add i64 {t}k, 1", f"  {t}kc = icmp ult i64 {t}k1, {t}e",
              f"  br i1 {t}kc, label %wg.st{j}.f, label %wg.st{j}.se"]
    L += [f"wg.st{j}.se:", f"  {t}more = icmp ult i64 {t}e, %wg.g.n",
          f"  br i1 {t}more, label %wg.st{j}.s, label %{done}"]
    return "\n".join(L) + "\n"
