"""Collaborating parts: how the checker and the emitter are each split by concern.

A ``Part`` holds the shared context ``cx`` of its stage and declares in ``uses``
which methods of other parts (found as ``cx.<part>``) it calls; ``connect`` binds
them onto it once all parts exist, so a call reads ``self.expr(e)`` in whichever
part ``expr`` lives and costs no more than a method of its own.  Parts refer to
each other, so a stage calls ``disconnect`` on each when it is done: compilation
leaves no reference cycles for the paused garbage collector.
"""
from __future__ import annotations


class Part:
    #: context attribute of another part -> names of its methods this part calls
    uses: dict[str, tuple[str, ...]] = {}

    def __init__(self, cx):
        self.cx = cx

    def connect(self) -> None:
        for part, names in self.uses.items():
            other = getattr(self.cx, part)
            for name in names:
                setattr(self, name, getattr(other, name))

    def disconnect(self) -> None:
        """Drop what ``connect`` bound (and anything else held), breaking the cycles between parts."""
        self.__dict__.clear()


def connect_parts(cx, parts: dict[str, type]) -> None:
    """Make one of each part class, as ``cx.<name>``, and connect them."""
    made = {name: cls(cx) for name, cls in parts.items()}
    for name, part in made.items():
        setattr(cx, name, part)
    for part in made.values():
        part.connect()


def disconnect_parts(cx, parts: dict[str, type]) -> None:
    for name in parts:
        getattr(cx, name).disconnect()
        delattr(cx, name)
