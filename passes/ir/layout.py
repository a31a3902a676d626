"""Sizes, alignments and constant bytes of LLVM IR types, read from IR text.

The specialization-constant transformation (``spec_constants.py``) needs what
LLVM's ``DataLayout`` answers for the types a ``specialization_id`` holds:
the store size and ABI alignment of a type, the offsets of a struct's fields,
and the bytes a constant of that type is made of.  The device modules the
tool reads use the 64-bit layout of SPIR and of this CPU (``i64`` and
``double`` aligned to 8, pointers 8 bytes), for which the rules are C's:

* ``iN``: ``N`` rounded up to a power of two of bytes (``i1`` is one byte);
  ``half``/``float``/``double``: 2/4/8; ``ptr``: 8;
* ``[N x T]``: ``N`` times ``T``'s allocation size, ``T``'s alignment;
* ``<N x T>``: ``N`` elements, aligned to the size rounded up to a power of two;
* ``{ ... }``: each field at the next multiple of its alignment, the whole
  rounded up to the largest alignment; ``<{ ... }>``: no padding, alignment 1.

A constant is read into a tree of ``(type, value)`` leaves by ``parse_constant``
(integers, LLVM's decimal and hexadecimal floats, ``zeroinitializer``,
``undef``/``poison``, ``c"..."`` strings, structs, arrays and vectors) and laid out
by ``constant_bytes``, with zero bytes for padding and undefined parts.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from .lexer import split_operands, split_type, string_bytes
from ..support.diagnostics import UserError

__all__ = ["Layout", "LayoutError", "Leaf", "parse_constant", "aggregate_elements", "scalar_bytes"]


class LayoutError(UserError):
    """A type or constant this reader cannot lay out."""


_FLOATS = {"half": 2, "bfloat": 2, "float": 4, "double": 8}


def _pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def _strip_struct(text: str) -> tuple[bool, list[str]]:
    """(packed, field types) of a literal struct type ``{ a, b }`` / ``<{ a, b }>``."""
    t = text.strip()
    packed = t.startswith("<{")
    inner = t[2:-2] if packed else t[1:-1]
    return packed, split_operands(inner)


def _array_parts(text: str) -> tuple[int, str]:
    """``(N, T)`` of ``[N x T]`` or ``<N x T>``."""
    inner = text.strip()[1:-1].strip()
    n, _, elem = inner.partition(" x ")
    if not n.strip().isdigit():
        raise LayoutError(f"cannot read the type '{text}'")
    return int(n), elem.strip()


@dataclass(frozen=True)
class Leaf:
    """A scalar constant: its type, its offset in the whole value, and its value
    (int, float, the raw bits of a ``half`` as ``("bits", n)``, or None: undefined)."""
    type: str
    offset: int
    value: object


class Layout:
    """LLVM's layout of the module's types (``types``: ``%name`` -> its line)."""

    def __init__(self, types: dict[str, str]):
        self._types = types
        self._cache: dict[str, tuple[int, int]] = {}

    def resolve(self, ty: str) -> str:
        """The body of a named type (``%struct.A`` -> ``{ i32, float }``), other types as they are."""
        ty = ty.strip()
        seen = 0
        while ty.startswith("%"):
            line = self._types.get(ty)
            if line is None:
                raise LayoutError(f"unknown type {ty}")
            body = line.split(" = type ", 1)[1].strip() if " = type " in line else ""
            if body == "opaque" or not body:
                raise LayoutError(f"type {ty} is opaque: its size is unknown")
            ty = body
            seen += 1
            if seen > 64:
                raise LayoutError("type definitions nest too deeply")
        return ty

    def size_align(self, ty: str) -> tuple[int, int]:
        """(allocation size, ABI alignment) of ``ty``."""
        key = ty.strip()
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._compute(self.resolve(key))
        return found

    def store_size(self, ty: str) -> int:
        """Bytes a store of ``ty`` writes (``getTypeStoreSize``): scalars without tail padding."""
        body = self.resolve(ty)
        if body.startswith("i") and body[1:].isdigit():
            return (int(body[1:]) + 7) // 8
        return self.size_align(ty)[0]

    def align(self, ty: str) -> int:
        return self.size_align(ty)[1]

    def field_offsets(self, ty: str) -> list[tuple[str, int]]:
        """(type, offset) of the fields of a struct, elements of an array or vector."""
        body = self.resolve(ty)
        if body.startswith("{") or body.startswith("<{"):
            packed, fields = _strip_struct(body)
            out, offset = [], 0
            for f in fields:
                size, align = self.size_align(f)
                if not packed:
                    offset = (offset + align - 1) // align * align
                out.append((f, offset))
                offset += size
            return out
        if body.startswith("[") or body.startswith("<"):
            n, elem = _array_parts(body)
            step = self.size_align(elem)[0]
            return [(elem, i * step) for i in range(n)]
        raise LayoutError(f"'{ty}' is not an aggregate")

    def is_aggregate(self, ty: str) -> bool:
        body = self.resolve(ty)
        return body[:1] in "{[<"

    def _compute(self, body: str) -> tuple[int, int]:
        if body.startswith("i") and body[1:].isdigit():
            n = _pow2(max((int(body[1:]) + 7) // 8, 1))
            return n, min(n, 8)
        if body in _FLOATS:
            return _FLOATS[body], _FLOATS[body]
        if body == "ptr" or body.startswith("ptr ") or body.endswith("*"):
            return 8, 8
        if body.startswith("{") or body.startswith("<{"):
            packed, fields = _strip_struct(body)
            offset, max_align = 0, 1
            for f in fields:
                size, align = self.size_align(f)
                if not packed:
                    offset = (offset + align - 1) // align * align
                    max_align = max(max_align, align)
                offset += size
            return (offset + max_align - 1) // max_align * max_align, max_align
        if body.startswith("["):
            n, elem = _array_parts(body)
            size, align = self.size_align(elem)
            return n * size, align
        if body.startswith("<"):
            n, elem = _array_parts(body)
            size = n * self.size_align(elem)[0]
            align = _pow2(size)
            return (size + align - 1) // align * align, align
        raise LayoutError(f"cannot lay out the type '{body}'")

    # -- constants -------------------------------------------------------------------

    def leaves(self, ty: str, value: str, base: int = 0) -> list[Leaf]:
        """The scalar leaves of constant ``value`` of type ``ty``, in memory order."""
        body = self.resolve(ty)
        v = value.strip()
        if not self.is_aggregate(ty):
            return [Leaf(body, base, _scalar(body, v))]
        fields = self.field_offsets(ty)
        if v in ("zeroinitializer",) or v in ("undef", "poison"):
            out = []
            for fty, off in fields:
                sub = self.leaves(fty, v, base + off)
                out.extend(sub)
            return out
        elems = aggregate_elements(body, v)
        if len(elems) != len(fields):
            raise LayoutError(f"the constant '{v[:60]}' does not match the type '{ty}'")
        out = []
        for (fty, off), (ety, ev) in zip(fields, elems):
            out.extend(self.leaves(ety or fty, ev, base + off))
        return out

    def constant_bytes(self, ty: str, value: str) -> bytes:
        """The bytes of constant ``value`` of type ``ty`` (store size; padding and undefined bytes zero)."""
        out = bytearray(self.store_size(ty))
        for leaf in self.leaves(ty, value):
            out[leaf.offset:leaf.offset + self.store_size(leaf.type)] = scalar_bytes(leaf.type, leaf.value,
                                                                                   self.store_size(leaf.type))
        return bytes(out)


def aggregate_elements(body: str, v: str) -> list[tuple[str | None, str]]:
    """``(type, value)`` of each element of an aggregate constant's text."""
    if v.startswith('c"'):                                  # c"ab\00": i8 elements
        raw = string_bytes(v[1:])
        return [("i8", str(b)) for b in raw]
    if v.startswith("<{"):
        inner = v[2:-2]
    elif v[:1] in "{[<":
        inner = v[1:-1]
    else:
        raise LayoutError(f"cannot read the constant '{v[:60]}' of type '{body}'")
    out = []
    for op in split_operands(inner):
        t, rest = split_type(op)
        out.append((t.strip(), rest.strip()))
    return out


