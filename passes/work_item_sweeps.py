"""Step 5 of ``lower-work-groups`` (``work_item_loops.py``): the group function's body.

``emit`` writes the group-level setup (the group's values read from ``rec``,
work-group memory, slots), the dispatch on the point the work-items stopped
at, one sweep per region (``region``: region r for every work-item in linear
order, last dimension fastest), the check that all work-items stopped at the
same point and the group steps of the collectives.  The loop metadata of the
sweeps is written as placeholders that ``_number_loop_metadata`` numbers.
"""
from __future__ import annotations

import itertools
import re

from .ir import quote_name
from .ir.bridge import parse_assembly
from .ir.items import build_item
from .support.ir_contract import REQD_WORK_GROUP_SIZE
from .work_group_builtins import group_step, identity
from .work_item_blocks import _LABEL_RE, _LOCAL_RE, _bare, _is_phi, _phi_pairs, _render_phi


class Sweeps:
    """``_Lowering``'s step 5 (a mixin: ``_Lowering`` holds the state)."""

    def emit(self, blocks, allocas, slots, slot_ids) -> str:
        """The group function's body (the module docstring, step 5)."""
        points = self.points
        by_name = {b.name: b for b in blocks}
        reqd = self.module.function_metadata(self.kernel, REQD_WORK_GROUP_SIZE)
        fixed = [int(x.split()[-1]) for x in reqd] if reqd and len(reqd) == self.dims else None
        # group-level setup
        L = ["wg.g.entry:"] + self._group_values(fixed)
        memory, local_names = self._work_group_memory()
        L += memory
        arrays = self._arrays(allocas, slots, slot_ids)
        for _, base, ty, align, one in arrays:
            L.append(f"  %{quote_name(base)} = alloca {ty}, i64 {1 if one else '%wg.g.n'}, align {align}")
        for j, p in enumerate(points, 1):
            if p.fused:
                ty = p.operands[0][0]
                L.append(f"  store {ty} {identity(p.op, ty)}, ptr %wg.g.x{j}_0")
        self.uniform_slots = [(i, slots[v]) for v, i in slot_ids.items() if v in self.scalar]
        L.append("  br label %wg.dispatch")
        starts = [blocks[0].name] + [f"wg.p{j}" for j in range(1, len(points) + 1)]
        sweeps = [self.region(r, start, by_name, arrays, local_names) for r, start in enumerate(starts)]
        versioned = self._widen(sweeps, starts, fixed, (by_name, arrays, local_names))
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
        return body

    def _group_values(self, fixed: list[int] | None) -> list[str]:
        """The group's values, read from ``rec`` (a required local range, ``fixed``,
        is a constant: the runtime checks it), and the work-group and sub-group
        counts."""
        N = self.dims
        L = []
        rec = lambda i, ty="i64": [f"  %wg.g.rp{i} = getelementptr i64, ptr %wg.g.rec, i64 {i}",  # noqa: E731
                                   f"  %wg.g.r{i} = load {ty}, ptr %wg.g.rp{i}, align 8"]
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
        return L

    def _work_group_memory(self) -> tuple[list[str], dict[str, str]]:
        """Each work-group variable's place in the buffer ``local`` (its lines,
        and variable -> its pointer); sets ``static_local``."""
        L = []
        offset = 0
        local_names = {}
        for i, g in enumerate(self.local):
            size, align = self._global_size(g)
            offset = (offset + align - 1) // align * align
            L.append(f"  %wg.g.loc{i} = getelementptr i8, ptr addrspace(3) %wg.g.lb, i64 {offset}")
            local_names[g] = f"%wg.g.loc{i}"
            offset += size
        self.static_local = offset
        return L, local_names

    def _arrays(self, allocas, slots, slot_ids) -> list[tuple[str, str, str, str, bool]]:
        """Per-work-item arrays, one per value (struct of arrays: consecutive work-items,
        consecutive elements); a uniform value or result has one element for the group."""
        arrays = []                         # (per-wi pointer name, base name, type, align, one for the group)
        for i in sorted(set(slot_ids.values())):
            v = min(u for u, j in slot_ids.items() if j == i)
            arrays.append((f"wg.sp{i}", f"wg.g.s{i}", slots[v], "16", v in self.scalar))
        for name, ty, align in allocas:
            arrays.append((name, f"wg.g.a.{len(arrays)}", ty, align, False))
        for j, p in enumerate(self.points, 1):
            for k, (ty, _) in enumerate(p.operands):
                arrays.append((f"wg.x{j}_{k}", f"wg.g.x{j}_{k}", ty, "16", p.fused))
            if p.result:
                arrays.append((f"wg.y{j}", f"wg.g.y{j}", p.type, "16", p.scalar_result))
        return arrays

    def _widen(self, sweeps: list[list[str]], starts: list[str], fixed: list[int] | None, where) -> set[int]:
        """A sweep that combines into a work-group reduce's accumulator is interleaved
        over a long innermost range (_WIDE_MD): a required local range decides at
        compile time; otherwise the sweep gets a wide copy (blocks wg.r<r>w.*),
        chosen at wg.r<r>.v by the innermost range.  Edits ``sweeps``; returns the
        regions that got a copy."""
        by_name, arrays, local_names = where
        N = self.dims
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
        return versioned

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
        N = self.dims
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
        H = self._item_values(tag, start, arrays)
        L += [rn(h) if not h.endswith(":") else h for h in H]
        exits = self._sweep_blocks(L, tag, members, by_name, local_names, rn)
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

    def _item_values(self, tag: str, start: str, arrays) -> list[str]:
        """The head of a sweep's body (``wg.<tag>.b``): the work-item's linear
        index, its ``nd_item``, sub-group values and array elements, then a branch
        to the region's ``start`` (names not yet given the sweep's suffix)."""
        N, it = self.dims, self.item
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
        return H

    def _sweep_blocks(self, L: list[str], tag: str, members: list[str], by_name, local_names, rn) -> dict[int, str]:
        """The region's blocks, copied into the sweep (appended to ``L``): a branch
        to a point block or a return leaves the sweep through ``wg.<tag>.x<j>``;
        returns those exits by point (0: the end of the kernel)."""
        members_set, sfx = set(members), f".{tag}"
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
        return exits


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
