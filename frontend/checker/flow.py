"""Control flow of checked bodies: can the end of a function be reached?

A non-void function whose end is reachable returns no value on that path
(undefined behaviour in C++; clang's ``-Wreturn-type``).  Here it is an error:
the language has no ``noreturn`` functions, so every such path is a real one
and the fix (a ``return``) is always possible.

Reachability is C++'s, with constant conditions folded: ``while (1)`` and
``for (;;)`` without a ``break`` of their own never complete; ``if (c) A else B``
completes when either branch does; ``if_device``/``if_host`` blocks cannot
``return`` (the checker refuses it), so they always complete.
"""
from __future__ import annotations

from .. import ast
from ..constants import const_fold


def completes(s) -> bool:
    """Whether execution can reach the point after statement ``s``."""
    t = type(s)
    if t is ast.Return:
        return False
    if t is ast.Block:
        return all(completes(x) for x in s.stmts)
    if t is ast.If:
        return s.other is None or completes(s.then) or completes(s.other)
    if t is ast.While or t is ast.For:
        return not _always_true(s.cond) or _breaks(s.body)
    if t is ast.DoWhile:
        body_ends = completes(s.body) or _continues(s.body)
        return _breaks(s.body) or (body_ends and not _always_true(s.cond))
    return True


def _always_true(cond) -> bool:
    """A missing ``for`` condition, or one that folds to a non-zero constant."""
    if cond is None:
        return True
    v = const_fold(cond)
    return v is not None and bool(v)


def _jumps(s, kind) -> bool:
    """Whether ``s`` holds a ``break``/``continue`` (``kind``) of the enclosing loop
    (not one of a nested loop)."""
    t = type(s)
    if t is kind:
        return True
    if t is ast.Block:
        return any(_jumps(x, kind) for x in s.stmts)
    if t is ast.If:
        return _jumps(s.then, kind) or (s.other is not None and _jumps(s.other, kind))
    return False


def _breaks(body) -> bool:
    return _jumps(body, ast.Break)


def _continues(body) -> bool:
    return _jumps(body, ast.Continue)
