"""``sycl.reduction``: SYCL 2020's reductions for ``reducer<T, op>`` kernel parameters.

Host side: ``sycl.reduction(usm_ptr, sycl.plus, initialize_to_identity=False)``
is passed for a ``reducer<T, op>`` parameter; ``usm_ptr``'s element type must
be ``T`` and the operator ``op`` (``errc::invalid`` otherwise).  The result
lands in ``usm_ptr[0]`` when the command completes, combined with the value
already there unless ``initialize_to_identity``.

How (the IR the front end emits for a reducer is a ``ptr`` to an accumulator,
``frontend/emitter/groups.py``): each launcher - the native loop over
work-items of ``jit.py`` and the loop over work-groups of ``work_groups.py`` -
gives every thread that runs a piece of the launch its own accumulator,
initialised to the operator's identity, passes its address to the kernel, and
after the piece combines it into ``usm_ptr[0]`` with a compare-and-swap loop
(``__minisycl_combine.<op>.<T>``): one atomic per thread, none per work-item.
Before the launch (``prepare``), ``initialize_to_identity`` stores the
identity into ``usm_ptr[0]``; so a command graph runs a node with reductions
as a launch step (``KernelCommand.run``), not inside its native plan.
Floating-point results depend on how the work-items are split into pieces,
as in SYCL (the operators are combined in an unspecified order).
"""
from __future__ import annotations

import ctypes
import functools

import numpy as np

from ..passes.support.signature import parse_param
from .errors import Refused, errc, exception
from .memory import usm_allocation
from .validate import require_bool

__all__ = ["reduction", "plus", "multiplies", "minimum", "maximum", "bit_and", "bit_or", "bit_xor",
           "logical_and", "logical_or", "pack_reduction", "reduction_packer", "prepare", "has_reductions",
           "accumulator_lines", "flush_lines", "combine_functions"]

#: kernel-language element type -> (NumPy dtype, LLVM type)
TYPES = {"bool": (np.bool_, "i1"), "char": (np.int8, "i8"), "uchar": (np.uint8, "i8"), "short": (np.int16, "i16"),
         "ushort": (np.uint16, "i16"), "int": (np.int32, "i32"), "uint": (np.uint32, "i32"),
         "long": (np.int64, "i64"), "ulong": (np.uint64, "i64"), "half": (np.float16, "half"),
         "float": (np.float32, "float"), "double": (np.float64, "double")}
_DTYPES = {elem: np.dtype(t[0]) for elem, t in TYPES.items()}
_BITS = {"i1": 8, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "half": 16, "float": 32, "double": 64}


class _Operator:
    """A reduction operator (``sycl.plus``...): its name, as ``reducer<T, name>`` spells it."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"sycl.{self.name}"

    def identity(self, dtype) -> object:
        """SYCL's known identity of this operator over ``dtype``."""
        dt = np.dtype(dtype)
        if self.name in ("plus", "bit_or", "bit_xor", "logical_or"):
            return dt.type(0)
        if self.name in ("multiplies", "logical_and"):
            return dt.type(1)
        if self.name == "bit_and":
            return dt.type(~np.zeros((), dt)) if dt != np.bool_ else np.bool_(True)
        if dt.kind == "f":
            return dt.type(np.inf if self.name == "minimum" else -np.inf)
        info = np.iinfo(dt) if dt != np.bool_ else None
        if info is None:
            return np.bool_(self.name == "minimum")
        return dt.type(info.max if self.name == "minimum" else info.min)


plus, multiplies, minimum, maximum = (_Operator(n) for n in ("plus", "multiplies", "minimum", "maximum"))
bit_and, bit_or, bit_xor = (_Operator(n) for n in ("bit_and", "bit_or", "bit_xor"))
logical_and, logical_or = _Operator("logical_and"), _Operator("logical_or")
OPERATORS = {op.name: op for op in (plus, multiplies, minimum, maximum, bit_and, bit_or, bit_xor,
                                    logical_and, logical_or)}


