"""What every part of the emitter shares: the module being written, the
caches of what is already in it, and the state of the function being written.

The emitter is a set of parts, one concern each (``llvm_types``, ``globals``,
``functions``, ``statements``, ``memory``, ``expressions``, ``calls``); each is
a ``Part`` (``frontend.parts``) holding the shared ``EmitContext``.
"""
from __future__ import annotations

from .. import parts
from ..ir_writer import I32, I64, Builder, Function, Module, Value, const
from ..symbols import Program

ZERO32 = const(I32, 0)


def i32(v: int) -> Value:
    return const(I32, v)


def i64(v: int) -> Value:
    return const(I64, v)


class FunctionState:
    """The function being written: its builders, local storage and loop targets."""
    __slots__ = ("fn", "sym", "builder", "allocas", "locals", "loops", "entry")

    def __init__(self, fn: Function, sym):
        self.fn, self.sym = fn, sym
        # Allocas go in their own entry block (so loops never grow the stack);
        # code starts in the next block, joined by ``finish``.
        self.entry = fn.append_basic_block("entry")
        self.allocas = Builder(fn, self.entry)
        self.builder = Builder(fn, fn.append_basic_block("start"))
        self.locals: dict = {}
        self.loops: list = []

    def finish(self):
        self.allocas.branch(self.fn.blocks[1])


class EmitContext:
    """``module``: the IR being written; ``fn``: the ``FunctionState`` of the
    function being written (None between functions); ``loaded``: the target
    value a compound assignment's ``Loaded`` placeholder stands for; the
    dictionaries map language entities to what the module already has for them."""

    def __init__(self, prog: Program, module: Module, fns: dict | None = None):
        self.prog = prog
        self.module = module
        self.fn: FunctionState | None = None
        self.loaded = None
        self.types: dict = {}           # language type -> ir_writer.Type
        self.fns: dict = {} if fns is None else fns     # FuncSym -> Function
        self.vtables: dict = {}         # ClassType -> address point Value
        self.dgs: dict = {}             # DeviceGlobalSym -> GlobalVariable
        self.spec_ids: dict = {}        # SpecIdSym -> GlobalVariable
        self.constants: dict = {}       # ConstSym of class or array type -> GlobalVariable
        self.intrinsics: dict = {}      # name -> Function
        self.strings: dict = {}         # text -> GlobalVariable
        self.workgroup: dict = {}       # LocalSym of work-group memory -> its addrspace(3) GlobalVariable


class Part(parts.Part):
    """One concern of the emitter (see ``frontend.parts``)."""

    def __init__(self, cx: EmitContext):
        super().__init__(cx)
        self.prog = cx.prog
        self.types, self.fns, self.vtables, self.dgs = cx.types, cx.fns, cx.vtables, cx.dgs
        self.intrinsics, self.strings = cx.intrinsics, cx.strings
