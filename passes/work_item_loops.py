"""lower-work-groups: run a whole work-group on one CPU thread, as loops over its work-items.

A kernel that synchronises its work-group (barriers, group and sub-group
collectives, sub-group queries, work-group memory) cannot run as the plain
loop over work-items the runtime puts around other kernels: every work-item
must reach a barrier before any passes it.  This pass rewrites each such
kernel ``k`` into a *group function* that one call runs for a whole
work-group, with no thread, stack or Python per work-item (the technique of
AdaptiveCpp's continuation-based synchronisation, CBS; PoCL's work-item
loops are the same idea with the regions found statically).

The IR contract (DPC++'s spelling)
------------------------------------------------------------------------------

====================================  ==============================================================
kernel                                ``define spir_kernel void @k(%"class.sycl::_V1::nd_item.N" %it,
                                      ...)``: the ``nd_item`` by value, five ``[N x i64]`` fields
                                      (global id, local id, group, global range, local range)
work-group memory (``local T x[..]``)  ``@x = internal addrspace(3) global T undef`` (DPC++ hoists
                                      them to module level); used directly or in constant
                                      expressions
``local T*`` parameter                ``ptr addrspace(3) %p`` (a ``local_accessor``)
``group_barrier(it)``                 ``call void @_Z22__spirv_ControlBarrierjjj(i32 2, i32 2, i32 272)``
``sub_group_barrier(it)``             the same with execution scope ``i32 3``
reduce / scans                        ``@_Z17__spirv_GroupFAddiif(i32 scope, i32 op, float x)``,
                                      op: Reduce 0, InclusiveScan 1, ExclusiveScan 2; ``GroupIAdd``,
                                      ``GroupFAdd``, ``GroupIMulKHR``, ``GroupFMulKHR``,
                                      ``GroupSMin/UMin/FMin``, ``GroupSMax/UMax/FMax``,
                                      ``GroupBitwiseAndKHR/OrKHR/XorKHR``,
                                      ``GroupLogicalAndKHR/OrKHR``; the ``GroupNonUniform*`` names too
``group_broadcast``                   ``__spirv_GroupBroadcast(i32 scope, T x, iN linear_id)``
``any_of`` / ``all_of``               ``__spirv_GroupAny(i32 scope, i1 p)`` / ``__spirv_GroupAll``
                                      (``none_of`` is ``!any``)
shuffles                              ``__spirv_SubgroupShuffleINTEL(T x, i32 lane)``,
                                      ``...ShuffleXorINTEL(T x, i32 mask)``,
                                      ``...ShuffleDownINTEL(T cur, T next, i32 delta)``,
                                      ``...ShuffleUpINTEL(T prev, T cur, i32 delta)``; also
                                      ``__spirv_GroupNonUniformShuffle{,Xor,Up,Down}(i32 3, T, i32)``
sub-group queries (``i32``)           ``call i32 @_Z40__spirv_BuiltInSubgroupLocalInvocationIdv()``
                                      and ``SubgroupId``, ``SubgroupSize``, ``SubgroupMaxSize``,
                                      ``NumSubgroups`` (functions as current DPC++ declares them),
                                      or ``load i32, ptr addrspace(1) @__spirv_BuiltInSubgroupSize``
                                      (the older globals)
``reqd_sub_group_size(S)``            ``!intel_reqd_sub_group_size !{i32 S}`` on the kernel
``reqd_work_group_size(...)``         ``!reqd_work_group_size !{i32 ..}`` (checked by the runtime)
====================================  ==============================================================

Any mangling of those names is accepted (``_Z<len><name>...``): the operand
types are read from the call, not from the name.

The group function
------------------

``define i64 @"__minisycl_wg.k"(ptr noalias %rec, ptr noalias %local, <k's parameters after the nd_item>)``
with ``rec`` = i64 slots: group id [0..2], global range [3..5], local range
[6..8], (unused) [9], sub-group size [10] (read only when the size is not
known at compile time), and ``local`` the group's work-group memory.  That
memory is the group's own, reached through no kernel argument, so it is
``noalias``, and so is each ``local T*`` parameter (``ptr addrspace(3)``: the
launcher gives each its own range of that memory, after the static
variables): LLVM then vectorises a loop that copies a global buffer into
work-group memory without run-time overlap checks.  It returns 0, or
``1 + a * 65536 + b`` when the work-items stopped at different exchange
points ``a`` and ``b`` (0 is the end of the kernel).  String attributes tell
the runtime the rest: ``"minisycl-work-group-kernel"`` (the kernel),
``"minisycl-wg-points"`` (``|``-separated descriptions of points 1..),
``"minisycl-wg-static-local"`` (bytes of work-group memory at ``local``),
``"minisycl-wg-sub-group-size"`` (S, or 0 when read from ``rec[10]``).
The kernel itself is removed (its body is in the group function).

Algorithm
---------

1. Inline: every function the kernel reaches is marked ``alwaysinline`` and
   LLVM's always-inliner runs; then SROA (values in registers) and the
   instruction namer (every value and block named) on the kernel.
2. Exchange points: each barrier or collective call is split into a block
   of its own (the *point block* P_j starts with it).  Before it, the
   work-item stores the collective's operands into per-work-item slots; in
   P_j the call becomes a load of the work-item's result slot.
3. Regions: region 0 starts at the entry block, region j at P_j; a region is
   every block reachable from its start without entering a point block.  A
   block may belong to several regions; each region gets its own copy.
4. Values (``work_item_uniformity.py`` answers which are uniform and which
   can be recomputed): an SSA value whose use can be reached from its
   definition through a point block (a path that crosses a barrier) is, at
   that use, *recomputed* when it is a pure function of kernel arguments,
   constants, the ``nd_item`` and the group's values (so addresses stay affine
   in the local id: PoCL's and AdaptiveCpp's rematerialisation); else it is
   stored into a slot after its definition and loaded at that use.  A slot is
   an array with one element per work-item (struct of arrays: consecutive
   work-items, consecutive elements), or one element for the group when the
   value is uniform, every work-item defines it equally often and no region
   reaches a use of it from its definition (it is then read once, before the
   sweep).  Other values stay in registers (the definition then dominates the
   use in every copy).  Allocas that survive SROA become per-work-item arrays.
   Work-group memory becomes offsets into the buffer ``local``.
   A use that the definition dominates within every region (each work-item
   ran the definition earlier in the same sweep) reads the register.  A phi
   and a value flowing into it share one slot when neither's slot reads can
   see the other's store (an accumulator carried across barriers: no copy
   of one array into another per sweep).
   Implicit barriers: an innermost loop that touches memory, has no exchange
   point and that every work-item runs equally often (its header outside the
   influence of any divergent branch) gets a barrier at its header (PoCL's
   implicit loop barriers): a sweep then runs one iteration for all
   work-items, so the loop over work-items is the inner, vectorisable loop.
   Not so a loop of a constant trip count that LLVM unrolls whole (at most
   ``_UNROLL_BUDGET`` instructions unrolled): once unrolled, the loop over
   work-items is innermost anyway, and its loop-carried values stay in
   registers instead of going through slots once per iteration.
   They are described as ``the implicit loop barrier at loop %h`` and do not
   count in the numbering of the kernel's own barriers.
5. Sweeps: the group function loops ``dispatch → sweep of region r → check →
   step``.  A sweep runs region r for every work-item in linear order (nested
   loops, last dimension fastest, so consecutive work-items - and therefore
   a sub-group - are consecutive iterations LLVM can vectorise as SIMD
   lanes; the innermost carries ``llvm.loop.unroll.disable``, so that a short
   constant loop is vectorised rather than unrolled - except a sweep whose code
   compares the local id with 0 (``if (lid == 0) ...``, after a reduce), which
   carries ``llvm.loop.vectorize.enable false`` instead: LLVM peels work-item 0
   and the rest of the loop folds away; the local range is a
   constant when the kernel has ``reqd_work_group_size``, which the runtime
   checks at launch); each work-item ends at a point j (or the end of the
   kernel) and the sweep reduces these to their smallest and largest.  If
   they differ the function returns the error above: a barrier not every
   work-item reaches stops the kernel, it never hangs.  Otherwise a
   collective's group step runs once (reduce/scan/broadcast/vote/shuffle over
   the slots, per work-group or per sub-group segment; a work-group reduce has
   no slots: the sweep combines each work-item's value into one accumulator
   (``Point.fused``), reassociating floating-point values so that LLVM
   vectorises it, and interleaved (several accumulators) over an innermost
   range of at least ``WIDE_SWEEP_MIN`` work-items - known at compile time
   with ``reqd_work_group_size``, else chosen per group between two copies of
   the sweep; a work-group reduce, broadcast or vote writes its one result
   once) and the next sweep runs region j.

Sub-groups are the work-items in linear order cut into runs of S (the last
may be shorter).  S is ``!intel_reqd_sub_group_size``, else the pass option
``sub-group-size``, else read at run time.  Limitation: a sub-group barrier
or collective is executed as an exchange point of the whole work-group, so
all sub-groups must reach it the same number of times (a divergence between
sub-groups is reported as above, not run).

Tests: ``tests/lit/passes/lower-work-groups/``, ``tests/runtime/test_work_groups.py``.
"""
from __future__ import annotations

