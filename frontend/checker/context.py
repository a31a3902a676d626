"""What every part of the checker shares: the translation unit's tables, the
function being checked, and the diagnostics.

The checker is a set of parts, one concern each (``declarations``,
``statements``, ``expressions``, ``calls``, ``conversions``, ``constants``,
``properties``, ``type_names``, ``scopes``).  Each part is a ``Part`` (``frontend.parts``)
holding the shared ``CheckContext``.
"""
from __future__ import annotations

from ...passes.support.diagnostics import DiagnosticSink, SourceLoc, too_deep
from .. import parts
from ..symbols import FuncSym, LocalSym, Program
from ..types import ClassType


class CheckContext:
    """The state the parts share.  Tables (``classes``, ``globals``, ``prog``) are
    filled in place; ``fn``, ``region`` and ``this_sym`` describe the body being
    checked (``region``: None, ``"device"`` or ``"host"``, see ``symbols``)."""

    def __init__(self, unit, diags: DiagnosticSink, sizeof):
        self.unit = unit
        self.file = unit.file
        self.diags = diags
        self.sizeof = sizeof        # callable(Type) -> int: data_layout.sizeof
        self.prog = Program(unit.file)
        self.classes: dict[str, ClassType] = {}
        self.globals: dict[str, object] = {}
        self.fn: FuncSym | None = None
        self.region: str | None = None
        self.this_sym: LocalSym | None = None
        #: the expression being checked is the object of a static member call
        #: (``g.has_property(..)``): it names ``g`` without accessing it
        self.static_member_use = False

    def error(self, loc, msg, notes=None):
        self.diags.error(loc, msg, notes)

    def note(self, loc, msg):
        return self.diags.note(loc, msg)

    def tok_loc(self, tok) -> SourceLoc:
        """Where a token (``lexer.Token``) of this file is."""
        return SourceLoc(self.file, tok[2], tok[3], len(tok[1]))

    def guarded(self, loc, name, work, *args):
        """``work(*args)``, or the too-deep error at ``loc`` when the construct
        nests deeper than the checker's recursion can follow."""
        try:
            return work(*args)
        except RecursionError:
            self.error(loc, too_deep(name))
            return None


class Part(parts.Part):
    """One concern of the checker (see ``frontend.parts``)."""

    def __init__(self, cx: CheckContext):
        super().__init__(cx)
        self.error, self.note, self.tok_loc = cx.error, cx.note, cx.tok_loc
        self.file, self.prog, self.classes, self.globals = cx.file, cx.prog, cx.classes, cx.globals
