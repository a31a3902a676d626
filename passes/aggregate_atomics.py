"""aggregate-atomics: per-thread aggregation of atomic updates that nothing in a kernel reads.

A reduction written the SYCL way, ``atomic_fetch_add(sum, x[i])`` in every
work-item, makes every core fight over one cache line: on two cores it runs
slower than on one.  When a kernel's pointer parameter is used *only* as the
target of integer ``atomicrmw`` updates whose results are unused, a launcher
can give each run of work-items a private accumulator and apply it with one
atomic update at the end.  This pass finds those parameters and makes the
kernel's private copy that updates the accumulator; the runtime's JIT
(``runtime/jit.py``) builds the launcher around it.

Algorithm, for each kernel definition (``spir_kernel`` or another kernel
calling convention) whose body has an ``atomicrmw`` and no ``!dbg``
attachment (a copy cannot share the kernel's ``DISubprogram``):

  1. Read every instruction of the body through the IR layer's tokens.  An
     update is ``%r = atomicrmw OP ptr %p, iN V [syncscope("s")] ORDERING
     [, align A]`` with OP one of add, sub, and, or, xor, max, min, umax,
     umin.  Give up on the kernel if it has any other atomic operation or a
     fence (an ``atomicrmw`` of another shape, ``cmpxchg``, ``fence``,
     ``load atomic``, ``store atomic``), or if any function it calls, directly
     or not, has one: another atomic could read a target between updates.
  2. A parameter ``%p`` of type ``ptr`` is an accumulator when every use of
     ``%p`` in the body is as the pointer of such an update, no update's
     result ``%r`` is used, all its updates have one type and one ordering
     (with its syncscope), and its operations combine: add and sub together,
     or one single other operation.
  3. The private copy ``__minisycl_private.<kernel>``: the kernel's body with
     each accumulator's updates turned into ``load``, the operation (``sub``
     and ``and``... as instructions, ``max``/``min``/``umax``/``umin`` as the
     ``llvm.smax``/``smin``/``umax``/``umin`` intrinsics, declared when the
     module lacks them) and ``store``; internal linkage, no comdat, and the
     ``spir_func`` calling convention (a launcher calls it; it is no kernel).

Why the result is the same: no work-item can observe the target between the
updates (a non-atomic read of it would race with the other work-items'
atomic updates, undefined in SYCL's memory model, and the kernel has no other
atomic to read it with); the operations are associative and commutative over
integers, so the final value is the one any interleaving of the original
updates gives.  A launch of one work-item (the only case in which it could
read its own update through another pointer without a race) must run the
kernel itself: the launcher does.  Once the copy is inlined into a loop,
LLVM keeps the accumulator in a register and vectorises the loop.

IR contract: adds the private copies and intrinsic declarations; sets
``PassContext.aggregated_atomics``: kernel -> ``Aggregation`` (the copy's name
and the ``Accumulator`` list, each parameter index counting every parameter).  Tests:
``tests/lit/passes/aggregate-atomics/`` and ``tests/runtime/test_atomics.py``.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

from .ir import Function, Module, quote_name, split_operands, split_type, tokens, unquote_name
from .manager import PassResult

__all__ = ["AggregateAtomics", "Accumulator", "Aggregation", "accumulators", "private_copy", "private_name"]

_OPS = frozenset(("add", "sub", "and", "or", "xor", "max", "min", "umax", "umin"))
_MINMAX = {"max": "smax", "min": "smin", "umax": "umax", "umin": "umin"}
#: tokens of instructions that order memory or read it atomically
_ATOMIC_WORDS = frozenset(("atomicrmw", "cmpxchg", "fence", "atomic"))


@dataclass(frozen=True)
class Accumulator:
    """A kernel parameter (its index among all parameters) that only receives updates."""
    param: int
    name: str           # the parameter's LLVM value token (``%sum``)
    type: str           # i32, i64 ...
    op: str             # "add" (for add and sub) or the one other operation
    ordering: str       # e.g. " seq_cst", as written (with any syncscope)

    @property
    def identity(self) -> int:
        bits = int(self.type[1:])
        return {"add": 0, "or": 0, "xor": 0, "umax": 0, "and": -1, "umin": -1,
                "max": -(1 << (bits - 1)), "min": (1 << (bits - 1)) - 1}[self.op]


@dataclass(frozen=True)
class Aggregation:
    """What the pass did to one kernel: its private copy and the accumulators."""
    copy: str
    accumulators: list[Accumulator]


@dataclass(frozen=True)
class _Update:
    """One ``atomicrmw`` instruction of the shape step 1 reads."""
    result: str
    op: str
    ptr: str
    type: str
    value: str
    ordering: str       # from after the value to the end of the ordering, as written
    align: str          # ", align N" or ""


def _update(line: str) -> _Update | None:
    """The update ``line`` holds, or None when it is not one of step 1's shape."""
    toks = tokens(line)
    words = [t[0] for t in toks]
    if len(words) < 10 or words[1:3] != ["=", "atomicrmw"] or words[3] not in _OPS or words[4] != "ptr" \
            or words[6] != "," or not words[0].startswith("%") or not words[5].startswith("%"):
        return None
    ty, value = words[7], words[8]
    if not (ty[:1] == "i" and ty[1:].isdigit()) or not (value.startswith("%") or value.lstrip("-").isdigit()):
        return None
    i = 9
    if words[i] == "syncscope":
        if words[i + 1:i + 2] != ["("] or words[i + 3:i + 4] != [")"] or not words[i + 2].startswith('"'):
            return None
        i += 4
    if i >= len(words) or not words[i].replace("_", "").isalpha():
        return None
    ordering_end = toks[i][2]
    rest = words[i + 1:]
    if rest and (len(rest) != 3 or rest[:2] != [",", "align"] or not rest[2].isdigit()):
        return None
    return _Update(words[0], words[3], words[5], ty, value, line[toks[8][2]:ordering_end],
                   line[ordering_end:toks[-1][2]] if rest else "")