import itertools
import re
from collections import deque
from dataclasses import dataclass, field
from typing import ClassVar

from .ir.items import build_item
from .ir import Module, metadata_attachments, quote_name, split_operands, split_type
from .ir.bridge import inline_and_simplify, parse_assembly, value_types
from .manager import PassResult
from .srcloc import line_loc
from .support.diagnostics import UserError
from .work_group_builtins import QUERIES, WORKGROUP, Point, base_name, classify_call, combine, group_step, identity
from .work_item_uniformity import PURE, Uniformity, constant_trip_count, opcode, operand_names
from .support.ir_contract import (INTEL_REQD_SUB_GROUP_SIZE, REQD_WORK_GROUP_SIZE, WG_KERNEL, WG_POINTS,
                                  WG_STATIC_LOCAL, WG_SUB_GROUP_SIZE)

__all__ = ["LowerWorkGroups", "LoweredKernel", "lowered_kernels", "lower_work_groups", "needs_lowering", "group_function_name", "WG_KERNEL",
           "WG_POINTS", "WG_STATIC_LOCAL", "WG_SUB_GROUP_SIZE"]

_ND_ITEM = '%"class.sycl::_V1::nd_item.'
IMPLICIT_BARRIER = "implicit loop barrier"
_IMPLICIT = "  ; implicit barrier"
_REMAT_LIMIT = 32          # most instructions recomputed for one value
#: a loop of a constant trip count whose unrolled body would have at most this many
#: instructions gets no implicit barrier: LLVM's -O3 unrolls it whole (its full-unroll
#: threshold is 300), which leaves the loop over work-items innermost, and a barrier
#: would only send its loop-carried values through memory once per iteration
_UNROLL_BUDGET = 300


class LoweringError(UserError):
    """A kernel this pass cannot lower (the message names it and why)."""


def group_function_name(kernel: str) -> str:
    return f"__minisycl_wg.{kernel}"


# -- which kernels ----------------------------------------------------------------------------

def _is_builtin(name: str) -> bool:
    base = base_name(name)
    return base.startswith("__spirv_") and (base in QUERIES or base.startswith(
        ("__spirv_ControlBarrier", "__spirv_Group", "__spirv_Subgroup", "__spirv_BuiltInSubgroup",
         "__spirv_BuiltInNumSubgroups")))


def _local_globals(module: Module) -> set[str]:
    return {n for n, g in module.globals.items() if "addrspace(3)" in g.line.split("=", 1)[1].split(" global ")[0]
            and " global " in g.line}


def needs_lowering(module: Module) -> list[str]:
    """Kernels taking an ``nd_item`` whose call tree uses a work-group built-in,
    work-group memory or a ``local T*`` parameter."""
    local = _local_globals(module)
    out = []
    for name, fn in module.functions.items():
        if not fn.is_kernel or fn.is_declaration or _ND_ITEM not in fn.params.split(",")[0]:
            continue
        reach = module.closure([name])
        if "ptr addrspace(3)" in fn.params or any(r in local or _is_builtin(r) for r in reach):
            out.append(name)
    return out


# -- the body as blocks ----------------------------------------------------------------------------

_LOCAL = r'%(?:[-\w.$]+|"[^"]*")'
_LOCAL_RE = re.compile(_LOCAL)
_LABEL_RE = re.compile(r"label (" + _LOCAL + ")")
_RESULT = re.compile(r"^\s*(" + _LOCAL + r") = ")
_CALL = re.compile(r"\bcall\b[^@]*@([-\w.$]+|\"[^\"]*\")\((.*)\)")


def _bare(tok: str) -> str:
    return tok[2:-1] if tok.startswith('%"') else tok[1:]


@dataclass
class _Block:
    name: str
    lines: list[str]

    @property
    def term(self) -> str:
        return self.lines[-1]

    def succs(self) -> list[str]:
        return [_bare(t) for t in _LABEL_RE.findall(self.term)]


def _blocks(body: str) -> list[_Block]:
    out: list[_Block] = []
    pending = ""
    for raw in body.splitlines():
        line = raw.split(" ; ", 1)[0].rstrip() if raw.lstrip().startswith(";") is False else ""
        if not line.strip() or line.strip() == "}":
            continue
        if pending:                        # a switch's case lines
            pending += " " + line.strip()
            if line.strip() == "]":
                out[-1].lines.append(pending)
                pending = ""
            continue
        if not line.startswith(" "):
            label = line.split(":", 1)[0]
            out.append(_Block(_bare("%" + label) if label.startswith('"') else label, []))
            continue
        if line.rstrip().endswith("[") and " switch " in " " + line:
            pending = line.rstrip()
            continue
        if not out:                        # an unnamed entry block
            out.append(_Block("wg.entry0", []))
        out[-1].lines.append(line)
    return out


def _phi_pairs(line: str) -> tuple[str, list[tuple[str, str]]]:
    """``%x = phi T [ v, %b ], ...`` → (prefix up to the type, [(value, block)])."""
    head, rest = line.split(" phi ", 1)
    ty, tail = split_type(rest.lstrip())
    pairs = []
    for item in split_operands(tail.strip().split(", !", 1)[0] if "!" in tail else tail.strip()):
        v, b = split_operands(item.strip()[1:-1])
        pairs.append((v, _bare(b)))
    return f"{head} phi {ty}", pairs


def _render_phi(prefix: str, pairs) -> str:
    return prefix + " " + ", ".join(f"[ {v}, %{quote_name(b)} ]" for v, b in pairs)


