"""Step 4 of ``lower-work-groups`` (``work_item_loops.py``): the values that cross an exchange point.

Which SSA values are used across a point block (``crossing``), which of them
are recomputed at the use (``remat``, ``materialise``) and which are kept in
slots, which slots hold one value for the group (``scalar_safe``) and which
a phi shares with a value flowing into it (``share_slots``); and the
innermost uniform loops that get an implicit barrier (``uniform_loop_headers``).
``work_item_uniformity.py`` answers the uniformity questions.
"""
from __future__ import annotations

import re
from collections import deque

from .ir import quote_name, split_type
from .work_group_builtins import QUERIES, base_name, is_group_builtin
from .work_item_blocks import _CALL, _LOCAL, _render_phi, _LABEL_RE, _LOCAL_RE, _Block, _bare, _is_phi, _phi_pairs, _result, _subst
from .work_item_uniformity import PURE, Uniformity, constant_trip_count, opcode, operand_names

_REMAT_LIMIT = 32          # most instructions recomputed for one value
#: a loop of a constant trip count whose unrolled body would have at most this many
#: instructions gets no implicit barrier: LLVM's -O3 unrolls it whole (its full-unroll
#: threshold is 300), which leaves the loop over work-items innermost, and a barrier
#: would only send its loop-carried values through memory once per iteration
_UNROLL_BUDGET = 300


class CrossingValues:
    """``_Lowering``'s step 4 (a mixin: ``_Lowering`` holds the state)."""

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
            if any(is_group_builtin(c) and base_name(c) not in QUERIES for c in calls):
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
        reads, at = self._slot_positions(blocks, by_name, loads, slots)

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

        group = self._phi_groups(blocks, slots, apart)
        ids: dict[str, int] = {}
        for v in sorted(slots):
            first = min(group[v])
            ids[v] = ids[first] if first in ids else len(set(ids.values()))
        return ids

    def _slot_positions(self, blocks, by_name, loads, slots):
        """(value -> the positions where its slot is read, value -> the position
        of its definition); a position is (block, line index)."""
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
        return reads, at

    def _phi_groups(self, blocks, slots: dict[str, str], apart) -> dict[str, set[str]]:
        """Value -> the values that share its slot: a phi and a value flowing into
        it (of the same type, neither uniform) when ``apart`` says so."""
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
        return group

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

    def take_allocas(self, blocks: list[_Block]) -> list[tuple[str, str, str]]:
        """The allocas that survive SROA, taken out of ``blocks``: (name, type,
        alignment) of each, for a per-work-item array."""
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
        return allocas

    def place_slots(self, blocks: list[_Block], loads, slots: dict[str, str], slot_ids: dict[str, int]) -> None:
        """Stores after the definitions of the kept values, and loads (or
        recomputations) at their crossing uses; a phi's incoming value is read
        at the end of its predecessor."""
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
