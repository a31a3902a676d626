"""The work-group and sub-group built-ins of the IR contract, as NVPTX IR.

``lower-to-nvptx`` (``lower_to_nvptx.py``) turns every declared ``__spirv_*``
built-in a device module calls (the names of ``work_group_builtins.py``: the
front end's ``frontend/group_ops.py`` and DPC++'s non-uniform forms) into an
internal ``alwaysinline convergent`` definition of the same name and type, so
call sites stay as they are and LLVM's inliner (``emit_ptx`` runs -O3) folds the
constant scope and group-operation arguments away.  The definitions call
helpers (``@__minisycl_nv.*``) made once per (operation, type):

* **Sub-groups are warps.**  A thread block's threads, in linear order
  (``tid.x`` fastest: SYCL's linear local id, as ``lower-to-nvptx`` maps
  dimensions), are cut into warps of 32; the last one is partial when the
  work-group size is not a multiple of 32.  Every warp operation uses the
  member mask of the caller's sub-group (``(1 << size) - 1`` for a partial
  one) and reads only lanes inside it, so the results are the CPU's
  (``work_group_builtins.group_step``) there too.
* **Shuffles** are ``shfl.sync.idx`` from a source lane computed as the CPU
  computes it (a lane outside the sub-group gives the caller's own value;
  ``ShuffleDown``/``Up``'s second operand past the sub-group); values that are
  not 32 bits wide are widened (8/16 bits, half) or split in two (64 bits).
* **Sub-group reduce**: a ``shfl.sync.down`` tree (a lane adds its partner only
  when the partner is inside the sub-group) then ``shfl.sync.idx`` from lane 0,
  so every lane gets the same bits; **scans**: ``shfl.sync.up`` steps
  (Hillis-Steele), the exclusive scan one more ``up`` by 1.  Votes are
  ``vote.sync.any/all``; the sub-group barrier ``bar.warp.sync``.
* **Work-group algorithms**: each warp's total (scans: the total of its last
  lane) goes to ``@__minisycl_nv.scratch`` (34 ``i64`` slots of ``.shared``),
  a barrier, then every full warp scans the warp totals with ``shfl`` (all
  lanes, the same order: every work-item gets the same bits) and takes its
  prefix; a partial last warp gets its prefix through the scratch after one more
  barrier; a closing barrier lets the next collective reuse the scratch.  A
  work-group of one warp needs no barrier at all.  Votes are ``bar.red.or/and``
  (``llvm.nvvm.barrier0.or/and``); a broadcast goes through the scratch.
* **Reducers** (``reducer<T, op>``, used by the kernel wrapper): the work-group
  reduce above, then one atomic per work-group into the result
  (``atomicrmw``; a compare-and-swap loop for ``multiplies``).

What is not one of these (a vector operand, a cluster size) stays declared and
``lower-to-nvptx`` refuses it by name.
"""
from __future__ import annotations

from .ir import Module, quote_name, split_operands, split_type
from .work_group_builtins import SUBGROUP, base_name, combine, identity
from .work_group_builtins import _ARITH as ARITH

__all__ = ["Builtins", "SCRATCH", "DYNAMIC_SHARED", "BARRIER", "reducer_op", "LANG_TYPES"]

SCRATCH = "__minisycl_nv.scratch"
#: the ``extern .shared`` array every ``local T*`` kernel argument is an offset into
DYNAMIC_SHARED = "__minisycl_dynamic_shared"      # external: a PTX name (no dots)
BARRIER = "llvm.nvvm.barrier.cta.sync.aligned.all"
_P = "__minisycl_nv."
_WIDTH = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "half": 16, "float": 32, "double": 64}
_SREG = "llvm.nvvm.read.ptx.sreg."

#: kernel-language element type -> (LLVM type, signed)
LANG_TYPES = {"bool": ("i1", False), "char": ("i8", True), "uchar": ("i8", False), "short": ("i16", True),
              "ushort": ("i16", False), "int": ("i32", True), "uint": ("i32", False), "long": ("i64", True),
              "ulong": ("i64", False), "half": ("half", True), "float": ("float", True),
              "double": ("double", True)}


def reducer_op(op: str, elem: str) -> tuple[str, str]:
    """(LLVM type, combining operation of ``combine``) of a ``reducer<elem, op>``."""
    ty, signed = LANG_TYPES[elem]
    fl = ty in ("half", "float", "double")
    name = {"plus": "fadd" if fl else "add", "multiplies": "fmul" if fl else "mul",
            "minimum": "fmin" if fl else ("smin" if signed else "umin"),
            "maximum": "fmax" if fl else ("smax" if signed else "umax"),
            "bit_and": "and", "bit_or": "or", "bit_xor": "xor", "logical_and": "and", "logical_or": "or"}[op]
    return ty, name