def _subst(text: str, old: str, new: str) -> str:
    """``text`` with value ``%old`` renamed ``%new``."""
    return re.sub(re.escape("%" + quote_name(old)) + r'(?![-\w.$"])', f"%{quote_name(new)}", text)


def _is_phi(line: str) -> bool:
    return " = phi " in line


def _result(line: str) -> str | None:
    m = _RESULT.match(line)
    return _bare(m.group(1)) if m else None


def _where(line: str, module: Module) -> str:
    """``file:line`` of a call from its ``!minisycl.loc`` (``srcloc``), else ``line N``
    from its ``!dbg`` location."""
    loc = line_loc(module, line)
    if loc is not None:
        return f"{loc.file}:{loc.line}"
    ref = metadata_attachments(line).get("dbg")
    ops = module.metadata_operands(ref) if ref else []
    f = re.search(r"\bline: (\d+)", ops[0]) if ops else None
    return f"line {f.group(1)}" if f else ""


# -- lowering one kernel ------------------------------------------------------------------------

class _Lowering:
    def __init__(self, module: Module, text: str, kernel: str, sub_group_size: int):
        self.module, self.kernel = module, kernel
        fn = module.functions[kernel]
        self.fn = fn
        params = split_operands(fn.params[1:-1])
        self.item_type = split_type(params[0])[0]
        self.item = _bare(params[0].rsplit(" ", 1)[1])
        self.dims = int(self.item_type[len(_ND_ITEM):-1])
        self.params = params[1:]
        self.param_names = {_bare(p.rsplit(" ", 1)[1]) for p in self.params}
        self.type_names = set(module.types)
        _, self.types = value_types(text, kernel)
        reqd = module.function_metadata(kernel, INTEL_REQD_SUB_GROUP_SIZE)
        self.S = int(reqd[0].split()[-1]) if reqd else sub_group_size
        self.decls: set[str] = set()
        self.points: list[Point] = []          # point j is self.points[j - 1]
        self.point_block: dict[str, int] = {}  # block name -> j
        self.local = sorted(_local_globals(module) & set(module.closure([kernel])), key=list(module.globals).index)
        self.counter = 0

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"wg.{stem}{self.counter}"

    def error(self, what: str) -> LoweringError:
        return LoweringError(f"kernel '{self.kernel}': {what}")

    # step 2 and the static work-group memory -------------------------------------------------
    def split_points(self, blocks: list[_Block]) -> list[_Block]:
        out = []
        renamed: dict[str, str] = {}       # block whose terminator moved -> the block that has it now
        for b in blocks:
            cur = _Block(b.name, [])
            lines = list(b.lines)
            if b.name in self.implicit:        # an implicit barrier after the header's phis
                at = sum(1 for ln in lines if _is_phi(ln))
                lines.insert(at, _IMPLICIT)
            for line in lines:
                line = self.materialise_local(line, cur)
                m = _CALL.search(line)
                point = None
                if line == _IMPLICIT:
                    point = Point("barrier", WORKGROUP, IMPLICIT_BARRIER, where=f"loop %{quote_name(b.name)}")
                elif m and not _is_phi(line):
                    callee = m.group(1).strip('"')
                    args = []
                    for a in split_operands(m.group(2)):
                        ty, rest = split_type(a)
                        args.append((ty, rest.split()[-1] if rest.split() else ""))
                    res = _result(line)
                    try:
                        point = classify_call(callee, args, res or "", self.types.get(res, "") if res else "")
                    except ValueError as err:
                        raise self.error(str(err)) from None
                if point is None:
                    cur.lines.append(self.query(line))
                    continue
                if line != _IMPLICIT:
                    point.where = _where(line, self.module)
                self.points.append(point)
                j = len(self.points)
                if point.fused:           # combined into the group's accumulator (Point.fused)
                    ty, v = point.operands[0]
                    cur.lines += [f"  %wg.fa{j}.o = load {ty}, ptr %wg.x{j}_0",
                                  combine(point.op, ty, f"%wg.fa{j}.n", f"%wg.fa{j}.o", v, self.decls, reassoc=True),
                                  f"  store {ty} %wg.fa{j}.n, ptr %wg.x{j}_0"]
                else:
                    for k, (ty, v) in enumerate(point.operands):
                        cur.lines.append(f"  store {ty} {v}, ptr %wg.x{j}_{k}")
                pname = f"wg.p{j}"
                cur.lines.append(f"  br label %{pname}")
                out.append(cur)
                cur = _Block(pname, [])
                self.point_block[pname] = j
                if point.result:
                    cur.lines.append(f"  %{quote_name(point.result)} = load {point.type}, ptr %wg.y{j}")
            out.append(cur)
            if cur.name != b.name:
                renamed[b.name] = cur.name
        if renamed:                        # successors' phis now come from the last piece
            for b in out:
                for i, line in enumerate(b.lines):
                    if _is_phi(line):
                        prefix, pairs = _phi_pairs(line)
                        b.lines[i] = _render_phi(prefix, [(v, renamed.get(p, p)) for v, p in pairs])
        return out

    def materialise_local(self, line: str, block: _Block) -> str:
        """Constant expressions over work-group memory become instructions before ``line``."""
        if not self.local or "@" not in line:
            return line
        pattern = re.compile(r"\b(getelementptr|addrspacecast|bitcast|ptrtoint)((?: inbounds| nuw| nusw| inrange\(\S+\))*) \(")
        while True:
            found = None
            for m in pattern.finditer(line):
                start = m.end() - 1
                depth, end = 0, None
                for i in range(start, len(line)):
                    if line[i] == "(":
                        depth += 1
                    elif line[i] == ")":
                        depth -= 1
                        if depth == 0:
                            end = i
                            break
                inner = line[start + 1:end]
                if any(re.search("@" + re.escape(quote_name(g)) + r"\b", inner) for g in self.local) \
                        and not pattern.search(inner):
                    found = (m.start(), end, m.group(1) + m.group(2), inner)
                    break
            if found is None:
                return line
            if _is_phi(line):
                raise self.error("work-group memory in a constant expression of a phi is not supported")
            s, e, op, inner = found
            name = self.fresh("ce")
            block.lines.append(f"  %{name} = {op} {inner}")
            line = line[:s] + f"%{name}" + line[e + 1:]

    def query(self, line: str) -> str:
        """Sub-group queries become arithmetic on the work-item's index."""
        res = _result(line)
        if res is None:
            return line
        m = _CALL.search(line)
        kind = None
        if m:
            kind = QUERIES.get(base_name(m.group(1).strip('"')))
        else:
            g = re.search(r"= load i32, ptr(?: addrspace\(\d+\))? @(__spirv_BuiltIn\w+)", line)
            if g:
                kind = QUERIES.get(g.group(1))
        if kind is None:
            return line
        return f"  %{quote_name(res)} = add i32 %wg.{kind}, 0"

    # step 4 -----------------------------------------------------------------------------------
    def crossing(self, blocks: list[_Block]):
        """(values needing a slot, {(block, line index) -> values loaded there})."""
        by_name = {b.name: b for b in blocks}
        succ = {b.name: b.succs() for b in blocks}
        points = set(self.point_block)
        defs: dict[str, str] = {}
        for b in blocks:
            for line in b.lines:
                r = _result(line)
                if r:
                    defs[r] = b.name
        reach_cache: dict[str, set[str]] = {}

        def crossed_reach(d: str) -> set[str]:
            if d not in reach_cache:
                seen, out, q = set(), set(), deque()
                for s in succ[d]:
                    q.append((s, s in points))
                while q:
                    blk, c = q.popleft()
                    if (blk, c) in seen:
                        continue
                    seen.add((blk, c))
                    if c:
                        out.add(blk)
                    for s in succ[blk]:
                        q.append((s, c or s in points))
                reach_cache[d] = out
            return reach_cache[d]

        starts = [blocks[0].name] + sorted(points)
        dom_cache: dict[tuple[str, str], bool] = {}

        def dominated(d: str, u: str) -> bool:
            """Whether every path to ``u`` within a region (from the region's start,
            entering no point block) passes through ``d``: then each work-item ran the
            definition earlier in the same sweep, and the use reads its register."""
            if (d, u) not in dom_cache:
                seen, q = set(), deque(s for s in starts if s != d)
                while q and u not in seen:
                    x = q.popleft()
                    if x in seen:
                        continue
                    seen.add(x)
                    q.extend(s for s in succ[x] if s != d and s not in points)
                dom_cache[(d, u)] = u not in seen
            return dom_cache[(d, u)]

        slots: dict[str, str] = {}
        loads: dict[tuple[str, int], list[tuple[str, str]]] = {}     # (block, line) -> [(value, phi pred or "")]
        skip = self.param_names | {self.item}
        for b in blocks:
            for i, line in enumerate(b.lines):
                if _is_phi(line):
                    _, pairs = _phi_pairs(line)
                    uses = [(v, p) for v, p in pairs if v.startswith("%")]
                else:
                    r = _result(line)
                    body = line.split(" = ", 1)[1] if r else line
                    body = _LABEL_RE.sub("", body)
                    uses = [(t, "") for t in _LOCAL_RE.findall(body) if t not in self.type_names]
                for tok, pred in uses:
                    v = _bare(tok)
                    if v in skip or v not in defs:
                        continue
                    d = defs[v]
                    where = pred or b.name
                    if where == d or where not in crossed_reach(d) or dominated(d, where):
                        continue
                    slots[v] = self.types.get(v) or self._type_of(v, by_name[d])
                    loads.setdefault((b.name, i), []).append((v, pred))
        return slots, loads

    def _type_of(self, v: str, block: _Block) -> str:
        raise self.error(f"cannot tell the type of value %{v}")

    # uniformity and recomputation ----------------------------------------------------------------
    def _uniform_outside(self, name: str) -> bool:
        """Values not defined in the body: arguments and the group's values are uniform;
        of the per-work-item values only the sub-group maximum and count are."""
        if name in self.param_names or name.startswith("wg.g."):
            return True
        return name in ("wg.sgmax", "wg.nsg")

    def _uniform_line(self, line: str) -> bool:
        """The result of a work-group collective whose result is the same for all."""
        m = re.search(r"= load [^,]+, ptr %wg\.y(\d+)$", line)
        return bool(m) and self.points[int(m.group(1)) - 1].scalar_result

    def uniform_loop_headers(self, blocks: list[_Block]) -> set[str]:
        """Headers of the innermost loops that every work-item runs equally often, have
        no exchange point and touch memory: each gets an implicit barrier, so that a
        sweep over the work-items runs one iteration and the work-item loop is the
        inner (vectorisable) loop."""
        uni = Uniformity(blocks, self.type_names, self.item, lambda n: n in self.param_names)
        by_name = {b.name: b for b in blocks}
        out = set()
        for h, body in uni.innermost_uniform_loops():
            lines = [ln for n in body for ln in by_name[n].lines]
            calls = [m.group(1).strip('"') for m in (_CALL.search(ln) for ln in lines) if m]
            if any(_is_builtin(c) and base_name(c) not in QUERIES for c in calls):
                continue
            if not any(opcode(ln) in ("load", "store") for ln in lines):
                continue
            trips = constant_trip_count(blocks, h, body)
            size = sum(1 for ln in lines if opcode(ln) not in ("phi", "br"))
            if trips is not None and trips * size <= _UNROLL_BUDGET:
                continue               # LLVM unrolls it whole: the work-item loop is innermost then
            out.add(h)
        return out

    def remat(self, v: str, seen: frozenset = frozenset()) -> int:
        """How many instructions recompute ``v`` from arguments, constants, the nd_item
        and the group's values; 0 when it cannot be (a slot keeps it)."""
        cache = self.__dict__.setdefault("_remat", {})
        if v in cache:
            return cache[v]
        line = self.defs[v][1]
        size = 0
        if opcode(line) in PURE and v not in seen:
            size = 1
            for o in set(operand_names(line, self.type_names)):
                if o in self.defs:
                    k = self.remat(o, seen | {v})
                    if not k:
                        size = 0
                        break
                    size += k
            if size > _REMAT_LIMIT:
                size = 0
        cache[v] = size
        return size

    def leaves(self, v: str) -> set[str]:
        """The values a use of ``v`` in a later region reads from slots."""
        if not self.remat(v):
            return {v}
        out = set()
        for o in operand_names(self.defs[v][1], self.type_names):
            if o in self.defs:
                out |= self.leaves(o)
        return out

    def materialise(self, v: str, out: list[str], memo: dict, slots, slot_ids) -> str:
        """The name of ``v`` at a use in a later region: recomputed, read from a
        uniform slot (loaded before the sweep) or loaded from the work-item's slot;
        the lines it needs go to ``out``."""
        if v in memo:
            return memo[v]
        if self.remat(v):
            body = self.defs[v][1].split(" = ", 1)[1]
            for o in sorted(set(operand_names(self.defs[v][1], self.type_names)) & set(self.defs)):
                body = _subst(body, o, self.materialise(o, out, memo, slots, slot_ids))
            name = self.fresh("cp")
            out.append(f"  %{name} = {body}")
        elif v in self.scalar:
            name = f"wg.u{slot_ids[v]}"
        else:
            name = self.fresh("ld")
            out.append(f"  %{name} = load {slots[v]}, ptr %wg.sp{slot_ids[v]}")
        memo[v] = name
        return name

    def scalar_safe(self, w: str, sites: set[str], blocks: list[_Block]) -> bool:
        """Whether uniform value ``w`` can live in one slot for the group, read before
        each sweep: every work-item defines it equally often, and no region reaches
        a use that reads it from its definition (a later work-item of the same sweep
        would see the new value)."""
        if not self.uni.uniform(w):
            return False
        d = self.defs[w][0]
        if d in self.uni.influenced:
            return False
        by_name = {b.name: b for b in blocks}
        for start in [blocks[0].name] + list(self.point_block):
            members = self._members(start, by_name)
            if d not in members:
                continue
            if d in sites:
                return False
            seen, q = set(), deque(s for s in by_name[d].succs() if s in members)
            while q:
                x = q.popleft()
                if x in seen or x in self.point_block:
                    continue
                seen.add(x)
                if x in sites:
                    return False
                q.extend(s for s in by_name[x].succs() if s in members)
        return True

    def share_slots(self, blocks: list[_Block], loads, slots: dict[str, str]) -> dict[str, int]:
        """Slot ids of the kept values: a phi and a value flowing into it share one
        array when neither's slot reads can see the other's store (no read of one is
        reachable from a definition of the other without passing a definition of
        its own).  Loop-carried values across barriers (``acc = phi [acc', ..]``)
        then need no copy of the whole array from one slot into the other per sweep."""
        by_name = {b.name: b for b in blocks}
        reads: dict[str, list[tuple[str, int]]] = {}     # value -> positions where its slot is loaded
        for (bname, i), here in loads.items():
            for v, pred in here:
                for w in self.leaves(v):
                    reads.setdefault(w, []).append((pred, len(by_name[pred].lines)) if pred else (bname, i))
        at: dict[str, tuple[str, int]] = {}
        for b in blocks:
            for i, line in enumerate(b.lines):
                r = _result(line)
                if r in slots:
                    at[r] = (b.name, i)

        def path(src: tuple[str, int], dst: tuple[str, int], avoid: tuple[str, int]) -> bool:
            """A path from just after position ``src`` to ``dst`` not through ``avoid``."""
            (sb, si), (db, di), (ab, ai) = src, dst, avoid
            if sb == db and si < di and not (ab == sb and si < ai <= di):
                return True
            if ab == sb and ai > si:
                return False
            seen, q = set(), deque(by_name[sb].succs())
            while q:
                x = q.popleft()
                if x in seen:
                    continue
                seen.add(x)
                if x == db and not (ab == x and ai <= di):
                    return True
                if ab != x:
                    q.extend(by_name[x].succs())
            return False

        def apart(v: str, w: str) -> bool:
            return not any(path(at[v], r, at[w]) for r in reads.get(w, ())) and \
                not any(path(at[w], r, at[v]) for r in reads.get(v, ()))

        group = {v: {v} for v in slots}
        for b in blocks:
            for line in b.lines:
                p = _result(line)
                if not _is_phi(line) or p not in slots or p in self.scalar:
                    continue
                for val, _ in _phi_pairs(line)[1]:
                    v = _bare(val) if val.startswith("%") else None
                    if v not in slots or v in self.scalar or slots[v] != slots[p] or group[v] is group[p]:
                        continue
                    if all(apart(x, y) for x in group[p] for y in group[v]):
                        merged = group[p] | group[v]
                        for x in merged:
                            group[x] = merged
        ids: dict[str, int] = {}
        for v in sorted(slots):
            first = min(group[v])
            ids[v] = ids[first] if first in ids else len(set(ids.values()))
        return ids

    def _members(self, start: str, by_name) -> list[str]:
        """The blocks of the region that starts at ``start`` (BFS order)."""
        members, q, seen = [], deque([start]), {start}
        while q:
            b = q.popleft()
            members.append(b)
            for s in by_name[b].succs():
                if s not in seen and s not in self.point_block:
                    seen.add(s)
                    q.append(s)
        return members

    # step 5 -----------------------------------------------------------------------------------
    def lower(self) -> str:
        blocks = _blocks(self.fn.body)
        allocas = []
        for b in blocks:
            kept = []
            for line in b.lines:
                m = re.match(r"^\s*(" + _LOCAL + r") = alloca (.*)$", line)
                if m:
                    ty, rest = split_type(m.group(2))
                    rest = rest.strip().lstrip(",").strip()         # ", align 4" after a type
                    if rest and not rest.startswith("align"):
                        raise self.error("a variable-length alloca cannot be kept per work-item")
                    align = re.search(r"align (\d+)", rest)
                    allocas.append((_bare(m.group(1)), ty, align.group(1) if align else "16"))
                    continue
                kept.append(line)
            b.lines = kept
        self.implicit = self.uniform_loop_headers(blocks)
        blocks = self.split_points(blocks)
        self.uni = Uniformity(blocks, self.type_names, self.item, self._uniform_outside, self._uniform_line)
        self.defs = self.uni.defs
        crossing, loads = self.crossing(blocks)
        # each crossing value is recomputed at its use when it can be (``remat``); what it
        # is recomputed from, and every other crossing value, is kept in a slot
        sites: dict[str, set[str]] = {}
        for (bname, _), here in loads.items():
            for v, pred in here:
                for w in self.leaves(v):
                    sites.setdefault(w, set()).add(pred or bname)
        slots = {w: crossing.get(w) or self.types.get(w) or self._type_of(w, None) for w in sites}
        self.scalar = {w for w in slots if self.scalar_safe(w, sites[w], blocks)}
        slot_ids = self.share_slots(blocks, loads, slots)
        # stores after definitions, loads (or recomputations) at crossing uses
        for b in blocks:
            new = []
            nphi = sum(1 for ln in b.lines if _is_phi(ln))
            pending_phi_stores = []
            pred_loads: dict[str, list[str]] = {}
            memo: dict[str, str] = {}
            pred_memo: dict[str, dict[str, str]] = {}
            for i, line in enumerate(b.lines):
                here = loads.get((b.name, i), [])
                if _is_phi(line):
                    prefix, pairs = _phi_pairs(line)
                    for v, pred in here:
                        name = self.materialise(v, pred_loads.setdefault(pred, []), pred_memo.setdefault(pred, {}),
                                                slots, slot_ids)
                        pairs = [(f"%{quote_name(name)}" if (pv in (f"%{v}", f"%{quote_name(v)}") and pp == pred)
                                  else pv, pp) for pv, pp in pairs]
                    line = _render_phi(prefix, pairs)
                else:
                    for v, _ in here:
                        name = self.materialise(v, new, memo, slots, slot_ids)
                        head, body = line.split(" = ", 1) if _result(line) else ("", line)
                        body = _subst(body, v, name)
                        line = f"{head} = {body}" if head else body
                new.append(line)
                r = _result(line)
                if r in slots:
                    store = f"  store {slots[r]} %{quote_name(r)}, ptr %wg.sp{slot_ids[r]}"
                    if _is_phi(line):
                        pending_phi_stores.append(store)
                    else:
                        new.append(store)
                if i == nphi - 1 and pending_phi_stores:
                    new += pending_phi_stores
            b.lines = new
            b.pred_loads = pred_loads
        by_name = {b.name: b for b in blocks}
        for b in blocks:
            for pred, lns in getattr(b, "pred_loads", {}).items():
                p = by_name[pred]
                p.lines[-1:-1] = lns
        return self.emit(blocks, allocas, slots, slot_ids)

    def emit(self, blocks, allocas, slots, slot_ids) -> str:
        N = self.dims
        points = self.points
        entry = blocks[0].name
        by_name = {b.name: b for b in blocks}
        # group-level setup
        L = ["wg.g.entry:"]
        rec = lambda i, ty="i64": [f"  %wg.g.rp{i} = getelementptr i64, ptr %wg.g.rec, i64 {i}",  # noqa: E731
                                   f"  %wg.g.r{i} = load {ty}, ptr %wg.g.rp{i}, align 8"]
        reqd = self.module.function_metadata(self.kernel, REQD_WORK_GROUP_SIZE)
        fixed = [int(x.split()[-1]) for x in reqd] if reqd and len(reqd) == N else None
        for d in range(N):           # a required local range is a constant (the runtime checks it)
            L += rec(d) + rec(3 + d) + ([f"  %wg.g.r{6 + d} = add i64 {fixed[d]}, 0"] if fixed else rec(6 + d))
        L.append("  %wg.g.lb = addrspacecast ptr %wg.g.local to ptr addrspace(3)")
        L.append("  %wg.g.n0 = add i64 1, 0")
        for d in range(N):
            L.append(f"  %wg.g.n{d + 1} = mul i64 %wg.g.n{d}, %wg.g.r{6 + d}")
        L.append(f"  %wg.g.n = add i64 %wg.g.n{N}, 0")
        if self.S:
            L.append(f"  %wg.g.S = add i64 {self.S}, 0")
        else:
            L += rec(10)
            L.append("  %wg.g.S = call i64 @llvm.umax.i64(i64 %wg.g.r10, i64 1)")
            self.decls.add("declare i64 @llvm.umax.i64(i64, i64)")
        L += ["  %wg.g.S32 = trunc i64 %wg.g.S to i32", "  %wg.g.n32 = trunc i64 %wg.g.n to i32",
              "  %wg.g.sm1 = add i32 %wg.g.S32, -1", "  %wg.g.nsg0 = add i32 %wg.g.n32, %wg.g.sm1",
              "  %wg.g.nsg = udiv i32 %wg.g.nsg0, %wg.g.S32"]
        offset = 0
        local_names = {}
        for i, g in enumerate(self.local):
            size, align = self._global_size(g)
            offset = (offset + align - 1) // align * align
            L.append(f"  %wg.g.loc{i} = getelementptr i8, ptr addrspace(3) %wg.g.lb, i64 {offset}")
            local_names[g] = f"%wg.g.loc{i}"
            offset += size
        self.static_local = offset
        # per-work-item arrays, one per value (struct of arrays: consecutive work-items,
        # consecutive elements); a uniform value or result has one element for the group
        arrays = []                         # (per-wi pointer name, base name, type, align, one for the group)
        for i in sorted(set(slot_ids.values())):
            v = min(u for u, j in slot_ids.items() if j == i)
            arrays.append((f"wg.sp{i}", f"wg.g.s{i}", slots[v], "16", v in self.scalar))
        for name, ty, align in allocas:
            arrays.append((name, f"wg.g.a.{len(arrays)}", ty, align, False))
        for j, p in enumerate(points, 1):
            for k, (ty, _) in enumerate(p.operands):
                arrays.append((f"wg.x{j}_{k}", f"wg.g.x{j}_{k}", ty, "16", p.fused))
            if p.result:
                arrays.append((f"wg.y{j}", f"wg.g.y{j}", p.type, "16", p.scalar_result))
        for _, base, ty, align, one in arrays:
            L.append(f"  %{quote_name(base)} = alloca {ty}, i64 {1 if one else '%wg.g.n'}, align {align}")
        for j, p in enumerate(points, 1):
            if p.fused:
                ty = p.operands[0][0]
                L.append(f"  store {ty} {identity(p.op, ty)}, ptr %wg.g.x{j}_0")
        self.uniform_slots = [(i, slots[v]) for v, i in slot_ids.items() if v in self.scalar]
        L.append("  br label %wg.dispatch")
        starts = [entry] + [f"wg.p{j}" for j in range(1, len(points) + 1)]
        sweeps = [self.region(r, start, by_name, arrays, local_names) for r, start in enumerate(starts)]
        # a sweep that combines into a work-group reduce's accumulator is interleaved
        # over a long innermost range (_WIDE_MD): a required local range decides at
        # compile time; otherwise the sweep gets a wide copy (blocks wg.r<r>w.*),
        # chosen at wg.r<r>.v by the innermost range
        M, versioned = N - 1, set()
        for r, lines in enumerate(sweeps):
            if not any(map(_FUSED_COMBINE.search, lines)) or any(x.endswith(_PEEL_MD) for x in lines):
                continue
            if fixed is not None:
                if fixed[M] >= WIDE_SWEEP_MIN:
                    sweeps[r] = self.region(r, starts[r], by_name, arrays, local_names, wide=True)
                continue
            versioned.add(r)
            sweeps[r] = ([f"wg.r{r}.v:", f"  %wg.wide.r{r} = icmp uge i64 %wg.g.r{6 + M}, {WIDE_SWEEP_MIN}",
                          f"  br i1 %wg.wide.r{r}, label %wg.r{r}w.pre, label %wg.r{r}.pre"]
                         + lines + self.region(r, starts[r], by_name, arrays, local_names, wide=True, tag=f"r{r}w"))
        # dispatch
        first = [f"wg.r{r}.v" if r in versioned else f"wg.r{r}.pre" for r in range(len(starts))]
        cases = " ".join(f"i32 {j}, label %{first[j]}" for j in range(1, len(points) + 1))
        L += ["wg.dispatch:", "  %wg.g.state = phi i32 [ 0, %wg.g.entry ], [ %wg.g.mn, %wg.resume ]",
              f"  switch i32 %wg.g.state, label %{first[0]} [ {cases} ]"]
        for lines in sweeps:
            L += lines
        # check and route: each sweep reduced the points its work-items stopped at to
        # their smallest and largest; they differ when the work-items disagree
        tags = [f"r{r}" for r in range(len(starts))] + [f"r{r}w" for r in sorted(versioned)]
        mn = ", ".join(f"[ %wg.mn.{t}, %wg.{t}.t0 ]" for t in tags)
        mx = ", ".join(f"[ %wg.mx.{t}, %wg.{t}.t0 ]" for t in tags)
        L += ["wg.after:", f"  %wg.g.mn = phi i32 {mn}", f"  %wg.g.mx = phi i32 {mx}",
              "  %wg.g.bad = icmp ne i32 %wg.g.mn, %wg.g.mx",
              "  br i1 %wg.g.bad, label %wg.fail, label %wg.route",
              "wg.fail:", "  %wg.g.fa = zext i32 %wg.g.mn to i64", "  %wg.g.fb = zext i32 %wg.g.mx to i64",
              "  %wg.g.fa1 = shl i64 %wg.g.fa, 16", "  %wg.g.fab = or i64 %wg.g.fa1, %wg.g.fb",
              "  %wg.g.code = add i64 %wg.g.fab, 1", "  ret i64 %wg.g.code"]
        steps = [j for j, p in enumerate(points, 1) if p.kind != "barrier"]
        cases = " ".join(f"i32 {j}, label %wg.step{j}" for j in steps)
        L += ["wg.route:", f"  switch i32 %wg.g.mn, label %wg.resume [ i32 0, label %wg.ret {cases} ]"]
        body = "\n".join(L) + "\n"
        for j in steps:
            body += group_step(j, points[j - 1], self.decls)
        body += "wg.resume:\n  br label %wg.dispatch\nwg.ret:\n  ret i64 0\n"
        own = [p if " noalias " in p else re.sub(r"^ptr addrspace\(3\) ", "ptr addrspace(3) noalias ", p)
               for p in self.params]
        params = ", ".join(["ptr noalias %wg.g.rec", "ptr noalias %wg.g.local"] + own)
        descs, user = [], 0
        for p in points:               # the kernel's own points numbered 1.. as written
            if p.builtin == IMPLICIT_BARRIER:
                descs.append(f"the {IMPLICIT_BARRIER} at {p.where}")
            else:
                user += 1
                descs.append(p.describe(user).replace("|", "/"))
        descs = "|".join(descs)
        attrs = {WG_KERNEL: self.kernel, WG_POINTS: descs, WG_STATIC_LOCAL: str(self.static_local),
                 WG_SUB_GROUP_SIZE: str(self.S)}
        attr_text = " ".join(f'"{k}"="{v}"' for k, v in attrs.items())
        return f"define i64 @{quote_name(group_function_name(self.kernel))}({params}) {attr_text} {{\n{body}}}\n"

    def _global_size(self, g: str) -> tuple[int, int]:
        """Size and alignment of work-group variable ``g`` (LLVM's layout of its type)."""
        import llvmlite.binding as llvm
        ty = self.module.globals[g].value_type
        mod = parse_assembly("".join(t + "\n" for t in self.module.types.values()) + f"@x = global {ty} zeroinitializer\n")
        td = llvm.create_target_data("e-i64:64-n8:16:32:64")
        t = mod.get_global_variable("x").global_value_type
        align = re.search(r"align (\d+)", self.module.globals[g].line)
        return td.get_abi_size(t), max(int(align.group(1)) if align else 1, td.get_abi_alignment(t), 16)

    def region(self, r: int, start: str, by_name, arrays, local_names, wide: bool = False,
               tag: str | None = None) -> list[str]:
        """The sweep of region ``r``: blocks ``wg.<tag>.*`` and values ``*.<tag>``
        (``tag`` is ``r<r>`` unless given); ``wide``: its innermost loop is interleaved."""
        N, it = self.dims, self.item
        tag = tag or f"r{r}"
        sfx = f".{tag}"
        keep = self.param_names

        def rn(text: str) -> str:
            def sub(m):
                tok = m.group(0)
                if tok in self.type_names:
                    return tok
                name = _bare(tok)
                if name in keep or name.startswith(("wg.g.", "wg.r")):
                    return tok
                return "%" + quote_name(name + sfx)
            return _LOCAL_RE.sub(sub, text)

        members = self._members(start, by_name)
        members_set = set(members)
        pre, lat = f"wg.{tag}.pre", f"wg.{tag}.t{N - 1}"
        # uniform slots are read once, before the sweep
        L = [f"{pre}:"] + [f"  %wg.u{i}{sfx} = load {ty}, ptr %wg.g.s{i}" for i, ty in self.uniform_slots]
        L.append(f"  br label %wg.{tag}.h0")
        for d in range(N):
            prev = pre if d == 0 else f"wg.{tag}.h{d - 1}"
            first_mn, first_mx = ("-1", "0") if d == 0 else (f"%wg.mn{d - 1}{sfx}", f"%wg.mx{d - 1}{sfx}")
            L += [f"wg.{tag}.h{d}:",
                  f"  %wg.l{d}{sfx} = phi i64 [ 0, %{prev} ], [ %wg.l{d}n{sfx}, %wg.{tag}.t{d} ]",
                  f"  %wg.mn{d}{sfx} = phi i32 [ {first_mn}, %{prev} ], [ %wg.mn{sfx}, %wg.{tag}.t{d} ]",
                  f"  %wg.mx{d}{sfx} = phi i32 [ {first_mx}, %{prev} ], [ %wg.mx{sfx}, %wg.{tag}.t{d} ]",
                  f"  br label %{f'wg.{tag}.h{d + 1}' if d + 1 < N else f'wg.{tag}.b'}"]
        H = [f"wg.{tag}.b:"]
        H.append("  %wg.wi0 = add i64 0, 0")
        for d in range(N):
            H += [f"  %wg.wm{d} = mul i64 %wg.wi{d}, %wg.g.r{6 + d}", f"  %wg.wi{d + 1} = add i64 %wg.wm{d}, %wg.l{d}"]
        H.append(f"  %wg.wi = add i64 %wg.wi{N}, 0")

        for d in range(N):
            H += [f"  %wg.gm{d} = mul i64 %wg.g.r{d}, %wg.g.r{6 + d}", f"  %wg.gid{d} = add i64 %wg.gm{d}, %wg.l{d}"]
        dims = range(N)
        H += build_item(self.item_type, [[f"%wg.gid{d}" for d in dims], [f"%wg.l{d}" for d in dims],
                                         [f"%wg.g.r{d}" for d in dims], [f"%wg.g.r{3 + d}" for d in dims],
                                         [f"%wg.g.r{6 + d}" for d in dims]], "wg.it", quote_name(it))
        H += ["  %wg.wi32 = trunc i64 %wg.wi to i32", "  %wg.sgid = udiv i32 %wg.wi32, %wg.g.S32",
              "  %wg.sglid = urem i32 %wg.wi32, %wg.g.S32", "  %wg.sgbase = mul i32 %wg.sgid, %wg.g.S32",
              "  %wg.sgleft = sub i32 %wg.g.n32, %wg.sgbase",
              "  %wg.sgsize = call i32 @llvm.umin.i32(i32 %wg.sgleft, i32 %wg.g.S32)",
              "  %wg.sgmax = add i32 %wg.g.S32, 0", "  %wg.nsg = add i32 %wg.g.nsg, 0"]
        self.decls.add("declare i32 @llvm.umin.i32(i32, i32)")
        for ptr, base, ty, _, one in arrays:
            H.append(f"  %{quote_name(ptr)} = getelementptr {ty}, ptr %{quote_name(base)}, i64 {0 if one else '%wg.wi'}")
        H.append(f"  br label %{quote_name(start)}")
        L += [rn(h) if not h.endswith(":") else h for h in H]
        exits: dict[int, str] = {}
        for name in members:
            b = by_name[name]
            L.append(f"{quote_name(name + sfx)}:")
            for line in b.lines:
                if _is_phi(line):
                    prefix, pairs = _phi_pairs(line)
                    line = _render_phi(prefix, [(v, p) for v, p in pairs if p in members_set])
                if line.strip() == "ret void":
                    exits.setdefault(0, f"wg.{tag}.x0")
                    L.append(f"  br label %wg.{tag}.x0")
                    continue
                for g, loc in local_names.items():
                    line = re.sub(r"@" + re.escape(quote_name(g)) + r'(?![-\w.$"])', loc, line)

                def target(m):
                    t = _bare(m.group(1))
                    if t in self.point_block:
                        j = self.point_block[t]
                        exits.setdefault(j, f"wg.{tag}.x{j}")
                        return f"label %wg.{tag}.x{j}"
                    return m.group(0)
                if line is b.lines[-1] or "label %" in line:
                    line = _LABEL_RE.sub(target, line)
                L.append(rn(line))
        for j, lab in sorted(exits.items()):
            L += [f"{lab}:", f"  br label %{lat}"]
        # the point each work-item stopped at, reduced to the smallest and largest
        at = ", ".join(f"[ {j}, %{lab} ]" for j, lab in sorted(exits.items()))
        M = N - 1
        L += [f"{lat}:", f"  %wg.xid{sfx} = phi i32 {at}" if exits else f"  %wg.xid{sfx} = add i32 0, 0",
              f"  %wg.mn{sfx} = call i32 @llvm.umin.i32(i32 %wg.mn{M}{sfx}, i32 %wg.xid{sfx})",
              f"  %wg.mx{sfx} = call i32 @llvm.umax.i32(i32 %wg.mx{M}{sfx}, i32 %wg.xid{sfx})"]
        self.decls.add("declare i32 @llvm.umax.i32(i32, i32)")
        # a sweep that singles out the first work-item (``if (lid == 0)``) is left to
        # LLVM's loop peeling rather than its vectoriser (_PEEL_MD)
        md = _PEEL_MD if _singles_out_first(L, M, sfx) else _WIDE_MD if wide else _LOOP_MD
        for d in range(N - 1, -1, -1):
            nxt = f"wg.{tag}.t{d - 1}" if d > 0 else "wg.after"
            L += ([] if d == M else [f"wg.{tag}.t{d}:"]) + [f"  %wg.l{d}n{sfx} = add i64 %wg.l{d}{sfx}, 1",
                  f"  %wg.lc{d}{sfx} = icmp ult i64 %wg.l{d}n{sfx}, %wg.g.r{6 + d}",
                  f"  br i1 %wg.lc{d}{sfx}, label %wg.{tag}.h{d}, label %{nxt}" + (md if d == M else "")]
        return L


