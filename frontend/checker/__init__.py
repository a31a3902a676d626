"""Semantic analysis: names, C types and conversions, properties, language rules.

Input: the ``ast.Unit`` of each source file.  Output: the same trees annotated in
place (every expression gets ``ty`` and ``lvalue``; implicit conversions become
``Cast`` nodes; names point to their symbols) plus a ``symbols.Program`` holding
the classes, functions and device globals in declaration order.  Errors go to
the ``DiagnosticSink``; checking continues after an error so one run reports many.
Device-code rules that need the whole call graph are the IR passes'
(``check-device-code``, run on the emitted module by ``compile_source``).

The checker is one part per concern sharing a ``CheckContext`` (``context.py``):

====================  =====================================================
``declarations``      classes, functions, file-scope constants, device globals
``properties``        ``[[...]]`` properties of functions, kernels, device globals
``type_names``        type spellings resolved, completeness, fp64/fp16 aspects
``constants``         array sizes, constant and device-global initialisers
``mangling``          Itanium names, ``sycl-unique-id`` (plain functions)
``statements``        bodies, local variables, control flow, if_device blocks
``scopes``            local names, and what if_device blocks capture
``expressions``       literals, names, members, subscripts, assignment, new
``operators``         binary operators, ``&&``/``||``, ``?:``, casts
``calls``             calls, item queries, built-in functions
``conversions``       C's implicit conversions
``groups``            work-group functions, reducers, work-group memory, assert
====================  =====================================================
"""
from __future__ import annotations

from ...passes.support.diagnostics import DiagnosticSink
from .. import ast
from ..parts import connect_parts, disconnect_parts
from ..symbols import Program
from .calls import BUILTINS, Calls
from .constants import Constants
from .context import CheckContext
from .conversions import Conversions
from .declarations import Declarations
from .expressions import Expressions
from .groups import Groups
from .operators import Operators
from .properties import Properties
from .scopes import Scopes
from .statements import Statements
from .type_names import TypeNames

#: context attribute -> part class
PARTS = {"declarations": Declarations, "properties": Properties, "type_names": TypeNames,
         "constants": Constants, "statements": Statements, "scopes": Scopes,
         "expressions": Expressions, "operators": Operators, "calls": Calls, "conversions": Conversions,
         "groups": Groups}

__all__ = ["Checker", "BUILTINS"]


class Checker:
    """Checks one translation unit (see the module docstring)."""

    def __init__(self, unit: ast.Unit, diags: DiagnosticSink, sizeof=None):
        self.unit = unit
        cx = self.cx = CheckContext(unit, diags, sizeof)
        connect_parts(cx, PARTS)

    def run(self) -> Program:
        """Check the unit, once: afterwards the parts are released (they refer to
        each other, and compilation must leave no reference cycles behind for the
        paused garbage collector, see ``tests/frontend/test_memory.py``)."""
        try:
            return self._check()
        finally:
            self.release()

    def release(self) -> None:
        """Release the parts (see ``run``)."""
        disconnect_parts(self.cx, PARTS)

    def _check(self) -> Program:
        bodies = self.declare()
        self.check_bodies(bodies)
        return self.finish()

    # The phases, in turn (``frontend.workers`` runs ``check_bodies`` on shares of
    # the bodies in forked workers).
    def declare(self) -> list:
        """Every file-scope declaration, in source order; the ``(node, sym)`` of
        each body to check, in source order."""
        cx = self.cx
        declare = cx.declarations
        bodies = []
        for item in self.unit.items:
            if isinstance(item, ast.ClassDef):
                bodies.extend(cx.guarded(item.loc, item.name, declare.declare_class, item) or [])
            elif isinstance(item, ast.FuncDef):
                sym = cx.guarded(item.loc, item.name, declare.declare_function, item, None)
                if sym is not None and item.body is not None:
                    bodies.append((item, sym))
            elif isinstance(item, ast.VarDecl):
                cx.guarded(item.loc, item.decls[0].name, declare.declare_global, item, None)
        return bodies

    def check_bodies(self, bodies: list) -> None:
        cx = self.cx
        for node, sym in bodies:
            cx.guarded(node.loc, sym.name, cx.statements.check_body, node, sym)

    def finish(self) -> Program:
        self.cx.constants.construct_device_globals()
        return self.cx.prog