def _scalar(ty: str, v: str):
    if v in ("undef", "poison"):
        return None
    if v == "zeroinitializer" or v == "null":
        return 0
    if ty.startswith("i") and ty[1:].isdigit():
        if v == "true":
            return 1
        if v == "false":
            return 0
        try:
            return int(v)
        except ValueError:
            raise LayoutError(f"'{v[:40]}' is not an integer constant of type {ty}") from None
    if ty in _FLOATS:
        if v.startswith("0xH") or v.startswith("0xR"):
            return ("bits", int(v[3:], 16))
        if v.startswith("0x"):
            return struct.unpack("<d", int(v[2:], 16).to_bytes(8, "little"))[0]
        try:
            return float(v)
        except ValueError:
            raise LayoutError(f"'{v[:40]}' is not a floating-point constant of type {ty}") from None
    raise LayoutError(f"a specialization constant cannot hold a value of type '{ty}'")


def scalar_bytes(ty: str, value, size: int) -> bytes:
    """Little-endian bytes of a scalar leaf (``None``: undefined, zero bytes)."""
    if value is None:
        return bytes(size)
    if isinstance(value, tuple):
        return value[1].to_bytes(size, "little")
    if ty in _FLOATS:
        fmt = {2: "<e", 4: "<f", 8: "<d"}[size]
        return struct.pack(fmt, value)
    return (int(value) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


def parse_constant(text: str) -> tuple[str, str]:
    """``(type, value)`` of typed constant text (``i32 42``, ``%struct.A { ... }``)."""
    t, rest = split_type(text.strip())
    return t.strip(), rest.strip()