# -- the module -------------------------------------------------------------------------------------

#: the innermost loop over work-items is kept whole for the loop vectoriser: LLVM would
#: otherwise unroll a short constant one (a required work-group size) before it
#: vectorises, and the unrolled work-items are left scalar
_LOOP_MD = ", !llvm.loop !wg.loop"
#: a sweep whose work-item 0 does something the others do not: not vectorised,
#: so that LLVM peels that iteration and the rest of the loop folds away
_PEEL_MD = ", !llvm.loop !wg.peel"
#: a sweep that combines into a work-group reduce's accumulator carries one value
#: from work-item to work-item: interleaved, it keeps several accumulators and is
#: not bound by the latency of the combine (the count is given: LLVM takes none
#: from a loop it may not unroll).  Only over an innermost range of at least
#: WIDE_SWEEP_MIN work-items: a shorter one would leave the wide loop at once
_WIDE_MD = ", !llvm.loop !wg.wide"
WIDE_SWEEP_MIN = 128
#: what each placeholder's loops carry
_LOOP_KINDS = {"loop": ['!{!"llvm.loop.unroll.disable"}'], "peel": ['!{!"llvm.loop.vectorize.enable", i1 false}'],
               "wide": ['!{!"llvm.loop.unroll.disable"}', '!{!"llvm.loop.interleave.count", i32 4}']}
