"""The layouts of a program's classes and structs, from Python (``prog.sizeof``,
``prog.dtype``): the front end computes each class's size, alignment, base and
fields with the IR's data layout (``frontend/data_layout.py``), the bundle
carries them (``docs/formats.md``, "Bundles"), and this module turns them into
NumPy structured dtypes, so that host code allocates and reads objects without
hard-coding their sizes.

A dtype holds every field of the class at its offset, inherited fields first
(the language refuses a field that hides an inherited one, so names are
unique); a field of class type is a nested dtype, an array a subarray, a pointer a ``uint64``.  The vtable
pointer of a polymorphic class (its first 8 bytes) is no field.  A layout that
breaks these rules (a crafted bundle) is ``errc::invalid``, as a name the program
does not define."""
from __future__ import annotations

import numpy as np

from .errors import errc, exception
from .work_groups import C_DTYPES

__all__ = ["ClassLayouts"]

_SCALARS = {**{name: np.dtype(t) for name, t in C_DTYPES.items()}, "ptr": np.dtype(np.uint64)}


class ClassLayouts:
    """The layouts of one program: class name -> ``{size, align, base, fields}``."""

    def __init__(self, layouts: dict[str, dict], where: str):
        self._layouts = layouts
        self._where = where
        self._dtypes: dict[str, np.dtype] = {}

    def names(self) -> list[str]:
        return sorted(self._layouts)

    def layout(self, name: str) -> dict:
        if not isinstance(name, str):
            raise exception(errc.invalid, f"a class name is a str, got {type(name).__name__}")
        found = self._layouts.get(name)
        if found is None:
            known = ", ".join(self.names()) or "none"
            raise exception(errc.invalid, f"no class or struct named '{name}' in {self._where} (classes: {known})")
        return found

    def sizeof(self, name: str) -> int:
        return self.layout(name)["size"]

    def alignof(self, name: str) -> int:
        return self.layout(name)["align"]

    def dtype(self, name: str) -> np.dtype:
        found = self._dtypes.get(name)
        if found is None:
            found = self._dtypes[name] = self._build(name, ())
        return found

    # -- building ---------------------------------------------------------------------

    def _fields(self, name: str, visiting: tuple) -> list[tuple[str, int, np.dtype]]:
        """(name, offset, dtype) of every field of ``name``, inherited ones first."""
        layout = self.layout(name)
        out = []
        if layout["base"] is not None:
            base, offset = layout["base"]
            if base in visiting + (name,):
                self._cycle(name)
            out = [(n, offset + o, t) for n, o, t in self._fields(base, visiting + (name,))]
        out += [(n, o, self._type(t, visiting + (name,))) for n, o, t in layout["fields"]]
        return out

    def _type(self, ty, visiting: tuple) -> np.dtype:
        if isinstance(ty, str):
            return _SCALARS[ty]
        if ty[0] == "array":                    # T[2][3]: one subarray of shape (2, 3)
            shape = []
            while isinstance(ty, list) and ty[0] == "array":
                shape.append(ty[2])
                ty = ty[1]
            return np.dtype((self._type(ty, visiting), tuple(shape)))
        if ty[1] in visiting:
            self._cycle(ty[1])
        return self._build(ty[1], visiting)

    def _build(self, name: str, visiting: tuple) -> np.dtype:
        layout = self.layout(name)
        fields = self._fields(name, visiting)
        names = [n for n, _, _ in fields]
        if len(set(names)) != len(names):
            raise exception(errc.invalid, f"{self._where}: the layout of '{name}' names a field twice")
        try:
            return np.dtype({"names": names, "formats": [t for _, _, t in fields],
                             "offsets": [o for _, o, _ in fields], "itemsize": layout["size"]})
        except (ValueError, TypeError) as err:
            raise exception(errc.invalid, f"{self._where}: the layout of '{name}' is not a valid layout "
                                          f"({err})") from None

    def _cycle(self, name: str):
        raise exception(errc.invalid, f"{self._where}: the layout of '{name}' contains itself")
