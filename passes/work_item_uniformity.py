"""Which values of a work-group kernel are the same for every work-item, and which can be recomputed.

``lower-work-groups`` (``work_item_loops.py``) asks three questions of a
kernel's blocks, all answered here on its text form (``_Block`` lists: a name,
lines, successors):

* *Uniform values* (a divergence analysis, as LLVM's ``UniformityAnalysis`` or
  PoCL's variable-uniformity pass): a value is uniform when every work-item of
  the group that computes it computes the same value.  Sources: kernel
  arguments, constants, the group's geometry (the ``nd_item``'s group id,
  global range and local range fields) and the results of work-group-scope
  collectives; pure instructions over uniform operands are uniform; a phi is
  uniform when its incoming values are and its block is not reached
  differently by different work-items (not in the *influence region* of a
  divergent branch: the blocks between the branch and its immediate
  post-dominator, that post-dominator included).  Loads, calls and the local
  id are not.
* *Rematerialisable values*: pure instructions whose operands are, in the end,
  only kernel arguments, constants, the ``nd_item`` and the group's values:
  they are recomputed where a later region needs them instead of kept per
  work-item (PoCL and AdaptiveCpp do the same), so addresses stay affine in
  the local id and loops over work-items vectorise.
* *Uniform loops*: innermost natural loops that every work-item runs the same
  number of times (the header outside every influence region); the pass puts
  an implicit barrier at their header (PoCL's implicit loop barriers), so the
  work-item loop becomes the inner loop.
"""
from __future__ import annotations

import re
from collections import deque

__all__ = ["PURE", "opcode", "operand_names", "post_dominators", "dominators", "natural_loops", "Uniformity"]

#: instructions without side effects, whose result depends only on their operands
PURE = frozenset("""add sub mul shl lshr ashr and or xor udiv sdiv urem srem fadd fsub fmul fdiv frem fneg trunc
zext sext fptrunc fpext fptoui fptosi uitofp sitofp ptrtoint inttoptr bitcast addrspacecast icmp fcmp select
extractvalue insertvalue getelementptr extractelement insertelement shufflevector""".split())

_LOCAL_RE = re.compile(r'%(?:[-\w.$]+|"[^"]*")')
_LABEL_RE = re.compile(r'label %(?:[-\w.$]+|"[^"]*")')
_PHI_PRED = re.compile(r',\s*%(?:[-\w.$]+|"[^"]*")\s*\]')


def opcode(line: str) -> str:
    """The instruction's opcode (``tail call`` → ``call``)."""
    body = line.split(" = ", 1)[1] if re.match(r"^\s*%", line) and " = " in line else line
    words = body.split()
    while words and words[0] in ("tail", "musttail", "notail"):
        words = words[1:]
    return words[0] if words else ""


def _bare(tok: str) -> str:
    return tok[2:-1] if tok.startswith('%"') else tok[1:]


def operand_names(line: str, type_names: set[str]) -> list[str]:
    """Bare names of the local values ``line`` uses (labels and type names left out)."""
    body = line.split(" = ", 1)[1] if re.match(r"^\s*%", line) and " = " in line else line
    body = _LABEL_RE.sub("", body)
    if body.lstrip().startswith("phi "):          # [ value, %block ]: the blocks are no operands
        body = _PHI_PRED.sub("]", body)
    return [_bare(t) for t in _LOCAL_RE.findall(body) if t not in type_names]


def _fixpoint(order: list[str], start: dict[str, set], step) -> dict[str, set]:
    sets = dict(start)
    changed = True
    while changed:
        changed = False
        for b in order:
            new = step(b, sets)
            if new != sets[b]:
                sets[b] = new
                changed = True
    return sets


def dominators(names: list[str], succ: dict[str, list[str]]) -> dict[str, set[str]]:
    """Dominator sets (``names[0]`` is the entry)."""
    preds: dict[str, list[str]] = {n: [] for n in names}
    for n in names:
        for s in succ[n]:
            preds[s].append(n)
    full = set(names)
    start = {n: ({n} if i == 0 else set(full)) for i, n in enumerate(names)}

    def step(b, sets):
        if b == names[0]:
            return sets[b]
        ps = [sets[p] for p in preds[b]]
        return {b} | (set.intersection(*ps) if ps else set())
    return _fixpoint(names, start, step)


def post_dominators(names: list[str], succ: dict[str, list[str]]) -> dict[str, set[str]]:
    """Post-dominator sets (a block that cannot reach an exit post-dominated by everything)."""
    full = set(names)
    start = {n: ({n} if not succ[n] else set(full)) for n in names}

    def step(b, sets):
        if not succ[b]:
            return sets[b]
        return {b} | set.intersection(*(sets[s] for s in succ[b]))
    return _fixpoint(list(reversed(names)), start, step)