#: the combine of a fused work-group reduce (``Point.fused``) in a sweep
_FUSED_COMBINE = re.compile(r"%wg\.fa\d+\.n\.")
#: a work-item's local id read from the item (dimension in group 2), and a comparison with 0
_LOCAL_ID = re.compile(r"^\s*(%[-\w.$]+) = extractvalue %\S+ %\S+, 1, (\d+)\s*$")
_EQUALITY = re.compile(r"= icmp (?:eq|ne) i64 (%[-\w.$]+|0), (%[-\w.$]+|0)\s*$")
#: a value that is 0 written as an instruction (the front end widens an int 0 to compare it with a long)
_ZERO = re.compile(r"^\s*(%[-\w.$]+) = (?:(?:sext|zext|trunc) i\d+ 0 to i64|add i64 0, 0)\s*$")


def _singles_out_first(lines: list[str], dim: int, sfx: str) -> bool:
    """Whether a sweep's code compares the work-item's local id in the innermost
    dimension ``dim`` with 0 (``if (it.get_local_id(0) == 0)``)."""
    ids = {f"%wg.l{dim}{sfx}"}
    ids.update(m.group(1) for m in map(_LOCAL_ID.match, lines) if m is not None and int(m.group(2)) == dim)
    zeros = {"0"} | {m.group(1) for m in map(_ZERO.match, lines) if m is not None}
    return any(m is not None and ((m.group(1) in ids and m.group(2) in zeros) or (m.group(2) in ids and m.group(1) in zeros))
               for m in map(_EQUALITY.search, lines))


