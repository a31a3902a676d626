"""LLVM IR emission (as text, ``ir_writer``) from the checked AST: one module, host and device code together.

IR conventions (``docs/formats.md``, "IR conventions between the stages", as DPC++ emits them):

* kernels are ``spir_kernel``, other functions ``spir_func``; kernels, SYCL_EXTERNAL
  functions and indirectly-callable methods carry ``"sycl-module-id"``;
* virtual methods with a set carry ``"indirectly-callable"="<set>"``, kernels
  ``"calls-indirectly"``; vtables are Itanium-style ``{ [2+N x ptr] }`` constants
  and virtual calls carry ``"virtual-call"``;
* host-only functions carry ``"minisycl-host-only"``: ``"declared"`` on a
  function declared ``host``, ``"virtual"`` on a virtual method (``virtual`` or
  ``override``) without ``indirectly_callable`` (host code as the virtual
  functions design says: the device side keeps only a stub in its vtable
  slots, ``passes/host_only_virtuals.py``), no value on ``print``'s ``printf``;
* ``device_has`` becomes ``!sycl_declared_aspects``; every module has ``!sycl_aspects``,
  and ``!sycl_types_that_use_aspects`` when it stores ``half`` (as DPC++'s
  ``sycl::half`` class, so the upstream aspect rule finds fp16);
* device globals are ``{ ptr, T }`` (USM pointer and initial value; the runtime
  fills in the pointer) or ``{ T }`` with ``device_image_scope``, with the
  ``"sycl-*"`` attributes of the device_global design;
* each ``if_device``/``if_host`` block becomes a lambda-like function called
  through a ``noinline`` helper marked ``"sycl-call-if-on-device"`` or
  ``"sycl-call-if-on-host"`` (the single-pass design of DPC++'s ``if_device`` design, intel/llvm sycl/doc/design/DeviceIf.md).

The emitter is one part per concern sharing an ``EmitContext`` (``context.py``):
``globals`` (declarations, vtables, device globals, metadata), ``llvm_types``
(types and constants), ``functions`` (bodies, constructors, if_device lambdas),
``statements``, ``expressions``, ``calls`` (calls, new, item queries,
built-ins), ``memory`` (addresses, loads, stores) and ``groups`` (work-group
memory, group functions, reducers, ``assert``).
"""
from __future__ import annotations

from ...passes.support.diagnostics import NestingTooDeep
from ..data_layout import DATALAYOUT, TRIPLE
from ..ir_writer import Module
from ..parts import connect_parts, disconnect_parts
from ..symbols import Program
from .calls import Calls
from .context import EmitContext
from .expressions import Expressions
from .functions import Functions
from .globals import Globals
from .groups import Groups
from .llvm_types import LlvmTypes
from .memory import Memory
from .statements import Statements

#: context attribute -> part class
PARTS = {"llvm_types": LlvmTypes, "globals": Globals, "functions": Functions, "statements": Statements,
         "memory": Memory, "expressions": Expressions, "calls": Calls, "groups": Groups}

__all__ = ["emit", "Emitter"]


class Emitter:
    """Writes the IR module of one checked translation unit."""

    def __init__(self, prog: Program, module_id: str, module: Module | None = None, fns: dict | None = None):
        """``module``: the module to write (default a new one); ``fns``: the
        ``FuncSym -> Function`` mapping to fill (a worker's declares on demand)."""
        self.prog = prog
        self.module_id = module_id
        self.cx = EmitContext(prog, module if module is not None else Module(module_id, TRIPLE, DATALAYOUT), fns)
        connect_parts(self.cx, PARTS)

    def emit(self) -> Module:
        """The module, once: afterwards the parts are released (they refer to each
        other; compilation leaves no reference cycles, see ``tests/frontend/test_memory.py``)."""
        try:
            return self._emit()
        finally:
            self.release()

    def release(self) -> None:
        """Release the parts (see ``emit``)."""
        disconnect_parts(self.cx, PARTS)

    def _emit(self) -> Module:
        self.declare()
        self.define(self.defined())
        return self.finish()

    # The phases, in turn (``frontend.workers`` runs ``define`` on shares of the
    # functions in forked workers).
    def declare(self, functions: bool = True) -> None:
        """Functions (unless not ``functions``: then ``fns`` declares each on
        demand), vtables, device globals and specialization ids, in that order."""
        declare = self.cx.globals
        for g in self.prog.device_globals:
            declare.declare_dg(g)
        for f in self.prog.functions if functions else ():
            declare.declare_fn(f)
        for cls in self.prog.classes:
            if cls.polymorphic:
                declare.vtable(cls)
        for g in self.prog.device_globals:
            declare.define_dg(g)
        for s in self.prog.spec_ids:
            declare.define_spec_id(s)

    def defined(self) -> list:
        """The functions with a body, in the order their bodies are written."""
        return self.defined_of(self.prog)

    @staticmethod
    def defined_of(prog: Program) -> list:
        return [f for f in prog.functions if f.defined and f.node is not None and f.node.body is not None]

    def define(self, functions) -> None:
        for f in functions:
            self.define_one(f)

    def define_one(self, f) -> None:
        try:
            self.cx.functions.define_fn(f)
        except RecursionError:
            raise NestingTooDeep(f.loc, f.name) from None

    def finish(self) -> Module:
        self.cx.globals.module_metadata()
        return self.cx.module


def emit(prog: Program, module_id: str) -> Module:
    """The IR module (``ir_writer.Module``; ``str()`` is its text) of one checked translation unit."""
    return Emitter(prog, module_id).emit()
