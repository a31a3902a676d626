"""Types as written (``ast.TypeSpec``) resolved to language types, completeness
checks, and the aspects (fp64, fp16) a use of a type implies."""
from __future__ import annotations

from ...device_configs.aspects import Aspect
from .. import ast, types
from ..data_layout import MAX_OBJECT_SIZE, flat_fields
from ..types import DOUBLE, GENERIC, HALF, KERNEL_HANDLER, LOCAL, ArrayType, ItemType, PointerType
from .context import Part


class TypeNames(Part):
    uses = {"constants": ("array_size",), "groups": ("reducer_type",)}

    def resolve_type(self, spec: ast.TypeSpec, dims=(), what="variable", allow_dg=False,
                     allow_local=False, allow_reducer=False, allow_handler=False) -> types.Type | None:
        """The type ``spec`` names with array ``dims``; ``allow_local``: ``local T``
        (work-group memory) may be declared here, ``allow_reducer``: a ``reducer<T, op>`` may."""
        if spec.kind == "dg":
            return self.device_global_element(spec, allow_dg)
        if spec.kind == "reducer":
            return self.reducer(spec, dims, allow_reducer)
        if spec.kind == "spec_id":
            self.error(spec.loc, "specialization_id<T> must be declared at namespace scope (a file-scope variable)")
            return None
        if spec.kind == "handler":
            if not allow_handler or spec.ptr or dims or spec.local or spec.const:
                self.error(spec.loc, "kernel_handler can only be the type of the last parameter of a kernel")
                return None
            return KERNEL_HANDLER
        ty = self.base_type(spec)
        if ty is None:
            return None
        if ty is HALF:
            self.prog.uses_half = True
        if spec.ptr + len(dims) > types.MAX_TYPE_DEPTH:
            self.error(spec.loc, f"type has {spec.ptr} '*' and {len(dims)} array dimensions; at most "
                                 f"{types.MAX_TYPE_DEPTH} together are allowed")
            return None
        if spec.local and not spec.ptr and not allow_local:
            self.error(spec.loc, "'local' declares work-group memory only as a variable in a function body; "
                                 "a pointer into it is 'local T*'")
        for i in range(spec.ptr):
            ty = PointerType(ty, LOCAL if spec.local and i == 0 else GENERIC)
        size = self.object_size(ty) if dims and not ty.is_void else 0
        for dim in reversed(dims):
            n = self.array_size(dim, spec.loc)
            if n is None:
                return None
            if ty.is_void:
                self.error(spec.loc, "array of void")
                return None
            ty = ArrayType(ty, n)
            size *= n                       # (not sizeof(ty) again: linear in the number of dimensions)
            if size >= MAX_OBJECT_SIZE:
                self.error(dim.loc, f"array is too large ({n} elements)")
                return None
        return ty

    def object_size(self, ty) -> int:
        return self.cx.sizeof(ty) if self.cx.sizeof is not None else 0

    def fits_address_space(self, ty) -> bool:
        """Whether an object of type ``ty`` fits the 64-bit address space
        (``data_layout.MAX_OBJECT_SIZE``): the limit arrays are checked against
        as their type is built (``resolve_type``), and classes as they are completed."""
        return self.object_size(ty) < MAX_OBJECT_SIZE

    def base_type(self, spec: ast.TypeSpec) -> types.Type | None:
        """The type a primitive, class or item spelling names (before ``*`` and ``[N]``)."""
        if spec.kind == "prim":
            ty = types.primitive(spec.words)
            if ty is None:
                self.error(spec.loc, f"invalid type '{' '.join(spec.words)}'")
            return ty
        if spec.kind == "named":
            ty = self.classes.get(spec.name)
            if ty is None:
                self.error(spec.loc, f"unknown type '{spec.name}'")
            return ty
        if spec.dims not in (1, 2, 3):     # item
            shown = spec.dims if spec.dims < 2 ** 64 else "..."      # the parser's TOO_LARGE
            self.error(spec.loc, f"{spec.name}<{shown}>: dimensions must be 1, 2 or 3")
            return None
        return ItemType(spec.name, spec.dims)

    def spec_id_element(self, spec: ast.TypeSpec) -> types.Type | None:
        """``T`` of ``specialization_id<T>``: an arithmetic type, or a struct or
        array made of them (SYCL 2020: device-copyable, no pointers)."""
        inner = self.resolve_type(spec.inner, spec.inner_dims, "specialization constant")
        if inner is None:
            return None
        bad = _not_spec_constant(inner)
        if bad is not None:
            self.error(spec.inner.loc, f"specialization_id<{inner}> is not allowed: {bad}")
            return None
        return inner

    def reducer(self, spec: ast.TypeSpec, dims, allowed: bool) -> types.Type | None:
        if not allowed or spec.ptr or dims or spec.local:
            self.error(spec.loc, "reducer<T, op> can only be the type of a parameter of a parallel_for kernel")
            return None
        elem = self.resolve_type(spec.inner, ())
        if elem is None:
            return None
        return self.reducer_type(elem, spec.name, spec)

    def device_global_element(self, spec: ast.TypeSpec, allow_dg: bool) -> types.Type | None:
        """``T`` of ``device_global<T>``, where a device global may be declared."""
        if not allow_dg or spec.ptr:
            self.error(spec.loc, "device_global<T> can only be the type of a file-scope variable or a static class member")
            return None
        inner = self.resolve_type(spec.inner, spec.inner_dims, "device_global element")
        if inner is None:
            return None
        if inner.is_void or inner.is_item:
            self.error(spec.inner.loc, f"device_global<{inner}> is not allowed")
            return None
        return inner

    def is_complete(self, ty, loc, what):
        if ty.is_void:
            self.error(loc, f"{what} cannot have type void")
            return False
        if ty.is_class and not ty.complete:
            self.error(loc, f"{what} has incomplete type '{ty}'")
            return False
        return True

    def note_type_aspects(self, ty, loc, what):
        """Record the aspects a value of ``ty`` needs (double: fp64, half: fp16) on
        the function being checked; ``what`` names the value, with ``{}`` where the
        type goes (formatted only when an aspect is recorded: this runs per expression)."""
        cx = self.cx
        fn = cx.fn
        if fn is None or ty is None:
            return
        if ty.is_array or ty.is_class:
            double, half = types.contains(ty, _is_double), types.contains(ty, _is_half)
        else:                                   # a scalar or pointer: ``contains`` tests ``ty`` alone
            double, half = ty is DOUBLE, ty is HALF
        if double:
            key = (Aspect.fp64, cx.region)
            if key not in fn.aspects:
                fn.aspects[key] = (loc, what.format(ty))
        if half:
            self.prog.uses_half = True
            key = (Aspect.fp16, cx.region)
            if key not in fn.aspects:
                fn.aspects[key] = (loc, what.format(ty))


def _is_double(t) -> bool:
    return t is DOUBLE


def _is_half(t) -> bool:
    return t is HALF


def _not_spec_constant(ty) -> str | None:
    """Why ``ty`` cannot be a specialization constant's type, or None."""
    if ty.is_arith:
        return None
    if ty.is_array:
        return _not_spec_constant(ty.elem)
    if ty.is_class:
        if ty.polymorphic:
            return f"'{ty}' has virtual functions"
        for _, fty in flat_fields(ty):
            why = _not_spec_constant(fty)
            if why is not None:
                return why
        return None
    return "T must be an arithmetic type, or a struct or array of them"