def _number_loop_metadata(text: str) -> str:
    """Give each ``!wg.loop``/``!wg.peel`` placeholder a distinct loop id after the
    module's own metadata (``_LOOP_KINDS``: the nodes they point to, made when used)."""
    used = [k for k in _LOOP_KINDS if f"!wg.{k}" in text]
    if not used:
        return text
    ids = itertools.count(max((int(n) for n in re.findall(r"^!(\d+) = ", text, re.M)), default=-1) + 1)
    node_id: dict[str, int] = {}
    for k in used:
        for node in _LOOP_KINDS[k]:
            if node not in node_id:
                node_id[node] = next(ids)
    lines = [f"!{i} = {node}" for node, i in node_id.items()]

    def number(m):
        i = next(ids)
        lines.append(f"!{i} = distinct !{{!{i}, {', '.join(f'!{node_id[n]}' for n in _LOOP_KINDS[m.group(1)])}}}")
        return f"!{i}"
    text = re.sub(r"!wg\.(loop|peel|wide)\b", number, text)
    return text + "\n".join(lines) + "\n"


def lower_work_groups(module: Module, sub_group_size: int = 0) -> list[str]:
    """Lower every kernel that needs it (``needs_lowering``) in place; the kernels lowered."""
    kernels = needs_lowering(module)
    if not kernels:
        return []
    inline = [n for n in module.closure(kernels) if n in module.functions and not module.functions[n].is_declaration
              and n not in kernels]
    for n in inline:
        module.update_function_attributes(n, add={"alwaysinline": None}, remove=["noinline", "optnone"])
    for k in kernels:
        module.update_function_attributes(k, remove=["noinline", "optnone"])
    text = inline_and_simplify(module.text(), kernels)
    m = Module.parse(text, module.name)
    new, decls = [], set()
    for k in kernels:
        low = _Lowering(m, text, k, sub_group_size)
        new.append(low.lower())
        decls |= low.decls
    for k in kernels:                 # (its body is in the group function now)
        m.functions.pop(k)
    out = m.text()
    out += "\n" + "\n".join(new)
    declared = set(m.functions)
    out += "".join(d + "\n" for d in sorted(decls) if d.split("@", 1)[1].split("(")[0] not in declared)
    out = _number_loop_metadata(out)
    try:
        canonical = str(parse_assembly(out))
    except RuntimeError as err:
        raise LoweringError(f"lowering work-groups produced invalid IR: {' '.join(str(err).split())[:600]}") from None
    module.take_contents_of(Module.parse(canonical, module.name))
    return kernels


