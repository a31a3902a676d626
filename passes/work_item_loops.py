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

Where each step lives: this module finds the kernels (``needs_lowering``),
runs step 1 and drives the rest (``_Lowering.lower``); the body's blocks and
lines are read by ``work_item_blocks.py``; step 2 is ``work_item_points.py``,
steps 3 and 4 ``work_item_values.py`` (with ``work_item_uniformity.py``), and
step 5 ``work_item_sweeps.py``; ``work_group_builtins.py`` knows the
built-ins and writes the group steps.

Tests: ``tests/lit/passes/lower-work-groups/``, ``tests/runtime/test_work_groups.py``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from .ir import Module, quote_name, split_operands, split_type
from .ir.bridge import inline_and_simplify, parse_assembly, value_types
from .manager import PassResult
from .support.diagnostics import UserError
from .work_group_builtins import Point, is_group_builtin
from .work_item_blocks import _bare, _blocks
from .work_item_points import IMPLICIT_BARRIER, ExchangePoints
from .work_item_sweeps import Sweeps, _number_loop_metadata
from .work_item_uniformity import Uniformity
from .work_item_values import CrossingValues
from .support.ir_contract import INTEL_REQD_SUB_GROUP_SIZE, WG_KERNEL, WG_POINTS, WG_STATIC_LOCAL, WG_SUB_GROUP_SIZE

__all__ = ["LowerWorkGroups", "LoweredKernel", "lowered_kernels", "lower_work_groups", "needs_lowering", "group_function_name", "WG_KERNEL",
           "WG_POINTS", "WG_STATIC_LOCAL", "WG_SUB_GROUP_SIZE"]

_ND_ITEM = '%"class.sycl::_V1::nd_item.'


class LoweringError(UserError):
    """A kernel this pass cannot lower (the message names it and why)."""


def group_function_name(kernel: str) -> str:
    return f"__minisycl_wg.{kernel}"


# -- which kernels ----------------------------------------------------------------------------

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
        if "ptr addrspace(3)" in fn.params or any(r in local or is_group_builtin(r) for r in reach):
            out.append(name)
    return out


# -- lowering one kernel ------------------------------------------------------------------------

class _Lowering(ExchangePoints, CrossingValues, Sweeps):
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

    def lower(self) -> str:
        """Steps 2-5 on the kernel (step 1 inlined it): the group function's definition."""
        blocks = _blocks(self.fn.body)
        allocas = self.take_allocas(blocks)
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
        self.place_slots(blocks, loads, slots, slot_ids)
        return self.group_function(self.emit(blocks, allocas, slots, slot_ids))

    def group_function(self, body: str) -> str:
        """The ``define`` of the group function around ``body``, with the string
        attributes that tell the runtime the rest (the module docstring)."""
        own = [p if " noalias " in p else re.sub(r"^ptr addrspace\(3\) ", "ptr addrspace(3) noalias ", p)
               for p in self.params]
        params = ", ".join(["ptr noalias %wg.g.rec", "ptr noalias %wg.g.local"] + own)
        descs, user = [], 0
        for p in self.points:               # the kernel's own points numbered 1.. as written
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
