"""Brace elision: a flat initialiser list for a nested aggregate, as C++ reads it.

``int m[2][3] = {1, 2, 3, 4, 5, 6}`` initialises ``m`` in row-major order:
when the next initialiser of an aggregate member (an array element, a field)
that is itself an aggregate is not a brace list, that member takes as many
initialisers from the same list as it needs ([dcl.init.aggr], brace elision).
``nest`` rewrites such a list into the fully braced form, so the rest of the
checker sees one brace list per aggregate.  Initialisers left over stay at
the end (the checker then reports "too many initialisers").
"""
from __future__ import annotations

from .. import ast
from ..data_layout import flat_fields


def _members(ty):
    """Member types of aggregate ``ty`` in initialisation order, or None for a scalar."""
    if ty.is_array:
        return [ty.elem] * ty.count
    if ty.is_class:
        return [fty for _, fty in flat_fields(ty)]
    return None


def nest(il: ast.InitList, ty, whole=None) -> ast.InitList:
    """``il`` with the braces C++ elides put back, for an object of type ``ty``.
    ``whole(item, member_type)``: whether an initialiser that is not a brace list
    initialises a whole aggregate member by itself (a named object of that type,
    ``{TS1, TS2}`` for ``S[2]``), where C++ elides no braces."""
    members = _members(ty)
    if members is None or il.paren:
        return il           # a parenthesised list elides no braces (C++20 [dcl.init.general])
    items, out, pos = il.items, [], 0
    for mty in members:
        if pos >= len(items):
            break
        item, pos = _take(items, pos, mty, whole)
        out.append(item)
    out.extend(items[pos:])
    return ast.InitList(il.loc, out)


def _take(items, pos, ty, whole):
    """The initialiser of one member of type ``ty`` starting at ``items[pos]``,
    and the position after it."""
    item = items[pos]
    members = _members(ty)
    if isinstance(item, ast.InitList):
        return (nest(item, ty, whole) if members is not None else item), pos + 1
    if members is None or whole is not None and whole(item, ty):
        return item, pos + 1
    sub = []
    for mty in members:
        if pos >= len(items):
            break
        x, pos = _take(items, pos, mty, whole)
        sub.append(x)
    return ast.InitList(item.loc, sub), pos
