"""An entity order that LLVM's parser reads back (issue 32, point 6).

LLVM prints global variables before functions.  A global whose initialiser
holds ``dso_local_equivalent @f`` or ``no_cfi @f`` then names ``@f`` before
its definition, and LLVM's parser gives such a forward reference the
datalayout's default *globals* address space: with DPC++'s ``-G1`` it is a
``ptr addrspace(1)`` where a function is a plain ``ptr``, and LLVM refuses
the very text it printed ("constant expression type mismatch").  The same
holds for a function body naming a later function so (possible in bitcode,
whose order is free).

``parseable_order`` is the one place that decides the order in which
``Module.text`` writes entities: LLVM's own order, except that the functions
these two constant expressions name come first among the functions, and the
globals that use them come after all functions.  Every other forward
reference in LLVM's text carries its type, so moving these entities changes
nothing else; LLVM then reads the text back (and writes it in its order
again, which is why the written ``.ll`` file keeps this order).  Modules
without either expression (nearly all) keep LLVM's order untouched.
"""
from __future__ import annotations

import re

__all__ = ["parseable_order", "names_equivalents"]

#: the constant expressions whose operand LLVM's parser types by the globals' address space
_EQUIVALENT = re.compile(r'\b(?:dso_local_equivalent|no_cfi)\s+@("(?:[^"\\]|\\.)*"|[-\w$.]+)')


def names_equivalents(text: str) -> bool:
    """Whether ``text`` may hold one of those expressions (a fast test first)."""
    return ("dso_local_equivalent" in text or "no_cfi" in text) and _EQUIVALENT.search(text) is not None


def _targets(text: str) -> set[str]:
    from .lexer import unquote_name
    return {unquote_name(m.group(1)) if m.group(1).startswith('"') else m.group(1)
            for m in _EQUIVALENT.finditer(text)}


def parseable_order(globals_: dict, functions: dict) -> tuple[list, list, list]:
    """``(globals before the functions, functions, globals after them)``, each a
    list of the entities (``.text()``) in the order to write them."""
    moved = [g for g in globals_.values() if names_equivalents(g.line)]
    named: set[str] = set()
    for g in moved:
        named |= _targets(g.line)
    for f in functions.values():
        if f.body is not None and names_equivalents(f.body):
            named |= _targets(f.body)
    if not named and not moved:
        return list(globals_.values()), list(functions.values()), []
    first = [f for n, f in functions.items() if n in named]
    rest = [f for n, f in functions.items() if n not in named]
    staying = [g for g in globals_.values() if not names_equivalents(g.line)]
    return staying, first + rest, moved