def _q(name: str) -> str:
    return "@" + quote_name(name)


#: the value types the collectives take
_SCALAR = ("i1", "i8", "i16", "i32", "i64", "half", "float", "double")


class Builtins:
    """The definitions made for one module: ``define(module)`` replaces its
    built-in declarations; ``text()`` is every definition and declaration made."""

    def __init__(self):
        self.defs: dict[str, str] = {}
        self.decls: dict[str, str] = {}
        self.uses_scratch = False

    # -- bookkeeping ------------------------------------------------------------------------
    def _decl(self, name: str, line: str) -> str:
        self.decls.setdefault(name, line)
        return _q(name)

    def _intr(self, name: str, ret: str, params: list[str]) -> str:
        return self._decl(name, f"declare {ret} @{name}({', '.join(params)})")

    def _helper(self, name: str, make) -> str:
        if name not in self.defs:
            self.defs[name] = ""                # recursion guard: helpers call helpers
            self.defs[name] = make()
        return _q(name)

    def _combine(self, op: str, ty: str, out: str, a: str, b: str) -> str:
        found: set = set()
        line = combine(op, ty, out, a, b, found)
        for d in found:
            self._decl(d.split("@")[1].split("(")[0], d)
        return line

    def text(self, declared: set[str]) -> str:
        """The definitions, and the declarations ``declared`` (names the module declares) lacks."""
        out = [d for d in self.defs.values()]
        if self.uses_scratch:
            out.insert(0, f"@{quote_name(SCRATCH)} = internal addrspace(3) global [34 x i64] undef, align 8")
        out += [line for name, line in sorted(self.decls.items()) if name not in declared]
        return "\n".join(out) + "\n"

    # -- geometry ---------------------------------------------------------------------------
    def sreg(self, reg: str) -> str:
        return self._intr(_SREG + reg, "i32", [])

    def ltid(self) -> str:
        """The linear thread id in the block (SYCL's linear local id)."""
        def make():
            r = {f"{k}{a}": self.sreg(f"{k}.{a}") for k in ("tid", "ntid") for a in "xyz"}
            return "\n".join([
                f"define internal i32 @{_P}ltid() alwaysinline nounwind {{",
                f"  %tx = call i32 {r['tidx']}()", f"  %ty = call i32 {r['tidy']}()", f"  %tz = call i32 {r['tidz']}()",
                f"  %nx = call i32 {r['ntidx']}()", f"  %ny = call i32 {r['ntidy']}()",
                "  %zy = mul i32 %tz, %ny", "  %y = add i32 %zy, %ty", "  %yx = mul i32 %y, %nx",
                "  %t = add i32 %yx, %tx", "  ret i32 %t", "}"])
        return self._helper(_P + "ltid", make)

    def nthreads(self) -> str:
        def make():
            r = {a: self.sreg(f"ntid.{a}") for a in "xyz"}
            return "\n".join([
                f"define internal i32 @{_P}nthreads() alwaysinline nounwind {{",
                f"  %nx = call i32 {r['x']}()", f"  %ny = call i32 {r['y']}()", f"  %nz = call i32 {r['z']}()",
                "  %xy = mul i32 %nx, %ny", "  %n = mul i32 %xy, %nz", "  ret i32 %n", "}"])
        return self._helper(_P + "nthreads", make)

    def sgsize(self) -> str:
        """This sub-group's size: 32, or what is left of the work-group for the last warp."""
        def make():
            lt, nt = self.ltid(), self.nthreads()
            return "\n".join([
                f"define internal i32 @{_P}sgsize() alwaysinline nounwind {{",
                f"  %t = call i32 {lt}()", f"  %n = call i32 {nt}()", "  %w = and i32 %t, -32",
                "  %left = sub i32 %n, %w", f"  %s = call i32 {self._intr('llvm.umin.i32', 'i32', ['i32', 'i32'])}"
                "(i32 %left, i32 32)", "  ret i32 %s", "}"])
        return self._helper(_P + "sgsize", make)

    def sgmask(self) -> str:
        """The member mask of the caller's sub-group."""
        def make():
            return "\n".join([
                f"define internal i32 @{_P}sgmask() alwaysinline nounwind {{",
                f"  %s = call i32 {self.sgsize()}()", "  %full = icmp eq i32 %s, 32", "  %b = shl i32 1, %s",
                "  %m0 = sub i32 %b, 1", "  %m = select i1 %full, i32 -1, i32 %m0", "  ret i32 %m", "}"])
        return self._helper(_P + "sgmask", make)

    def lane(self) -> str:
        return self.sreg("laneid")

    def barrier(self) -> str:
        return self._intr(BARRIER, "void", ["i32"])

    # -- shuffles ---------------------------------------------------------------------------
    def shfl(self, kind: str, ty: str) -> str:
        """``T shfl.<kind>.<T>(i32 mask, T v, i32 b, i32 c)``: ``shfl.sync.<kind>`` of any scalar type."""
        def make():
            head = f"define internal {ty} @{_P}shfl.{kind}.{ty}(i32 %m, {ty} %v, i32 %b, i32 %c) alwaysinline convergent nounwind {{"
            if ty in ("float", "i32"):
                suffix = "f32" if ty == "float" else "i32"
                f = self._intr(f"llvm.nvvm.shfl.sync.{kind}.{suffix}", ty, ["i32", ty, "i32", "i32"])
                body = [f"  %r = call {ty} {f}(i32 %m, {ty} %v, i32 %b, i32 %c)"]
            elif ty in ("i64", "double"):
                f = self.shfl(kind, "i32")
                body = ["  %x = bitcast double %v to i64" if ty == "double" else "  %x = add i64 %v, 0",
                        "  %lo = trunc i64 %x to i32", "  %h = lshr i64 %x, 32", "  %hi = trunc i64 %h to i32",
                        f"  %slo = call i32 {f}(i32 %m, i32 %lo, i32 %b, i32 %c)",
                        f"  %shi = call i32 {f}(i32 %m, i32 %hi, i32 %b, i32 %c)",
                        "  %l64 = zext i32 %slo to i64", "  %h64 = zext i32 %shi to i64", "  %hs = shl i64 %h64, 32",
                        "  %y = or i64 %hs, %l64",
                        "  %r = bitcast i64 %y to double" if ty == "double" else "  %r = add i64 %y, 0"]
            else:        # i1, i8, i16, half: widened to 32 bits
                f = self.shfl(kind, "i32")
                it = "i16" if ty == "half" else ty
                body = (["  %x = bitcast half %v to i16"] if ty == "half" else [f"  %x = add {ty} %v, 0"]) + [
                    f"  %w = zext {it} %x to i32", f"  %s = call i32 {f}(i32 %m, i32 %w, i32 %b, i32 %c)",
                    f"  %t = trunc i32 %s to {it}"] + (
                    ["  %r = bitcast i16 %t to half"] if ty == "half" else [f"  %r = add {it} %t, 0"])
            return "\n".join([head] + body + [f"  ret {ty} %r", "}"])
        return self._helper(f"{_P}shfl.{kind}.{ty}", make)

    def select_lane(self, ty: str, kind: str) -> str:
        """``T sg.<kind>.<T>(T cur, T other, i32 d)``: the CPU's shuffle of ``kind``
        (shuffle, shuffle_xor, shuffle_down, shuffle_up) within the caller's sub-group."""
        def make():
            idx = self.shfl("idx", ty)
            L = [f"define internal {ty} @{_P}sg.{kind}.{ty}({ty} %cur, {ty} %other, i32 %d) alwaysinline convergent nounwind {{",
                 f"  %m = call i32 {self.sgmask()}()", f"  %size32 = call i32 {self.sgsize()}()",
                 f"  %lane32 = call i32 {self.lane()}()", "  %size = zext i32 %size32 to i64",
                 "  %lane = zext i32 %lane32 to i64", "  %dd = zext i32 %d to i64"]
            L.append({"shuffle": "  %src = add i64 %dd, 0", "shuffle_xor": "  %src = xor i64 %lane, %dd",
                      "shuffle_down": "  %src = add i64 %lane, %dd", "shuffle_up": "  %src = sub i64 %lane, %dd"}[kind])
            L += ["  %in = icmp ult i64 %src, %size"]
            if kind in ("shuffle", "shuffle_xor"):
                L += ["  %at = select i1 %in, i64 %src, i64 %lane", "  %at32 = trunc i64 %at to i32",
                      f"  %r = call {ty} {idx}(i32 %m, {ty} %cur, i32 %at32, i32 31)", f"  ret {ty} %r", "}"]
                return "\n".join(L)
            # SPIR-V INTEL Down(cur, next) / Up(prev, cur): lanes past the sub-group (of the
            # maximum size 32) come from the other operand, as work_group_builtins.group_step does
            L += ["  %o = sub i64 %src, 32" if kind == "shuffle_down" else "  %o = add i64 %src, 32",
                  "  %oin = icmp ult i64 %o, %size", "  %alt = select i1 %oin, i64 %o, i64 %lane",
                  "  %at = select i1 %in, i64 %src, i64 %alt", "  %at32 = trunc i64 %at to i32"]
            here, there = ("%cur", "%other") if kind == "shuffle_down" else ("%other", "%cur")
            # up: operand 0 is ``previous`` (and the caller's own value), operand 1 ``current``
            L += [f"  %got = call {ty} {idx}(i32 %m, {ty} {here}, i32 %at32, i32 31)",
                  f"  %ogot = call {ty} {idx}(i32 %m, {ty} {there}, i32 %at32, i32 31)",
                  f"  %oval = select i1 %oin, {ty} %ogot, {ty} %cur",
                  f"  %r = select i1 %in, {ty} %got, {ty} %oval", f"  ret {ty} %r", "}"]
            return "\n".join(L)
        return self._helper(f"{_P}sg.{kind}.{ty}", make)

    def sg_broadcast(self, ty: str, ity: str) -> str:
        """``T sg.bcast.<T>.<I>(T x, I id)``: lane ``id`` of the sub-group (lane 0 when outside it)."""
        def make():
            L = [f"define internal {ty} @{_P}sg.bcast.{ty}.{ity}({ty} %x, {ity} %id) alwaysinline convergent nounwind {{",
                 f"  %m = call i32 {self.sgmask()}()", f"  %size = call i32 {self.sgsize()}()",
                 f"  %id64 = {'zext' if ity != 'i64' else 'add'} {ity} %id{' to i64' if ity != 'i64' else ', 0'}",
                 "  %s64 = zext i32 %size to i64", "  %ok = icmp ult i64 %id64, %s64",
                 "  %src64 = select i1 %ok, i64 %id64, i64 0", "  %src = trunc i64 %src64 to i32",
                 f"  %r = call {ty} {self.shfl('idx', ty)}(i32 %m, {ty} %x, i32 %src, i32 31)", f"  ret {ty} %r", "}"]
            return "\n".join(L)
        return self._helper(f"{_P}sg.bcast.{ty}.{ity}", make)

    # -- sub-group algorithms ---------------------------------------------------------------
    def sg_reduce(self, op: str, ty: str) -> str:
        """``T sg.reduce.<op>.<T>(T x)``: the sub-group's combination, the same bits in every lane."""
        def make():
            down, idx = self.shfl("down", ty), self.shfl("idx", ty)
            L = [f"define internal {ty} @{_P}sg.reduce.{op}.{ty}({ty} %x) alwaysinline convergent nounwind {{",
                 f"  %m = call i32 {self.sgmask()}()", f"  %size = call i32 {self.sgsize()}()",
                 f"  %lane = call i32 {self.lane()}()"]
            v = "%x"
            for off in (16, 8, 4, 2, 1):
                L += [f"  %w{off} = call {ty} {down}(i32 %m, {ty} {v}, i32 {off}, i32 31)",
                      f"  %e{off} = add i32 %lane, {off}", f"  %k{off} = icmp ult i32 %e{off}, %size",
                      self._combine(op, ty, f"%c{off}", v, f"%w{off}"),
                      f"  %v{off} = select i1 %k{off}, {ty} %c{off}, {ty} {v}"]
                v = f"%v{off}"
            L += [f"  %r = call {ty} {idx}(i32 %m, {ty} {v}, i32 0, i32 31)", f"  ret {ty} %r", "}"]
            return "\n".join(L)
        return self._helper(f"{_P}sg.reduce.{op}.{ty}", make)

    def sg_scan(self, op: str, ty: str, exclusive: bool) -> str:
        """``T sg.inclusive|exclusive.<op>.<T>(T x)``: the scan in lane order."""
        kind = "exclusive" if exclusive else "inclusive"

        def make():
            up = self.shfl("up", ty)
            L = [f"define internal {ty} @{_P}sg.{kind}.{op}.{ty}({ty} %x) alwaysinline convergent nounwind {{",
                 f"  %m = call i32 {self.sgmask()}()", f"  %lane = call i32 {self.lane()}()"]
            v = "%x"
            for off in (1, 2, 4, 8, 16):
                L += [f"  %w{off} = call {ty} {up}(i32 %m, {ty} {v}, i32 {off}, i32 0)",
                      f"  %k{off} = icmp uge i32 %lane, {off}",
                      self._combine(op, ty, f"%c{off}", f"%w{off}", v),
                      f"  %v{off} = select i1 %k{off}, {ty} %c{off}, {ty} {v}"]
                v = f"%v{off}"
            if exclusive:
                L += [f"  %p = call {ty} {up}(i32 %m, {ty} {v}, i32 1, i32 0)", "  %first = icmp eq i32 %lane, 0",
                      f"  %r = select i1 %first, {ty} {identity(op, ty)}, {ty} %p"]
                v = "%r"
            L += [f"  ret {ty} {v}", "}"]
            return "\n".join(L)
        return self._helper(f"{_P}sg.{kind}.{op}.{ty}", make)

    # -- work-group algorithms --------------------------------------------------------------
    def _slot(self, ty: str, index: str, name: str) -> str:
        self.uses_scratch = True
        return f"  {name} = getelementptr i64, ptr addrspace(3) @{quote_name(SCRATCH)}, i32 {index}"

    def wg_algorithm(self, gop: int, op: str, ty: str) -> str:
        """``T wg.<reduce|inclusive|exclusive>.<op>.<T>(T x)`` over the work-group in linear order
        (see the module docstring)."""
        kind = ("reduce", "inclusive", "exclusive")[gop]

        def make():
            idn = identity(op, ty)
            bar = self.barrier()
            idx = self.shfl("idx", ty)
            inc = self.sg_scan(op, ty, False)
            up = self.shfl("up", ty)
            L = [f"define internal {ty} @{_P}wg.{kind}.{op}.{ty}({ty} %x) alwaysinline convergent nounwind {{",
                 "entry:", f"  %n = call i32 {self.nthreads()}()", f"  %t = call i32 {self.ltid()}()",
                 f"  %lane = call i32 {self.lane()}()", f"  %size = call i32 {self.sgsize()}()",
                 f"  %m = call i32 {self.sgmask()}()", "  %warp = lshr i32 %t, 5", "  %nw0 = add i32 %n, 31",
                 "  %nw = lshr i32 %nw0, 5"]
            if gop == 0:
                L += [f"  %own = call {ty} {self.sg_reduce(op, ty)}({ty} %x)"]
                tot = "%own"
            else:
                L += [f"  %own = call {ty} {inc}({ty} %x)",
                      f"  %sh = call {ty} {up}(i32 %m, {ty} %own, i32 1, i32 0)", "  %first = icmp eq i32 %lane, 0",
                      f"  %ownx = select i1 %first, {ty} {idn}, {ty} %sh"]
                tot = "%own"
            mine = "%ownx" if gop == 2 else "%own"
            L += ["  %one = icmp ule i32 %n, 32", "  br i1 %one, label %end, label %multi",
                  "multi:", "  %lastlane = sub i32 %size, 1", "  %islast = icmp eq i32 %lane, %lastlane",
                  "  br i1 %islast, label %put, label %stage1",
                  "put:", self._slot(ty, "%warp", "%sw"), f"  store {ty} {tot}, ptr addrspace(3) %sw",
                  "  br label %stage1",
                  "stage1:", f"  call void {bar}(i32 0)", "  %full = icmp eq i32 %size, 32",
                  "  br i1 %full, label %stage2, label %joined",
                  "stage2:", "  %inr = icmp ult i32 %lane, %nw", self._slot(ty, "%lane", "%sp"),
                  f"  %pl = load {ty}, ptr addrspace(3) %sp", f"  %p = select i1 %inr, {ty} %pl, {ty} {idn}",
                  f"  %q = call {ty} {inc}({ty} %p)"]
            if gop == 0:
                L += [f"  %pre = call {ty} {idx}(i32 -1, {ty} %q, i32 31, i32 31)"]   # the total, for every warp
                value_full = "%pre"
                for_partial = "%pre"
            else:
                L += ["  %wm1 = sub i32 %warp, 1", "  %wm1m = and i32 %wm1, 31",
                      f"  %pw = call {ty} {idx}(i32 -1, {ty} %q, i32 %wm1m, i32 31)",
                      "  %w0 = icmp eq i32 %warp, 0", f"  %pre = select i1 %w0, {ty} {idn}, {ty} %pw",
                      "  %nwm2 = sub i32 %nw, 2", "  %nwm2m = and i32 %nwm2, 31",
                      f"  %forlast = call {ty} {idx}(i32 -1, {ty} %q, i32 %nwm2m, i32 31)",
                      self._combine(op, ty, "%fullr", "%pre", mine)]
                value_full = "%fullr"
                for_partial = "%forlast"
            L += ["  br label %joined",
                  "joined:", f"  %rj = phi {ty} [ {value_full}, %stage2 ], [ {mine}, %stage1 ]",
                  f"  %lp = phi {ty} [ {for_partial}, %stage2 ], [ {idn}, %stage1 ]",
                  "  %rem = and i32 %n, 31", "  %partial = icmp ne i32 %rem, 0",
                  "  br i1 %partial, label %fix, label %close",
                  "fix:", "  %t0 = icmp eq i32 %t, 0", "  br i1 %t0, label %fixput, label %fixbar",
                  "fixput:", self._slot(ty, "32", "%sx"), f"  store {ty} %lp, ptr addrspace(3) %sx",
                  "  br label %fixbar",
                  "fixbar:", f"  call void {bar}(i32 0)", self._slot(ty, "32", "%sy"),
                  f"  %got = load {ty}, ptr addrspace(3) %sy"]
            if gop == 0:
                L += ["  %fr = select i1 %full, " + f"{ty} %rj, {ty} %got"]
            else:
                L += [self._combine(op, ty, "%pr", "%got", mine), f"  %fr = select i1 %full, {ty} %rj, {ty} %pr"]
            L += ["  br label %close",
                  "close:", f"  %rc = phi {ty} [ %rj, %joined ], [ %fr, %fixbar ]", f"  call void {bar}(i32 0)",
                  "  br label %end",
                  "end:", f"  %r = phi {ty} [ {mine}, %entry ], [ %rc, %close ]", f"  ret {ty} %r", "}"]
            return "\n".join(L)
        return self._helper(f"{_P}wg.{kind}.{op}.{ty}", make)

    def wg_broadcast(self, ty: str, ity: str) -> str:
        """``T wg.bcast.<T>.<I>(T x, I id)``: work-item ``id``'s value (work-item 0's when outside)."""
        def make():
            bar = self.barrier()
            return "\n".join([
                f"define internal {ty} @{_P}wg.bcast.{ty}.{ity}({ty} %x, {ity} %id) alwaysinline convergent nounwind {{",
                "entry:", f"  %n = call i32 {self.nthreads()}()", f"  %t = call i32 {self.ltid()}()",
                f"  %id64 = {'zext' if ity != 'i64' else 'add'} {ity} %id{' to i64' if ity != 'i64' else ', 0'}",
                "  %n64 = zext i32 %n to i64", "  %ok = icmp ult i64 %id64, %n64",
                "  %src = select i1 %ok, i64 %id64, i64 0", "  %t64 = zext i32 %t to i64",
                "  %me = icmp eq i64 %t64, %src", self._slot(ty, "0", "%s"), "  br i1 %me, label %put, label %get",
                "put:", f"  store {ty} %x, ptr addrspace(3) %s", "  br label %get",
                "get:", f"  call void {bar}(i32 0)", f"  %r = load {ty}, ptr addrspace(3) %s",
                f"  call void {bar}(i32 0)", f"  ret {ty} %r", "}"])
        return self._helper(f"{_P}wg.bcast.{ty}.{ity}", make)

    def atomic_combine(self, op: str, ty: str) -> str:
        """``void atomic.<op>.<T>(ptr p, T v)``: ``*p = *p op v`` atomically (bool as a byte)."""
        def make():
            mem = "i8" if ty == "i1" else ty
            L = [f"define internal void @{_P}atomic.{op}.{ty}(ptr %p, {ty} %v) alwaysinline nounwind {{", "entry:"]
            if ty == "i1":
                L.append("  %x = zext i1 %v to i8")
            x = "%x" if ty == "i1" else "%v"
            rmw = {"add": "add", "fadd": "fadd", "smin": "min", "smax": "max", "umin": "umin", "umax": "umax",
                   "fmin": "fmin", "fmax": "fmax", "and": "and", "or": "or", "xor": "xor"}.get(op)
            if rmw is not None:
                L += [f"  %old = atomicrmw {rmw} ptr %p, {mem} {x} monotonic, align {_WIDTH[mem] // 8}", "  ret void", "}"]
                return "\n".join(L)
            it = f"i{_WIDTH[mem]}"       # multiplies: a compare-and-swap loop on the bits
            conv = (lambda a, b: f"  {b} = bitcast {it} {a} to {mem}") if mem != it else (lambda a, b: f"  {b} = add {it} {a}, 0")
            back = (lambda a, b: f"  {b} = bitcast {mem} {a} to {it}") if mem != it else (lambda a, b: f"  {b} = add {it} {a}, 0")
            L += [f"  %first = load atomic {it}, ptr %p monotonic, align {_WIDTH[mem] // 8}", "  br label %loop",
                  "loop:", f"  %old = phi {it} [ %first, %entry ], [ %seen, %loop ]", conv("%old", "%cur"),
                  self._combine(op, mem, "%new", "%cur", x), back("%new", "%newb"),
                  f"  %pair = cmpxchg ptr %p, {it} %old, {it} %newb monotonic monotonic",
                  f"  %seen = extractvalue {{ {it}, i1 }} %pair, 0", f"  %ok = extractvalue {{ {it}, i1 }} %pair, 1",
                  "  br i1 %ok, label %done, label %loop", "done:", "  ret void", "}"]
            return "\n".join(L)
        return self._helper(f"{_P}atomic.{op}.{ty}", make)

    # -- the SPIR-V built-ins ---------------------------------------------------------------
    def define(self, module: Module) -> list[str]:
        """Replace every built-in declaration of ``module`` this lowering implements by
        nothing (its definition is in ``text()``); the names replaced."""
        done = []
        for fn in list(module.functions.values()):
            if not fn.is_declaration:
                continue
            name = base_name(fn.name)
            if not name.startswith("__spirv_"):
                continue
            params = [split_type(p)[0] for p in split_operands(fn.params[1:-1])]
            body = self._builtin(name, fn.return_type, params)
            if body is None:
                continue
            sig = ", ".join(f"{t} %a{i}" for i, t in enumerate(params))
            self.defs[fn.name] = "\n".join(
                [f"define internal {fn.return_type} @{quote_name(fn.name)}({sig}) alwaysinline convergent nounwind {{",
                 "entry:"] + body + ["}"])
            del module.functions[fn.name]
            done.append(fn.name)
        return done

    def _by_scope(self, ret: str, wg: list[str], sg: list[str], scope: str = "%a0") -> list[str]:
        """Lines choosing the work-group (``wg``) or sub-group (``sg``) lines by the scope argument
        (a constant at every call the front end makes: the inliner keeps one side)."""
        tail = ["  ret void"] if ret == "void" else []
        return [f"  %sub = icmp eq i32 {scope}, {SUBGROUP}", "  br i1 %sub, label %sg, label %wg",
                "sg:"] + sg + tail + ["wg:"] + wg + tail

    def _builtin(self, name: str, ret: str, params: list[str]) -> list[str] | None:
        """The body lines of built-in ``name`` (returning ``ret``, taking
        ``params``), or None when it is not one this pass defines."""
        for make in (self._query, self._barrier, self._arithmetic, self._vote, self._broadcast, self._shuffle):
            lines = make(name, ret, params)
            if lines is not None:
                return lines
        return None

    def _query(self, name: str, ret: str, params: list[str]) -> list[str] | None:
        """Sub-group queries."""
        if name in ("__spirv_BuiltInSubgroupLocalInvocationId", "__spirv_SubgroupLocalInvocationId"):
            return [f"  %r = call i32 {self.lane()}()", "  ret i32 %r"]
        if name in ("__spirv_BuiltInSubgroupSize", "__spirv_SubgroupSize"):
            return [f"  %r = call i32 {self.sgsize()}()", "  ret i32 %r"]
        if name in ("__spirv_BuiltInSubgroupMaxSize", "__spirv_SubgroupMaxSize"):
            return ["  ret i32 32"]
        if name in ("__spirv_BuiltInSubgroupId", "__spirv_SubgroupId"):
            return [f"  %t = call i32 {self.ltid()}()", "  %r = lshr i32 %t, 5", "  ret i32 %r"]
        if name in ("__spirv_BuiltInNumSubgroups", "__spirv_NumSubgroups"):
            return [f"  %n = call i32 {self.nthreads()}()", "  %n1 = add i32 %n, 31", "  %r = lshr i32 %n1, 5",
                    "  ret i32 %r"]
        return None

    def _barrier(self, name: str, ret: str, params: list[str]) -> list[str] | None:
        if name == "__spirv_ControlBarrier" and params and params[0] == "i32":
            return self._by_scope("void", [f"  call void {self.barrier()}(i32 0)"],
                                  [f"  %m = call i32 {self.sgmask()}()",
                                   f"  call void {self._intr('llvm.nvvm.bar.warp.sync', 'void', ['i32'])}(i32 %m)"])
        return None

    def _arithmetic(self, name: str, ret: str, params: list[str]) -> list[str] | None:
        """Reduce and scans (the operation is the second argument)."""
        for prefix in ("__spirv_GroupNonUniform", "__spirv_Group"):
            rest = name[len(prefix):]
            if name.startswith(prefix) and rest in ARITH and len(params) == 3 and params[2] == ret and ret in _SCALAR:
                op = ARITH[rest]
                wg = ["  switch i32 %a1, label %wr [ i32 1, label %wi  i32 2, label %we ]"]
                sg = ["  switch i32 %a1, label %sr [ i32 1, label %si  i32 2, label %se ]"]
                for lab, f in (("wr", self.wg_algorithm(0, op, ret)), ("wi", self.wg_algorithm(1, op, ret)),
                               ("we", self.wg_algorithm(2, op, ret))):
                    wg += [f"{lab}:", f"  %{lab}v = call {ret} {f}({ret} %a2)", f"  ret {ret} %{lab}v"]
                for lab, f in (("sr", self.sg_reduce(op, ret)), ("si", self.sg_scan(op, ret, False)),
                               ("se", self.sg_scan(op, ret, True))):
                    sg += [f"{lab}:", f"  %{lab}v = call {ret} {f}({ret} %a2)", f"  ret {ret} %{lab}v"]
                return self._by_scope(ret, wg, sg)
        return None

    def _vote(self, name: str, ret: str, params: list[str]) -> list[str] | None:
        if name in ("__spirv_GroupAll", "__spirv_GroupAny", "__spirv_GroupNonUniformAll",
                    "__spirv_GroupNonUniformAny") and params == ["i32", "i1"]:
            which = "all" if name.endswith("All") else "any"
            red = self._intr(f"llvm.nvvm.barrier0.{'and' if which == 'all' else 'or'}", "i32", ["i32"])
            vote = self._intr(f"llvm.nvvm.vote.{which}.sync", "i1", ["i32", "i1"])
            return self._by_scope("i1", ["  %z = zext i1 %a1 to i32", f"  %o = call i32 {red}(i32 %z)",
                                         "  %wv = icmp ne i32 %o, 0", "  ret i1 %wv"],
                                  [f"  %m = call i32 {self.sgmask()}()", f"  %sv = call i1 {vote}(i32 %m, i1 %a1)",
                                   "  ret i1 %sv"])
        return None

    def _broadcast(self, name: str, ret: str, params: list[str]) -> list[str] | None:
        if name in ("__spirv_GroupBroadcast", "__spirv_GroupNonUniformBroadcast") and len(params) == 3 \
                and params[1] == ret and ret in _SCALAR and params[2] in ("i32", "i64"):
            ity = params[2]
            return self._by_scope(ret, [f"  %wv = call {ret} {self.wg_broadcast(ret, ity)}({ret} %a1, {ity} %a2)",
                                        f"  ret {ret} %wv"],
                                  [f"  %sv = call {ret} {self.sg_broadcast(ret, ity)}({ret} %a1, {ity} %a2)",
                                   f"  ret {ret} %sv"])
        return None

    def _shuffle(self, name: str, ret: str, params: list[str]) -> list[str] | None:
        """Intel's sub-group shuffles and SPIR-V's non-uniform ones."""
        intel = {"__spirv_SubgroupShuffleINTEL": "shuffle", "__spirv_SubgroupShuffleXorINTEL": "shuffle_xor",
                 "__spirv_SubgroupShuffleDownINTEL": "shuffle_down", "__spirv_SubgroupShuffleUpINTEL": "shuffle_up"}
        if name in intel and ret in _SCALAR:
            kind = intel[name]
            if kind in ("shuffle", "shuffle_xor") and params == [ret, "i32"]:
                return [f"  %r = call {ret} {self.select_lane(ret, kind)}({ret} %a0, {ret} %a0, i32 %a1)", f"  ret {ret} %r"]
            if kind in ("shuffle_down", "shuffle_up") and params == [ret, ret, "i32"]:
                return [f"  %r = call {ret} {self.select_lane(ret, kind)}({ret} %a0, {ret} %a1, i32 %a2)", f"  ret {ret} %r"]
            return None
        uniform = {"__spirv_GroupNonUniformShuffle": "shuffle", "__spirv_GroupNonUniformShuffleXor": "shuffle_xor",
                   "__spirv_GroupNonUniformShuffleDown": "shuffle_down", "__spirv_GroupNonUniformShuffleUp": "shuffle_up"}
        if name in uniform and ret in _SCALAR and params == ["i32", ret, "i32"]:
            return [f"  %r = call {ret} {self.select_lane(ret, uniform[name])}({ret} %a1, {ret} %a1, i32 %a2)",
                    f"  ret {ret} %r"]
        return None