class reduction:  # noqa: N801 - SYCL-style name
    """``sycl::reduction(ptr, op, property::reduction::initialize_to_identity)``."""

    def __init__(self, ptr, op, initialize_to_identity: bool = False):
        if not isinstance(ptr, usm_allocation):
            raise exception(errc.invalid, f"reduction needs a USM allocation to hold its result, got {type(ptr).__name__}")
        if not isinstance(op, _Operator):
            raise exception(errc.invalid, f"reduction: {op!r} is not a reduction operator "
                                          f"(sycl.{', sycl.'.join(OPERATORS)})")
        self.ptr, self.op = ptr, op
        self.initialize_to_identity = require_bool(initialize_to_identity, "reduction initialize_to_identity")

    def __repr__(self):
        return f"reduction({self.ptr!r}, {self.op!r}, initialize_to_identity={self.initialize_to_identity})"


@functools.lru_cache(maxsize=256)
def _reducer(ty: str) -> tuple[str, str] | None:
    """(element, operator) of parameter type ``ty`` when it is a ``reducer<T, op>``
    (``passes/support/signature.py``)."""
    p = parse_param(ty)
    return (p.name, p.op) if p.kind == "reducer" else None


def pack_reduction(ty: str, value) -> int:
    """The slot of a ``reducer<T, op>`` argument: the address of the result;
    ``Refused`` for a wrong value."""
    elem, op = _reducer(ty)
    if not isinstance(value, reduction):
        raise Refused(lambda where: f"{where} must be a sycl.reduction, got {type(value).__name__}")
    want = _DTYPES[elem]
    if value.ptr.dtype != want:
        raise Refused(lambda where: f"{where}: the reduction's memory holds {value.ptr.dtype}, "
                                    f"but the reducer combines {elem} ({want})")
    if value.op.name != op:
        raise Refused(lambda where: f"{where}: the reduction's operator is {value.op!r}, but the reducer's is {op}")
    if value.ptr.freed:
        raise Refused(value.ptr.freed_text)
    if value.ptr.count < 1:
        raise Refused(lambda where: f"{where}: the reduction's memory holds no element (its result needs one)")
    return value.ptr.ptr


def reduction_packer(ty: str):
    """``pack_reduction`` for parameters of type ``ty``, with the common case (a
    reduction of the right element type and operator over live memory) checked
    directly."""
    elem, op = _reducer(ty)
    want = _DTYPES[elem]

    def pack(value) -> int:
        if type(value) is reduction:
            ptr = value.ptr
            if ptr.dtype is want and value.op.name == op and not ptr.freed and ptr.count >= 1:
                return ptr.ptr
        return pack_reduction(ty, value)
    return pack


def has_reductions(args) -> bool:
    return any(isinstance(a, reduction) for a in args)


def prepare(args) -> None:
    """Before a launch: ``initialize_to_identity`` reductions start from the identity."""
    for a in args:
        if isinstance(a, reduction) and a.initialize_to_identity:
            ptr = a.ptr
            if ptr.freed:
                raise exception(errc.invalid, ptr.freed_text("a reduction"))
            if ptr.count < 1:
                raise exception(errc.invalid, "a reduction's memory holds no element (its result needs one)")
            key = (a.op.name, ptr.dtype)
            identity = _IDENTITY.get(key)
            if identity is None:
                identity = _IDENTITY[key] = np.array(a.op.identity(ptr.dtype), dtype=ptr.dtype).tobytes()
            ctypes.memmove(ptr.ptr, identity, len(identity))


#: (operator name, dtype) -> its identity's bytes
_IDENTITY: dict[tuple, bytes] = {}


# -- the launchers' IR ----------------------------------------------------------------------------

def _llvm_identity(op: str, elem: str) -> str:
    value = OPERATORS[op].identity(TYPES[elem][0])
    ty = TYPES[elem][1]
    if ty == "i1":
        return "true" if value else "false"
    if ty in ("half", "float", "double"):
        bits = np.array(value, dtype=TYPES[elem][0]).astype(np.float64).view(np.uint64)
        return "0x%016X" % int(bits) if ty != "half" else "0xH%04X" % int(np.array(value, np.float16).view(np.uint16))
    return str(int(value))


