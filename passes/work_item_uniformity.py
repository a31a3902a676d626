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
* *Constant trip counts* (``constant_trip_count``): how many times a counted
  loop runs when that is fixed in the text (an induction variable from a
  constant, a constant step, compared with a constant); the pass leaves a
  short one without an implicit barrier, as LLVM unrolls it completely.
"""
from __future__ import annotations

import re
from collections import deque

__all__ = ["PURE", "opcode", "operand_names", "post_dominators", "dominators", "natural_loops", "Uniformity",
           "constant_trip_count"]

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
        for v, (_, line) in self.defs.items():
            if not self._may_be_uniform(line, uniform_line):
                self.varying.add(v)
        done_branches: set[str] = set()
        while self._spread_values(uniform_outside) | self._spread_branches(blocks, uniform_outside, pdom, done_branches):
            pass

    def _spread_values(self, uniform_outside) -> bool:
        """One round of the fixpoint over values: a value with a varying operand,
        or a phi in an influence region, is varying.  Whether any changed."""
        changed = False
        for v, (blk, line) in self.defs.items():
            if v in self.varying:
                continue
            ops = operand_names(line, self.type_names)
            if (" = phi " in line and blk in self.influenced) or any(not self._operand_uniform(o, uniform_outside)
                                                                   for o in ops):
                self.varying.add(v)
                changed = True
        return changed

    def _spread_branches(self, blocks, uniform_outside, pdom, done_branches: set[str]) -> bool:
        """One round of the fixpoint over branches: a divergent branch adds its
        influence region (and a divergent loop exit the loop's values).  Whether any changed."""
        changed = False
        for b in blocks:
            if b.name in done_branches or len(set(self.succ[b.name])) < 2:
                continue
            cond = operand_names(b.term, self.type_names)
            if all(self._operand_uniform(o, uniform_outside) for o in cond):
                continue
            done_branches.add(b.name)
            changed = True
            self.influenced |= self._influence(b.name, pdom)
            for h, body in self.loops:        # a divergent exit: the loop's values differ after it
                if b.name in body and any(s not in body for s in self.succ[b.name]):
                    self.influenced |= body
                    self.varying |= {v for v, (blk, _) in self.defs.items() if blk in body}
        return changed

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


# -- constant trip counts --------------------------------------------------------------------------

_ICMP = re.compile(r"=\s*icmp (\w+) i(\d+) (\S+), (\S+)$")
_STEP = re.compile(r"=\s*add(?: nuw| nsw)* i(\d+) (\S+), (\S+)$")


def _const(tok: str) -> int | None:
    tok = tok.rstrip(",")
    if re.fullmatch(r"-?\d+", tok):
        return int(tok)
    return None


def _holds(pred: str, a: int, b: int, bits: int) -> bool:
    mask = (1 << bits) - 1
    a, b = a & mask, b & mask
    if pred.startswith("s"):
        half = 1 << (bits - 1)
        a, b = (a - (1 << bits) if a >= half else a), (b - (1 << bits) if b >= half else b)
    return {"eq": a == b, "ne": a != b, "ult": a < b, "slt": a < b, "ule": a <= b, "sle": a <= b,
            "ugt": a > b, "sgt": a > b, "uge": a >= b, "sge": a >= b}[pred]


def constant_trip_count(blocks, header: str, body: set[str], limit: int = 1024) -> int | None:
    """How many times the loop at ``header`` (blocks ``body``) runs its exit test,
    when the text fixes it: one exiting block, the header or the one latch, ending
    in ``br i1 %c`` with ``%c = icmp P iN x, C`` where ``x`` is a header phi
    ``[ C0, outside ], [ %next, inside ]`` or that ``%next``, and
    ``%next = add iN phi, S`` (C, C0, S constants).  None otherwise, or past ``limit``."""
    by_name = {b.name: b for b in blocks}
    exiting = [n for n in body if any(s not in body for s in by_name[n].succs())]
    latches = [n for n in body if header in by_name[n].succs()]
    if len(exiting) != 1 or len(latches) != 1 or exiting[0] not in (header, latches[0]):
        return None
    test = _exit_test(by_name, header, body, exiting[0])
    if test is None:
        return None
    pred, bits, x, bound, stay_if, defs = test
    iv = _induction(defs, header, body, x)
    offset = 0
    if iv is None:                           # the compare tests the stepped value
        a = _STEP.search(defs[x][1])
        if a:
            for cand in (a.group(2).rstrip(","), a.group(3)):
                iv = _induction(defs, header, body, cand)
                if iv and iv[2] == x:
                    offset = iv[1]
                    break
                iv = None
    if iv is None:
        return None
    v, step, _ = iv
    for count in range(1, limit + 1):
        if _holds(pred, v + offset, bound, bits) != stay_if:
            return count
        v += step
    return None


def _exit_test(by_name, header: str, body: set[str], exiting: str):
    """``constant_trip_count``'s exit test: (predicate, bits, the tested value,
    the constant bound, whether the loop stays when it holds, the body's
    definitions), or None when it is not ``icmp P iN x, C``."""
    ex = by_name[exiting]
    term = re.match(r"\s*br i1 (%\S+), label (%\S+), label (%\S+)$", ex.term)
    if not term:
        return None
    stay_if = _bare(term.group(2)) in body
    defs = {}
    for n in body:
        for line in by_name[n].lines:
            m = re.match(r"^\s*(%(?:[-\w.$]+|\"[^\"]*\")) = ", line)
            if m:
                defs[m.group(1)] = (n, line)
    cmp = defs.get(term.group(1))
    m = _ICMP.search(cmp[1]) if cmp else None
    if not m:
        return None
    pred, bits, x, y = m.group(1), int(m.group(2)), m.group(3).rstrip(","), m.group(4)
    if _const(x) is not None:              # C P x  ->  x P' C
        x, y = y, x
        pred = {"ult": "ugt", "ugt": "ult", "ule": "uge", "uge": "ule", "slt": "sgt", "sgt": "slt",
                "sle": "sge", "sge": "sle"}.get(pred, pred)
    bound = _const(y)
    if bound is None or x not in defs:
        return None
    return pred, bits, x, bound, stay_if, defs


def _induction(defs, header: str, body: set[str], phi_name: str):
    """(start, step, stepped value) of header phi ``phi_name`` stepping by a constant, else None."""
    n, line = defs.get(phi_name, ("", ""))
    if n != header or " = phi " not in line:
        return None
    pairs = re.findall(r"\[\s*([^,\]]+),\s*(%[^\]\s]+)\s*\]", line)
    if len(pairs) != 2:
        return None
    start = [_const(v) for v, blk in pairs if _bare(blk) not in body]
    nxt = [v.strip() for v, blk in pairs if _bare(blk) in body]
    if len(start) != 1 or start[0] is None or len(nxt) != 1 or nxt[0] not in defs:
        return None
    a = _STEP.search(defs[nxt[0]][1])
    if not a:
        return None
    ops = [a.group(2).rstrip(","), a.group(3)]
    if phi_name not in ops:
        return None
    step = _const(ops[1 - ops.index(phi_name)])
    return (start[0], step, nxt[0]) if step else None