def natural_loops(names: list[str], succ: dict[str, list[str]]) -> list[tuple[str, set[str]]]:
    """(header, blocks) of each natural loop, back edges merged per header."""
    dom = dominators(names, succ)
    preds: dict[str, list[str]] = {n: [] for n in names}
    for n in names:
        for s in succ[n]:
            preds[s].append(n)
    loops: dict[str, set[str]] = {}
    for t in names:
        for h in succ[t]:
            if h in dom[t]:
                body = loops.setdefault(h, {h})
                q = deque([t])
                while q:
                    x = q.popleft()
                    if x not in body:
                        body.add(x)
                        q.extend(preds[x])
    return sorted(loops.items(), key=lambda kv: names.index(kv[0]))


class Uniformity:
    """Uniform values and influence regions of ``blocks`` (objects with ``name``,
    ``lines``, ``succs()``).  ``uniform_outside(name)`` says whether a value not
    defined in the blocks (an argument, a group value) is uniform; ``uniform_line``
    may declare a non-pure line's result uniform (a collective's result)."""

    def __init__(self, blocks, type_names: set[str], item: str, uniform_outside, uniform_line=lambda line: False):
        self.names = [b.name for b in blocks]
        self.succ = {b.name: b.succs() for b in blocks}
        self.defs: dict[str, tuple[str, str]] = {}
        for b in blocks:
            for line in b.lines:
                m = re.match(r"^\s*(%(?:[-\w.$]+|\"[^\"]*\")) = ", line)
                if m:
                    self.defs[_bare(m.group(1))] = (b.name, line)
        self.type_names, self.item = type_names, item
        self.blocks = {b.name: b for b in blocks}
        pdom = post_dominators(self.names, self.succ)
        self.loops = natural_loops(self.names, self.succ)
        self.varying: set[str] = set()
        self.influenced: set[str] = set()
        done_branches: set[str] = set()
        for v, (_, line) in self.defs.items():
            if not self._may_be_uniform(line, uniform_line):
                self.varying.add(v)
        while True:
            changed = False
            for v, (blk, line) in self.defs.items():
                if v in self.varying:
                    continue
                ops = operand_names(line, type_names)
                if (" = phi " in line and blk in self.influenced) or any(not self._operand_uniform(o, uniform_outside)
                                                                       for o in ops):
                    self.varying.add(v)
                    changed = True
            for b in blocks:
                if b.name in done_branches or len(set(self.succ[b.name])) < 2:
                    continue
                cond = operand_names(b.term, type_names)
                if all(self._operand_uniform(o, uniform_outside) for o in cond):
                    continue
                done_branches.add(b.name)
                changed = True
                self.influenced |= self._influence(b.name, pdom)
                for h, body in self.loops:        # a divergent exit: the loop's values differ after it
                    if b.name in body and any(s not in body for s in self.succ[b.name]):
                        self.influenced |= body
                        self.varying |= {v for v, (blk, _) in self.defs.items() if blk in body}
            if not changed:
                break

    def _may_be_uniform(self, line: str, uniform_line) -> bool:
        op = opcode(line)
        field = self._item_field(line) if op == "extractvalue" else None
        if field is not None:
            return field in (2, 3, 4)
        if self.item in operand_names(line, self.type_names):
            return False
        return op in PURE or op == "phi" or uniform_line(line)

    def _item_field(self, line: str) -> int | None:
        m = re.search(r'extractvalue (?:%"[^"]*"|\S+) (%(?:[-\w.$]+|"[^"]*")), (\d+)', line)
        if m and _bare(m.group(1)) == self.item:
            return int(m.group(2))
        return None

    def _operand_uniform(self, o: str, uniform_outside) -> bool:
        if o == self.item:
            return True             # only through extractvalue of a uniform field (checked there)
        if o in self.defs:
            return o not in self.varying
        return uniform_outside(o)

    def _influence(self, x: str, pdom) -> set[str]:
        ipd_candidates = pdom[x] - {x}
        ipd = max(ipd_candidates, key=lambda n: len(pdom[n])) if ipd_candidates and len(pdom[x]) < len(self.names) else None
        out, q = set(), deque(self.succ[x])
        while q:
            n = q.popleft()
            if n in out:
                continue
            out.add(n)
            if n != ipd:
                q.extend(self.succ[n])
        return out

    def uniform(self, v: str) -> bool:
        return v in self.defs and v not in self.varying

    def innermost_uniform_loops(self) -> list[tuple[str, set[str]]]:
        """Innermost loops whose header every work-item reaches equally often."""
        out = []
        for h, body in self.loops:
            if h in self.influenced:
                continue
            if any(h2 != h and h2 in body for h2, _ in self.loops):
                continue
            out.append((h, body))
        return out
