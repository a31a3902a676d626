"""LLVM types of language types (storage and value types: ``half`` is DPC++'s
``sycl::half`` class in memory) and constants of them."""
from __future__ import annotations

from ...device_configs.aspects import HALF_CLASS
from ..ir_writer import (DOUBLE, FLOAT, HALF, I1, I64, PTR, PTR_LOCAL, VOID, array_type, const,
                         const_aggregate, int_type)
from ..data_layout import ND_ITEM_FIELDS
from .context import Part


class LlvmTypes(Part):
    def lltype(self, ty):
        """Storage (memory and ABI) type: ``half`` is DPC++'s ``sycl::half`` class."""
        t = self.types.get(ty)
        if t is not None:
            return t
        if ty.is_void:
            t = VOID
        elif ty.is_bool:
            t = I1
        elif ty.is_int:
            t = int_type(ty.bits)
        elif ty.is_float:
            if ty.bits == 16:
                t = self.cx.module.identified_type(HALF_CLASS)
                t.set_body([HALF])
            else:
                t = FLOAT if ty.bits == 32 else DOUBLE
        elif ty.is_ptr:
            t = PTR_LOCAL if ty.space == 3 else PTR
        elif ty.is_reducer:
            t = PTR             # the accumulator of the thread running the work-item
        elif ty.is_handler:
            t = PTR             # the run-time buffer of specialization constant values
        elif ty.is_array:
            t = array_type(self.lltype(ty.elem), ty.count)
        elif ty.is_item:
            t = self.cx.module.identified_type(f"class.sycl::_V1::{ty.kind}.{ty.dims}")
            vec = array_type(I64, ty.dims)
            t.set_body([vec] * (len(ND_ITEM_FIELDS) if ty.kind == "nd_item" else 1))
        elif ty.is_class:
            t = self.cx.module.identified_type(f"{'struct' if ty.keyword == 'struct' else 'class'}.{ty.name}")
            self.types[ty] = t          # before the members: a member may point back
            t.set_body([PTR if kind == "vptr" else self.lltype(payload if kind == "base" else payload[1])
                                for kind, payload in ty.llvm_members()])
            return t
        else:
            raise AssertionError(f"no LLVM type for {ty}")
        self.types[ty] = t
        return t
    def valtype(self, ty):
        """Register (value) type: ``half`` itself."""
        if ty.is_float and ty.bits == 16:
            return HALF
        return self.lltype(ty)
    def zero(self, ty):
        return const(self.lltype(ty), None)
    def const_value(self, ty, value):
        """The constant of ``ty`` for a checker value tree (None: zero).  Every
        vtable pointer holds its object's vtable: a complete object's dynamic
        class is its static class, a base subobject's is the complete object's."""
        if value is None and not _has_vptr(ty):
            return self.zero(ty)
        if ty.is_array:
            value = value or []
            items = [self.const_value(ty.elem, v) for v in value] + \
                    [self.const_value(ty.elem, None)] * (ty.count - len(value))
            return const_aggregate(self.lltype(ty), items)
        if ty.is_class:
            return self._const_class(ty, list(value or []), ty)
        return self.scalar_const(ty, value)
    def _const_class(self, cls, values, dynamic):
        members = []
        for kind, payload in cls.llvm_members():
            if kind == "vptr":
                members.append(self.vtables[dynamic])
            elif kind == "base":
                members.append(self._const_class(payload, values, dynamic))
            else:
                members.append(self.const_value(payload[1], values.pop(0) if values else None))
        return const_aggregate(self.lltype(cls), members)
    def scalar_const(self, ty, value):
        if ty.is_float and ty.bits == 16:
            return const_aggregate(self.lltype(ty), [const(HALF, float(value))])
        if ty.is_float:
            return const(self.lltype(ty), float(value))
        return const(self.lltype(ty), int(value))
    def scalar_value(self, ty, v):
        if ty.is_float:
            return const(self.valtype(ty), float(v))
        return const(self.lltype(ty), int(v))


def _has_vptr(ty) -> bool:
    """Whether an object of ``ty`` holds a vtable pointer somewhere."""
    while ty.is_array:
        ty = ty.elem
    return ty.is_class and (ty.polymorphic or any(_has_vptr(fty) for _, fty in ty.fields))
