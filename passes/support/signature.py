"""A kernel's parameter signature: the one representation every stage shares.

The front end writes it (the ``"minisycl-kernel-signature"`` attribute), the
build derives it from the IR's parameter types for a kernel that came from LLVM
IR (``passes/ir/kernel_params.py``, which also checks that a written signature
agrees with the code), the bundle header stores it (``kernels``), ``minisycl
inspect`` shows it, and the runtime checks and packs arguments by it
(``runtime/arguments.py``).  All of them go through ``parse`` / ``Signature.text``
here, so a signature one of them writes is one every other reads.

Text form: the parameter types, comma-separated (none: the empty string)::

    id<N> | nd_item<N>          the work-item, first parameter only (N = 1..3)
    bool char uchar short ushort int uint long ulong half float double
    i1 i8 i16 i32 i64           an integer from LLVM IR, of either signedness
    [SPACE ]T*...               a pointer; T a scalar, void or a struct name, with
                                array extents (``int[4]*``) and more ``*``;
                                SPACE: local (work-group memory sized at launch),
                                global, constant, generic (LLVM address spaces 1, 2
                                and 4: USM pointers, like the unprefixed one)
    struct NAME{SIZE}           a struct passed by value, SIZE bytes (1..65536),
                                alignment at most 8
    reducer<T, op>              a ``sycl.reduction`` of scalar T with operator op
    kernel_handler              the last parameter only: specialization constants
                                are read through it (not an argument a launch
                                passes; ``Signature.handler``)

``parse`` refuses anything else with a ``SignatureError`` saying which
parameter and why; ``Signature.text`` gives the canonical spelling (``parse``
of it gives the same signature).  How arguments fill the runtime's 8-byte
slots: one slot per parameter after the item, then one for a ``kernel_handler``
(the address of the buffer of specialization constant values the runtime
fills in), then, for each struct, its bytes in ``ceil(SIZE / 8)`` more slots at
the end (its own slot holds their address, ``Signature.struct_slots``), so a
struct's bytes live exactly as long as the slots that hold its address.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = ["Param", "Signature", "SignatureError", "parse", "parse_param", "SCALARS", "IR_INTEGERS",
           "REDUCER_OPERATORS", "ADDRESS_SPACES", "MAX_STRUCT_BYTES", "MAX_STRUCT_ALIGN", "MAX_TEXT"]

#: the kernel language's scalar types
SCALARS = ("bool", "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "half", "float", "double")
#: integers of a kernel from LLVM IR, which says nothing of signedness
IR_INTEGERS = ("i1", "i8", "i16", "i32", "i64")
REDUCER_OPERATORS = ("plus", "multiplies", "minimum", "maximum", "bit_and", "bit_or", "bit_xor",
                     "logical_and", "logical_or")
#: pointer prefix -> LLVM address space
ADDRESS_SPACES = {"": 0, "global": 1, "constant": 2, "local": 3, "generic": 4}
MAX_STRUCT_BYTES = 1 << 16
#: the longest signature text (hundreds of thousands of parameters; a bundle header holds it)
MAX_TEXT = 1 << 22
MAX_STRUCT_ALIGN = 8
_ITEMS = ("id", "nd_item")
#: the spelling of a last ``kernel_handler`` parameter
HANDLER = "kernel_handler"

_ITEM = re.compile(r"(id|nd_item)<([123])>")
_POINTER = re.compile(r"(?:(global|constant|local|generic) )?([A-Za-z_]\w*(?:\[\d{1,10}\])*)(\*+)", re.ASCII)
_STRUCT = re.compile(r"struct ([A-Za-z_$.][\w$.:]*)\{(\d{1,6})\}", re.ASCII)
_REDUCER = re.compile(r"reducer<\s*(\w+)\s*,\s*(\w+)\s*>", re.ASCII)
_BRACKETS = re.compile(r"[<>,]")


class SignatureError(ValueError):
    """A signature text that is not one of the forms above."""


@dataclass(frozen=True)
class Param:
    """One parameter: ``kind`` is item, scalar, pointer, struct or reducer.

    item: ``name`` (id/nd_item), ``dims``; scalar: ``name``; pointer:
    ``pointee`` (its type text, ``*`` included for a pointer to pointer),
    ``space`` (prefix, "" generic); struct: ``name``, ``size``; reducer:
    ``name`` (element type), ``op``."""
    kind: str
    name: str = ""
    dims: int = 0
    pointee: str = ""
    space: str = ""
    size: int = 0
    op: str = ""

    @property
    def text(self) -> str:
        if self.kind == "item":
            return f"{self.name}<{self.dims}>"
        if self.kind == "pointer":
            return f"{self.space + ' ' if self.space else ''}{self.pointee}*"
        if self.kind == "struct":
            return f"struct {self.name}{{{self.size}}}"
        if self.kind == "reducer":
            return f"reducer<{self.name}, {self.op}>"
        return self.name

    @property
    def slots(self) -> int:
        """8-byte slots its bytes take after the parameters' own slots (a struct's)."""
        return (self.size + 7) // 8 if self.kind == "struct" else 0

    def __str__(self):
        return self.text


@dataclass(frozen=True)
class Signature:
    """A kernel's parameters; ``item`` the work-item parameter or None, ``args`` the
    others a launch passes; ``handler``: a last ``kernel_handler`` parameter."""
    item: Param | None
    args: tuple[Param, ...]
    handler: bool = False

    @property
    def params(self) -> tuple[Param, ...]:
        return ((self.item,) if self.item else ()) + self.args

    @property
    def text(self) -> str:
        return ",".join([p.text for p in self.params] + ([HANDLER] if self.handler else []))

    @property
    def dims(self) -> int:
        return self.item.dims if self.item else 0

    def struct_slots(self) -> tuple[tuple[int, int, int], ...]:
        """(argument index, first slot of its bytes, size) of each struct argument."""
        out, at = [], len(self.args) + self.handler
        for i, p in enumerate(self.args):
            if p.kind == "struct":
                out.append((i, at, p.size))
                at += p.slots
        return tuple(out)

    def value_slots(self) -> tuple[int, ...]:
        """For each argument, the slot where its value's bytes start: its own slot,
        or a struct's first slot at the end (what a driver that takes a pointer to
        each argument's bytes, CUDA's ``cuLaunchKernel``, points at)."""
        out = list(range(len(self.args) + self.handler))       # (the handler's: its own slot)
        for i, at, _ in self.struct_slots():
            out[i] = at
        return tuple(out)

    @property
    def slot_count(self) -> int:
        """The 8-byte slots its arguments take (``struct_slots``)."""
        return len(self.args) + self.handler + sum(p.slots for p in self.args)

    def __str__(self):
        return self.text


def parse_param(text: str, first: bool = False) -> Param:
    """One parameter type; ``first``: it may be the work-item."""
    return _param(text.strip(), first)


@functools.lru_cache(maxsize=1024)
def _param(t: str, first: bool) -> Param:
    """``parse_param`` (a signature repeats its types: each is read once)."""
    m = _ITEM.fullmatch(t)
    if m:
        if not first:
            raise SignatureError(f"'{t}' can only be the first parameter")
        return Param("item", m.group(1), dims=int(m.group(2)))
    if t in SCALARS or t in IR_INTEGERS:
        return Param("scalar", t)
    m = _POINTER.fullmatch(t)
    if m:
        return Param("pointer", pointee=m.group(2) + m.group(3)[1:], space=m.group(1) or "")
    m = _STRUCT.fullmatch(t)
    if m:
        size = int(m.group(2))
        if not 1 <= size <= MAX_STRUCT_BYTES:
            raise SignatureError(f"'{_short(t)}': a struct by value of {size} bytes (1 to {MAX_STRUCT_BYTES})")
        return Param("struct", m.group(1), size=size)
    m = _REDUCER.fullmatch(t)
    if m:
        if m.group(1) not in SCALARS:
            raise SignatureError(f"'{_short(t)}': a reducer of '{m.group(1)}' (a scalar type is needed)")
        if m.group(2) not in REDUCER_OPERATORS:
            raise SignatureError(f"'{_short(t)}': '{m.group(2)}' is not a reduction operator")
        return Param("reducer", m.group(1), op=m.group(2))
    raise SignatureError(f"'{_short(t)}' is not a parameter type")


def parse(text: str) -> Signature:
    """A signature from its text; ``SignatureError`` names the first bad parameter."""
    if len(text) > MAX_TEXT:
        raise SignatureError(f"{len(text)} characters of parameter types (at most {MAX_TEXT})")
    parts = _split(text) if text.strip() else []
    handler = bool(parts) and parts[-1] == HANDLER
    if handler:
        parts.pop()
    params = []
    for i, part in enumerate(parts):
        try:
            params.append(parse_param(part, first=i == 0))
        except SignatureError as err:
            raise SignatureError(f"parameter {i + 1} {err}") from None
    item = params[0] if params and params[0].kind == "item" else None
    args = tuple(params[1:] if item else params)
    if item is None and any(p.kind == "reducer" for p in args):
        raise SignatureError("a reducer parameter needs a first parameter id<N> or nd_item<N>")
    if any(p.kind == "pointer" and p.space == "local" for p in args) and (item is None or item.name != "nd_item"):
        raise SignatureError("a local pointer parameter needs a first parameter nd_item<N>")
    return Signature(item, args, handler)


def _split(text: str) -> list[str]:
    """The parameter types: ``text`` cut at the commas outside ``<...>`` (one pass,
    so a signature of many parameters costs in proportion to its length)."""
    parts, depth, start = [], 0, 0
    for m in _BRACKETS.finditer(text):
        c = m.group()
        if c == "<":
            depth += 1
        elif c == ">":
            depth = max(depth - 1, 0)
        elif depth == 0:
            parts.append(text[start:m.start()].strip())
            start = m.end()
    parts.append(text[start:].strip())
    return parts


def _short(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "..."
