"""The ordered set of aspect numbers (or condition integers) the
propagate-aspects pass writes: upstream's ``SmallSet<int, 4>``, whose
iteration order is the order of the operands of its metadata."""
from __future__ import annotations

__all__ = ["AspectSet"]


class AspectSet:
    """Upstream's ``SmallSet<int, 4>``: insertion order while it holds at most
    four values, ascending order from the fifth on (it then moves them to a
    ``std::set``, and stays there).  Its order is the order of the operands of
    ``!sycl_used_aspects``."""

    __slots__ = ("_items", "_big")

    def __init__(self, values=()):
        self._items: dict[int, None] = {}
        self._big = False
        self.update(values)

    def add(self, value: int) -> None:
        if value not in self._items:
            self._items[value] = None
            if len(self._items) > 4:
                self._big = True

    def update(self, values) -> None:
        for v in values:
            self.add(v)

    def __iter__(self):
        return iter(sorted(self._items) if self._big else list(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, value) -> bool:
        return value in self._items

    def copy(self) -> "AspectSet":
        out = AspectSet()
        out._items, out._big = dict(self._items), self._big
        return out
