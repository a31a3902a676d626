"""Step 2 of ``lower-work-groups`` (``work_item_loops.py``): exchange points.

Each barrier or collective call is split into a block of its own (the point
block ``wg.p<j>`` starts with it).  Before it the work-item stores the
collective's operands into its slots (or, for a fused work-group reduce,
combines them into the group's accumulator); in the point block the call
becomes a load of the work-item's result slot.  Implicit loop barriers
(step 4) are inserted here too.  Constant expressions over work-group memory
become instructions, and sub-group queries arithmetic on the work-item's
index.
"""
from __future__ import annotations

import re

from .ir import quote_name, split_operands, split_type
from .work_group_builtins import QUERIES, WORKGROUP, Point, base_name, classify_call, combine
from .work_item_blocks import _CALL, _Block, _is_phi, _phi_pairs, _render_phi, _result, _where

IMPLICIT_BARRIER = "implicit loop barrier"
_IMPLICIT = "  ; implicit barrier"


class ExchangePoints:
    """``_Lowering``'s step 2 (a mixin: ``_Lowering`` holds the state)."""

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
