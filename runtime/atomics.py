"""Per-thread aggregation of atomic updates that nothing in the kernel reads.

A reduction written the SYCL way, ``atomic_fetch_add(sum, x[i])`` in every
work-item, makes every core fight over one cache line: on two cores it runs
slower than on one.  When a kernel's pointer parameter is used *only* as the
target of integer ``atomicrmw`` updates whose results are unused (add/sub,
and, or, xor, min, max), and the kernel and what it calls do no other atomic
operation or fence, the launcher can give each run of work-items a private
accumulator and apply it with one atomic update at the end:

* No work-item can observe the target between the updates: a non-atomic read
  of it would race with the other work-items' atomic updates (undefined in
  SYCL's memory model), and the kernel has no other atomic to read it with.
* The operations are associative and commutative over integers, so the final
  value is the one any interleaving of the original updates gives.
* A launch of a single work-item (the only case in which that work-item could
  read its own update through another pointer without a race) runs the
  kernel unchanged.

The kernel's private copy does the updates as plain load/op/store on the
accumulator, so once it is inlined into the launcher's loop LLVM keeps the
accumulator in a register and vectorises the loop.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..passes.ir import Module, quote_name, split_operands

__all__ = ["Accumulator", "accumulators", "private_copy", "private_name"]

_NAME = r'%[-\w.$]+'
_RMW = re.compile(rf"^  ({_NAME}) = atomicrmw (add|sub|and|or|xor|max|min|umax|umin) ptr ({_NAME}), "
                  rf"(i\d+) ({_NAME}|-?\d+)((?: syncscope\(\"[^\"]*\"\))? \w+)(, align \d+)?$", re.M)
_ORDERING = re.compile(r"\batomicrmw\b|\bcmpxchg\b|\bfence\b| atomic ")
_COMDAT = re.compile(r" comdat(\(\$[^)]*\))?")
_MINMAX = {"max": "smax", "min": "smin", "umax": "umax", "umin": "umin"}


@dataclass(frozen=True)
class Accumulator:
    """A kernel parameter (index among the non-item parameters) that only receives updates."""
    param: int
    name: str           # the parameter's LLVM value name
    type: str           # i32, i64 ...
    op: str             # "add" (for add and sub) or the one other operation
    ordering: str       # e.g. " seq_cst", as written (with any syncscope)

    @property
    def identity(self) -> int:
        bits = int(self.type[1:])
        return {"add": 0, "or": 0, "xor": 0, "umax": 0, "and": -1, "umin": -1,
                "max": -(1 << (bits - 1)), "min": (1 << (bits - 1)) - 1}[self.op]


def _uses(name: str, text: str) -> int:
    return len(re.findall(re.escape(name) + r"(?![-\w.$])", text))


def accumulators(module: Module, kernel: str, params: list[str]) -> list[Accumulator]:
    """The parameters of ``kernel`` whose updates can be aggregated (see the module
    docstring); ``params`` are the non-item parameters' LLVM types."""
    fn = module.functions[kernel]
    body = fn.body or ""
    if "atomicrmw" not in body or "!dbg" in body:
        return []                            # (a copy cannot share a DISubprogram)
    rmws = list(_RMW.finditer(body))
    if len(_ORDERING.findall(body)) != len(rmws):
        return []                            # another atomic operation or a fence
    for name in module.closure([kernel]):
        callee = module.functions.get(name)
        if name != kernel and callee is not None and callee.body and _ORDERING.search(callee.body):
            return []
    names = [op.rsplit(" ", 1)[-1] for op in split_operands(fn.params[1:-1])]
    names = names[len(names) - len(params):]
    found = []
    for i, (ty, pname) in enumerate(zip(params, names)):
        mine = [m for m in rmws if m.group(3) == pname]
        if ty != "ptr" or not mine or _uses(pname, body) != len(mine):
            continue                         # not updated, or used in some other way
        if any(_uses(m.group(1), body) != 1 for m in mine):
            continue                         # an update's result is used
        ops = {m.group(2) for m in mine}
        kinds = {(m.group(4), m.group(6)) for m in mine}
        if len(kinds) != 1 or not (ops <= {"add", "sub"} or len(ops) == 1):
            continue
        ty_, ordering = kinds.pop()
        found.append(Accumulator(i, pname, ty_, "add" if ops <= {"add", "sub"} else ops.pop(), ordering))
    return found


def private_name(kernel: str) -> str:
    return f"__minisycl_private.{kernel}"


def private_copy(module: Module, kernel: str, accs: list[Accumulator]) -> str:
    """The text of an internal copy of ``kernel`` whose updates of the aggregated
    parameters are plain load/op/store (plus the intrinsics it needs)."""
    fn = module.functions[kernel]
    targets = {a.name for a in accs}
    intrinsics = set()

    def lower(m: re.Match) -> str:
        res, op, ptr, ty, val, _, align = m.groups()
        if ptr not in targets:
            return m.group(0)
        align = align or ""
        old = f"{res}.old"
        if op in _MINMAX:
            intr = f"llvm.{_MINMAX[op]}.{ty}"
            intrinsics.add(f"declare {ty} @{intr}({ty}, {ty})")
            new = f"call {ty} @{intr}({ty} {old}, {ty} {val})"
        else:
            new = f"{op} {ty} {old}, {val}"
        return f"  {old} = load {ty}, ptr {ptr}{align}\n  {res} = {new}\n  store {ty} {res}, ptr {ptr}{align}"

    body = _RMW.sub(lower, fn.body)
    header = fn.header.replace(f"@{quote_name(kernel)}(", f"@{quote_name(private_name(kernel))}(", 1)
    linkage = "" if fn.linkage == "external" else fn.linkage + " "
    header = header.replace(f"define {linkage}", "define internal ", 1)
    header = _COMDAT.sub("", header)
    decls = "".join(d + "\n" for d in sorted(intrinsics) if d.split("@", 1)[1].split("(")[0] not in module.functions)
    return header + "\n" + body + "\n" + decls