def _has_atomics(body: str) -> bool:
    if "atomic" not in body and "cmpxchg" not in body and "fence" not in body:
        return False
    return any(t[0] in _ATOMIC_WORDS for t in tokens(body))


def accumulators(module: Module, kernel: str) -> list[Accumulator]:
    """Steps 1-2: the parameters of ``kernel`` whose updates can be aggregated."""
    fn = module.functions[kernel]
    found = _kernel_updates(module, kernel)
    if found is None:
        return []
    toks, updates = found
    uses = Counter(t[0] for t in toks if t[0][:1] == "%")
    out = []
    for i, param in enumerate(split_operands(fn.params[1:-1])):
        acc = _accumulator(i, param, updates, uses)
        if acc is not None:
            out.append(acc)
    return out


def _kernel_updates(module: Module, kernel: str) -> tuple[list, list[_Update]] | None:
    """(the tokens of ``kernel``'s body, its atomic updates), or None when it has
    none or an atomic operation other than an update (here or in a callee)."""
    body = module.functions[kernel].body or ""
    if "atomicrmw" not in body or "!dbg" in body:
        return None
    toks = tokens(body)
    if not any(t[0] == "atomicrmw" for t in toks):
        return None                          # the word was inside a name or a string
    updates = [u for u in map(_update, (ln for ln in body.split("\n") if "atomicrmw" in ln)) if u is not None]
    if sum(t[0] in _ATOMIC_WORDS for t in toks) != len(updates):
        return None                          # another atomic operation or a fence
    for name in module.closure([kernel]):
        callee = module.functions.get(name)
        if name != kernel and callee is not None and callee.body and _has_atomics(callee.body):
            return None
    return toks, updates


def _accumulator(i: int, param: str, updates: list[_Update], uses: Counter) -> Accumulator | None:
    """Parameter ``i`` (``param``) as an accumulator, if every use of it is one
    of ``updates``, of one type and ordering, with results unused."""
    ty, pname = split_type(param)[0], tokens(param)[-1][0]
    mine = [u for u in updates if u.ptr == pname]
    if ty != "ptr" or not mine or uses[pname] != len(mine):
        return None                          # not updated, or used in some other way
    if any(uses[u.result] != 1 for u in mine):
        return None                          # an update's result is used
    ops = {u.op for u in mine}
    kinds = {(u.type, u.ordering) for u in mine}
    if len(kinds) != 1 or not (ops <= {"add", "sub"} or len(ops) == 1):
        return None
    ty_, ordering = kinds.pop()
    return Accumulator(i, pname, ty_, "add" if ops <= {"add", "sub"} else ops.pop(), ordering)


def private_name(kernel: str) -> str:
    return f"__minisycl_private.{kernel}"


def _local(token: str, suffix: str) -> str:
    """The local value token ``token`` with ``suffix`` added to its name."""
    return "%" + quote_name(unquote_name(token[1:]) + suffix)


def _lowered(u: _Update, intrinsics: dict[str, str]) -> str:
    old = _local(u.result, ".old")
    if u.op in _MINMAX:
        intr = f"llvm.{_MINMAX[u.op]}.{u.type}"
        intrinsics[intr] = f"declare {u.type} @{intr}({u.type}, {u.type})"
        new = f"call {u.type} @{intr}({u.type} {old}, {u.type} {u.value})"
    else:
        new = f"{u.op} {u.type} {old}, {u.value}"
    return (f"  {old} = load {u.type}, ptr {u.ptr}{u.align}\n  {u.result} = {new}\n"
            f"  store {u.type} {u.result}, ptr {u.ptr}{u.align}")


def private_copy(module: Module, kernel: str, accs: list[Accumulator]) -> str:
    """Step 3: add the private copy of ``kernel`` (and the intrinsics it needs)
    to ``module``; returns its name."""
    fn = module.functions[kernel]
    targets = {a.name for a in accs}
    intrinsics: dict[str, str] = {}
    lines = fn.body.split("\n")
    for i, line in enumerate(lines):
        if "atomicrmw" in line:
            u = _update(line)
            if u is not None and u.ptr in targets:
                lines[i] = _lowered(u, intrinsics)
    name = private_name(kernel)
    head = tokens(fn.header)
    at = next(k for k, t in enumerate(head) if t[0].startswith("@"))
    header = fn.header[:head[at][1]] + "@" + quote_name(name) + fn.header[head[at][2]:]
    for tok, s, e in reversed(head[:at]):
        if tok == "spir_kernel":
            header = header[:s] + "spir_func" + header[e:]
    module.functions[name] = Function(name, header, "\n".join(lines))
    for intr, decl in sorted(intrinsics.items()):
        if intr not in module.functions:
            module.functions[intr] = Function(intr, decl, None)
    module.make_internal(name, drop_comdat=True)
    return name


@dataclass
class AggregateAtomics:
    """The pass (no options)."""

    name: ClassVar[str] = "aggregate-atomics"

    def run(self, module: Module, am) -> PassResult:
        found = {}
        for name, fn in list(module.functions.items()):
            if fn.body is not None and fn.is_kernel and "atomicrmw" in fn.body:
                accs = accumulators(module, name)
                if accs:
                    found[name] = accs
        am.ctx.aggregated_atomics = {name: Aggregation(private_copy(module, name, accs), accs)
                                     for name, accs in found.items()}
        return PassResult.NONE if found else PassResult.ALL
