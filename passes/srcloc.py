"""Source locations of IR entities, for diagnostics that IR passes report.

The front end attaches ``!minisycl.loc !{!"file", i32 line, i32 col}`` to each
function it defines and to each call it emits (clang's ``!srcloc`` idea, as a
small node that survives serialisation).  IR from elsewhere has none, and its
diagnostics name the functions instead.
"""
from __future__ import annotations

import re

from ..frontend.diagnostics import SourceLoc
from .ir import INDIRECT_CALL_ATTRS, Function, Module, quote_name, unquote_name

KIND = "minisycl.loc"
_LOC_ATTACH = re.compile(r'!minisycl\.loc (!\d+)')


def _loc(module: Module, ref: str | None) -> SourceLoc | None:
    if ref is None:
        return None
    ops = module.metadata_operands(ref)
    if len(ops) != 3 or not ops[0].startswith('!"'):
        return None
    try:
        return SourceLoc(unquote_name(ops[0][1:]), int(ops[1].split()[1]), int(ops[2].split()[1]))
    except (ValueError, IndexError):
        return None


def function_loc(module: Module, fn: Function) -> SourceLoc | None:
    return _loc(module, fn.metadata.get(KIND))


def call_loc(module: Module, caller: Function, callee: str) -> SourceLoc | None:
    """Where ``caller`` first calls ``callee``."""
    if caller.body is None:
        return None
    needle = "@" + quote_name(callee) + "("
    for line in caller.body.splitlines():
        if needle in line and "call " in line:
            m = _LOC_ATTACH.search(line)
            return _loc(module, m.group(1)) if m else None
    return None


def indirect_call_locs(module: Module, caller: Function, attribute: str) -> list[SourceLoc | None]:
    """Locations of the indirect calls in ``caller`` whose call-site attributes include ``attribute``."""
    out = []
    if caller.body is None:
        return out
    for line in caller.body.splitlines():
        m = INDIRECT_CALL_ATTRS.search(line)
        if m and attribute in module.attributes_of_group(int(m.group(1)[1:])):
            lm = _LOC_ATTACH.search(line)
            out.append(_loc(module, lm.group(1)) if lm else None)
    return out
