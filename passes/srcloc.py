"""Source locations of IR entities, for diagnostics that IR passes report.

The front end attaches ``!minisycl.loc !{!"file", i32 line, i32 col}`` to each
function it defines and to each call it emits (clang's ``!srcloc`` idea, as a
small node that survives serialisation).  IR from elsewhere has none, and its
diagnostics name the functions instead.
"""
from __future__ import annotations

from ..passes.support.diagnostics import SourceLoc
from .ir import Function, Module, indirect_calls, quote_name, unquote_name
from .ir import metadata_attachments

KIND = "minisycl.loc"


def _line_loc(module: Module, line: str) -> SourceLoc | None:
    """The location attached to one instruction line."""
    return _loc(module, metadata_attachments(line).get(KIND))


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
            return _line_loc(module, line)
    return None


def indirect_call_locs(module: Module, caller: Function, attribute: str) -> list[SourceLoc | None]:
    """Locations of the indirect calls in ``caller`` whose call-site attributes include ``attribute``."""
    out = []
    if caller.body is None:
        return out
    for line, groups in indirect_calls(caller.body):
        if any(attribute in module.attributes_of_group(g) for g in groups):
            out.append(_line_loc(module, line))
    return out