@dataclass
class LoweredKernel:
    """What a launcher needs to know of one lowered kernel (``PassContext.work_groups``)."""
    function: str              # the group function: one call runs one work-group
    points: list[str]          # descriptions of its exchange points 1.. (for divergence errors)
    static_local: int          # bytes of static work-group memory
    sub_group_size: int        # the compiled-in sub-group size S


def lowered_kernels(module: Module, kernels: list[str]) -> dict[str, LoweredKernel]:
    """The facts of ``kernels``, lowered in ``module``, read from their group functions."""
    out = {}
    for k in kernels:
        attrs = module.function_attributes(group_function_name(k))
        out[k] = LoweredKernel(group_function_name(k), [p for p in (attrs.get(WG_POINTS) or "").split("|") if p],
                               int(attrs.get(WG_STATIC_LOCAL) or 0), int(attrs.get(WG_SUB_GROUP_SIZE) or 0))
    return out


@dataclass
class LowerWorkGroups:
    """See the module docstring.  Records what it lowered in ``PassContext.work_groups``."""
    name: ClassVar[str] = "lower-work-groups"
    sub_group_size: int = field(default=0, metadata={"help": "sub-group size of kernels without "
                                                             "reqd_sub_group_size (0: read at run time)"})

    def run(self, module: Module, am) -> PassResult:
        done = lower_work_groups(module, self.sub_group_size)
        am.ctx.work_groups = lowered_kernels(module, done)
        return PassResult.NONE if done else PassResult.ALL
