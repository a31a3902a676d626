"""Types as written (``ast.TypeSpec``) resolved to language types, completeness
checks, and the aspects (fp64, fp16) a use of a type implies."""
from __future__ import annotations

from ...device_configs.aspects import Aspect
from .. import ast, types
from ..types import DOUBLE, HALF, ArrayType, ItemType, PointerType
from .context import Part


class TypeNames(Part):
    uses = {"constants": ("array_size",)}

    def resolve_type(self, spec: ast.TypeSpec, dims=(), what="variable", allow_dg=False) -> types.Type | None:
        if spec.kind == "dg":
            return self.device_global_element(spec, allow_dg)
        ty = self.base_type(spec)
        if ty is None:
            return None
        if ty is HALF:
            self.prog.uses_half = True
        for _ in range(spec.ptr):
            ty = PointerType(ty)
        for dim in reversed(dims):
            n = self.array_size(dim, spec.loc)
            if n is None:
                return None
            if ty.is_void:
                self.error(spec.loc, "array of void")
                return None
            ty = ArrayType(ty, n)
        return ty

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
            self.error(spec.loc, f"{spec.name}<{spec.dims}>: dimensions must be 1, 2 or 3")
            return None
        return ItemType(spec.name, spec.dims)

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
        the function being checked."""
        cx = self.cx
        fn = cx.fn
        if fn is None or ty is None:
            return
        if types.contains(ty, lambda t: t is DOUBLE):
            fn.aspects.setdefault((Aspect.fp64, cx.region), (loc, what))
        if types.contains(ty, lambda t: t is HALF):
            self.prog.uses_half = True
            fn.aspects.setdefault((Aspect.fp16, cx.region), (loc, what))