def combine_name(elem: str, op: str) -> str:
    return f"__minisycl_combine.{op}.{elem}"


def accumulator_lines(i: int, elem: str, op: str) -> list[str]:
    """Entry-block lines of a launcher: thread-private accumulator ``%red<i>`` at the identity."""
    ty = TYPES[elem][1]
    return [f"  %red{i} = alloca {ty}, align 8", f"  store {ty} {_llvm_identity(op, elem)}, ptr %red{i}"]


def flush_lines(i: int, elem: str, op: str, target: str) -> list[str]:
    """Lines that combine accumulator ``%red<i>`` into the result at ``target``."""
    ty = TYPES[elem][1]
    return [f"  %redv{i} = load {ty}, ptr %red{i}",
            f"  call void @\"{combine_name(elem, op)}\"(ptr {target}, {ty} %redv{i})"]


_INSTRUCTION = {"plus": ("add", "fadd"), "multiplies": ("mul", "fmul"), "bit_and": ("and", None),
                "bit_or": ("or", None), "bit_xor": ("xor", None), "logical_and": ("and", None),
                "logical_or": ("or", None)}


def _combine_line(op: str, elem: str, ty: str) -> tuple[str, str]:
    """(the line computing ``%new`` from ``%cur`` and ``%v``, a declaration it needs or "")."""
    if op in ("minimum", "maximum"):
        if ty in ("half", "float", "double"):
            intr = f"llvm.{'minnum' if op == 'minimum' else 'maxnum'}.{ {'half': 'f16', 'float': 'f32', 'double': 'f64'}[ty]}"
        else:
            signed = np.dtype(TYPES[elem][0]).kind == "i"
            intr = f"llvm.{'s' if signed else 'u'}{'min' if op == 'minimum' else 'max'}.{ty}"
        return f"  %new = call {ty} @{intr}({ty} %cur, {ty} %v)", f"declare {ty} @{intr}({ty}, {ty})"
    ints, floats = _INSTRUCTION[op]
    return f"  %new = {floats if ty in ('half', 'float', 'double') else ints} {ty} %cur, %v", ""


def combine_functions(used, declared=()) -> str:
    """``void @__minisycl_combine.<op>.<T>(ptr target, T v)``: ``*target = *target op v``,
    atomically (a compare-and-swap loop on the value's bits), for each (element, operator) of ``used``
    (``declared``: the functions the module already has)."""
    out, decls = [], set()
    for elem, op in sorted(used):
        ty = TYPES[elem][1]
        it = f"i{_BITS[ty]}"
        line, decl = _combine_line(op, elem, ty)
        if decl:
            decls.add(decl)
        to_value = (f"  %cur = trunc {it} %old to i1" if ty == "i1" else
                    f"  %cur = bitcast {it} %old to {ty}" if ty != it else f"  %cur = add {it} %old, 0")
        to_bits = (f"  %newb = zext i1 %new to {it}" if ty == "i1" else
                   f"  %newb = bitcast {ty} %new to {it}" if ty != it else f"  %newb = add {it} %new, 0")
        out.append("\n".join([
            f"define internal void @\"{combine_name(elem, op)}\"(ptr %p, {ty} %v) {{",
            "entry:", f"  %first = load atomic {it}, ptr %p monotonic, align {_BITS[ty] // 8}", "  br label %loop",
            "loop:", f"  %old = phi {it} [ %first, %entry ], [ %seen, %loop ]", to_value, line, to_bits,
            f"  %pair = cmpxchg ptr %p, {it} %old, {it} %newb seq_cst monotonic",
            f"  %seen = extractvalue {{ {it}, i1 }} %pair, 0", f"  %ok = extractvalue {{ {it}, i1 }} %pair, 1",
            "  br i1 %ok, label %done, label %loop", "done:", "  ret void", "}", ""]))
    return "\n".join(out) + "".join(d + "\n" for d in sorted(decls) if d.split("@")[1].split("(")[0] not in declared)
