"""Source locations of IR entities, for diagnostics that IR passes report.

The front end attaches ``!minisycl.loc !{!"file", i32 line, i32 col[, i32 length]}`` to each
function it defines and to each call it emits (clang's ``!srcloc`` idea, as a
small node that survives serialisation).  IR from elsewhere has none, and its
diagnostics name the functions instead.
"""
from __future__ import annotations

from ..passes.support.diagnostics import SourceLoc
from .ir import Function, Module, indirect_calls, quote_name, unquote_name
from .ir import metadata_attachments
from .support.ir_contract import ASPECT_USES, SOURCE_NAME, SRCLOC, VIRTUAL_CALL, VIRTUAL_TARGET



def line_loc(module: Module, line: str) -> SourceLoc | None:
    """The location attached to one instruction line."""
    return _loc(module, metadata_attachments(line).get(SRCLOC))


def _loc(module: Module, ref: str | None) -> SourceLoc | None:
    if ref is None:
        return None
    ops = module.metadata_operands(ref)
    if len(ops) not in (3, 4) or not ops[0].startswith('!"'):
        return None
    try:
        return SourceLoc(unquote_name(ops[0][1:]), *(int(op.split()[1]) for op in ops[1:]))
    except (ValueError, IndexError):
        return None


def function_loc(module: Module, fn: Function) -> SourceLoc | None:
    return _loc(module, fn.metadata.get(SRCLOC))


def global_loc(module: Module, name: str) -> SourceLoc | None:
    """Where the global ``name`` was declared (its ``!minisycl.loc``), if attached."""
    g = module.globals.get(name)
    return _loc(module, g.metadata.get(SRCLOC)) if g is not None else None


def call_loc(module: Module, caller: Function, callee: str) -> SourceLoc | None:
    """Where ``caller`` first calls ``callee``."""
    if caller.body is None:
        return None
    needle = "@" + quote_name(callee) + "("
    for line in caller.body.splitlines():
        if needle in line and "call " in line:
            return line_loc(module, line)
    return None


# --- the source's names and facts (attached by the front end; absent in other IR) ----



def _strings(module: Module, ref: str | None) -> list[str]:
    if ref is None:
        return []
    return [unquote_name(op[1:]) if op.startswith('!"') else op for op in module.metadata_operands(ref)]


def display_name(module: Module, name: str) -> str:
    """How diagnostics name the function ``name``: its source name when the front
    end attached one, else its IR name."""
    fn = module.functions.get(name)
    if fn is not None:
        names = _strings(module, fn.metadata.get(SOURCE_NAME))
        if names:
            return names[0]
    return name


def display_chain(module: Module, names: list[str]) -> list[str]:
    """``display_name`` of each, repeats in a row shown once (the helpers the
    front end makes of ``if_device`` blocks speak for their function)."""
    out: list[str] = []
    for n in names:
        shown = display_name(module, n)
        if not out or out[-1] != shown:
            out.append(shown)
    return out


def virtual_call_sites(module: Module, caller: Function, attribute: str = VIRTUAL_CALL
                       ) -> list[tuple[SourceLoc | None, str | None, str | None]]:
    """(location, target's source name, target's set; ``""``: none) of each
    ``attribute`` call in ``caller``; the target is ``None`` where not attached."""
    out = []
    if caller.body is None:
        return out
    for line, groups in indirect_calls(caller.body):
        if any(attribute in module.attributes_of_group(g) for g in groups):
            target = _strings(module, metadata_attachments(line).get(VIRTUAL_TARGET))
            name, set_name = (target + [None, None])[:2] if target else (None, None)
            out.append((line_loc(module, line), name, set_name))
    return out


def aspect_use(module: Module, fn: Function, aspect: int) -> tuple[SourceLoc, str] | None:
    """Where ``fn``'s source first uses ``aspect``, and how (``"variable of type 'double'"``)."""
    ops = module.metadata_operands(fn.metadata[ASPECT_USES]) if ASPECT_USES in fn.metadata else []
    for i in range(0, len(ops) - 4, 5):
        try:
            if int(ops[i].split()[1]) == aspect:
                loc = SourceLoc(unquote_name(ops[i + 1][1:]), int(ops[i + 2].split()[1]), int(ops[i + 3].split()[1]))
                return loc, unquote_name(ops[i + 4][1:])
        except (ValueError, IndexError):
            return None
    return None
