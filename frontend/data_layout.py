"""The data layout of the emitted IR: triple, layout string, type sizes and
alignments, class layouts (the checker's ``sizeof`` and the emitter's types both
take them from here).

The front end emits DPC++'s device convention, ``spir64-unknown-unknown`` with its
data layout; the runtime retargets modules to the host CPU before JIT (both are
64-bit little-endian with the same scalar alignments, so sizes agree).
"""
from __future__ import annotations

from . import types

TRIPLE = "spir64-unknown-unknown"
DATALAYOUT = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64"

#: The largest object size, in bytes, for a 64-bit address space: clang's
#: limit (an object's size in bits, 8x its bytes, must fit 64 bits; an array
#: index of any element must fit ``long``), which keeps every offset LLVM
#: computes from overflowing.
MAX_OBJECT_SIZE = 1 << 61

#: nd_item<N> holds five N-vectors, in this order (item_queries indexes them).
ND_ITEM_FIELDS = ("global_id", "local_id", "group", "global_range", "local_range")


def size_align(ty: types.Type) -> tuple[int, int]:
    """ABI size and alignment in bytes, as LLVM computes them for ``DATALAYOUT``."""
    if ty.is_bool:
        return 1, 1
    if ty.is_int or ty.is_float:
        n = ty.bits // 8
        return n, n
    if ty.is_ptr or ty.is_reducer or ty.is_handler:
        return 8, 8
    if ty.is_array:
        s, a = size_align(ty.elem)
        return s * ty.count, a
    if ty.is_item:
        n = ty.dims * 8 * (len(ND_ITEM_FIELDS) if ty.kind == "nd_item" else 1)
        return n, 8
    if ty.is_class:
        return struct_layout(ty)[1:]
    return 1, 1   # void, as GCC's sizeof(void)


def struct_layout(cls: types.ClassType) -> tuple[list[int], int, int]:
    """Byte offsets of the LLVM struct members, total size, alignment."""
    offset, align, offsets = 0, 1, []
    for kind, payload in cls.llvm_members():
        if kind == "vptr":
            s, a = 8, 8
        elif kind == "base":
            s, a = size_align(payload)
        else:
            s, a = size_align(payload[1])
        offset = (offset + a - 1) // a * a
        offsets.append(offset)
        offset += s
        align = max(align, a)
    size = (offset + align - 1) // align * align
    return offsets, max(size, 1) if not offsets else size, align


def sizeof(ty: types.Type) -> int:
    return size_align(ty)[0]


def flat_fields(cls: types.ClassType) -> list[tuple[str, types.Type]]:
    """Fields in layout order including inherited ones (for aggregate initialisation)."""
    out = list(flat_fields(cls.base)) if cls.base is not None else []
    out.extend(cls.fields)
    return out


def type_descriptor(ty: types.Type):
    """A field's type for the bundle's class layouts (``docs/formats.md``, "Bundles"):
    a scalar's name (``int``, ``float``...), ``"ptr"``, ``["array", T, count]`` or
    ``["class", name]``; an ``id``/``range``/``nd_item`` is an array of ``long``."""
    if ty.is_bool:
        return "bool"
    if ty.is_int or ty.is_float:
        return ty.name
    if ty.is_ptr or ty.is_reducer:
        return "ptr"
    if ty.is_array:
        return ["array", type_descriptor(ty.elem), ty.count]
    if ty.is_item:
        return ["array", "long", sizeof(ty) // 8]
    if ty.is_class:
        return ["class", ty.name]
    raise ValueError(f"no layout for a field of type {ty}")


def class_layouts(classes) -> dict[str, dict]:
    """Every class's layout as the bundle carries it: ``{size, align, base, fields}``,
    ``base`` ``[name, offset]`` or ``None``, ``fields`` ``[name, offset, type]`` of the
    class's own fields in declaration order (the vtable pointer, when there is one, is
    the first 8 bytes and no field)."""
    out = {}
    for cls in classes:
        offsets, size, align = struct_layout(cls)
        base, fields = None, []
        for (kind, payload), offset in zip(cls.llvm_members(), offsets):
            if kind == "base":
                base = [payload.name, offset]
            elif kind == "field":
                fields.append([payload[0], offset, type_descriptor(payload[1])])
        out[cls.name] = {"size": size, "align": align, "base": base, "fields": fields}
    return out
