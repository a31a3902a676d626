"""The pass manager: runs a pipeline of passes over one module.

The manager owns the module; passes edit it in place and return a
``PassResult`` (like LLVM's ``PreservedAnalyses``), which tells the
``AnalysisManager`` which cached analyses are still valid.  Facts that cross
passes (diagnostics, the host module split off the device module, the
virtual-function sets kernels create) live in the typed ``PassContext``.

Debugging, as in ``opt``: ``print_before``/``print_after`` (pass names or
``"all"``) dump the IR to a stream, ``verify_each`` hands the module to LLVM's
verifier after every pass, and ``timings`` records the time of each pass.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Callable, TextIO

from .support.diagnostics import CompileError, DiagnosticSink
from .ir import Module, gc_paused
from .ir.speculation import checkpoint

__all__ = ["PassResult", "PassContext", "AnalysisManager", "PassManager", "ANALYSES"]


class PassResult:
    """What a pass preserved: everything, nothing, or a named set of analyses."""

    __slots__ = ("preserved",)

    def __init__(self, preserved: frozenset | None):
        self.preserved = preserved          # None = all

    @classmethod
    def preserving(cls, *names: str) -> "PassResult":
        return cls(frozenset(names))

    @property
    def changed(self) -> bool:
        return self.preserved is not None

    def __repr__(self):
        return "PassResult.ALL" if self.preserved is None else f"PassResult.preserving{tuple(sorted(self.preserved))}"


PassResult.ALL = PassResult(None)
PassResult.NONE = PassResult(frozenset())


@dataclass
class PassContext:
    """Facts shared by the passes of one pipeline run."""

    diagnostics: DiagnosticSink = field(default_factory=DiagnosticSink)
    #: set by split-if-device: the host half of a single-source module
    host_module: Module | None = None
    #: set by a caller that will write the host half: split-if-device then
    #: starts its verification at once, beside the passes that follow
    verify_host_in_background: bool = False
    #: set by analyze-virtual-functions: kernel -> virtual-function sets of the vtables it uses
    created_sets: dict[str, list[str]] = field(default_factory=dict)
    #: set by aggregate-atomics: kernel -> its private copy and the parameters whose updates it aggregates
    aggregated_atomics: dict[str, object] = field(default_factory=dict)
    #: ``lower-work-groups``: kernel -> ``LoweredKernel`` (its group function and facts)
    work_groups: dict[str, object] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)


def _call_graph(module: Module):
    from .callgraph import CallGraph
    return CallGraph.of(module)


#: analysis name -> function computing it from the module
ANALYSES: dict[str, Callable[[Module], object]] = {"callgraph": _call_graph}


class AnalysisManager:
    """Caches analyses of the module until a pass invalidates them."""

    def __init__(self, module: Module, ctx: PassContext):
        self.module, self.ctx = module, ctx
        self._cache: dict[str, object] = {}

    def get(self, name: str):
        if name not in self._cache:
            self._cache[name] = ANALYSES[name](self.module)
        return self._cache[name]

    def invalidate(self, result: PassResult) -> None:
        if result.preserved is None:
            return
        for name in list(self._cache):
            if name not in result.preserved:
                del self._cache[name]


class PassManager:
    def __init__(self, passes: list, *, verify_each: bool = False, print_before=(), print_after=(),
                 dump: TextIO | None = None):
        self.passes = passes
        self.verify_each = verify_each
        self.print_before, self.print_after = set(print_before), set(print_after)
        self.dump = dump or sys.stderr

    def _wants(self, names: set, p) -> bool:
        return "all" in names or p.name in names

    def run(self, module: Module, ctx: PassContext | None = None) -> PassContext:
        """Run every pass in order.  Errors a pass reports stop the pipeline
        with ``CompileError``; warnings stay in ``ctx.diagnostics``."""
        ctx = ctx or PassContext()
        with gc_paused():
            self._run(module, ctx)
        return ctx

    def _run(self, module: Module, ctx: PassContext) -> None:
        am = AnalysisManager(module, ctx)
        for p in self.passes:
            checkpoint()            # work on an input LLVM has rejected by now stops here (``ir/speculation.py``)
            if self._wants(self.print_before, p):
                self.dump.write(f"; *** IR Dump Before {p.name} ***\n{module.text()}\n")
            t0 = time.perf_counter()
            result = p.run(module, am)
            ctx.timings[p.name] = ctx.timings.get(p.name, 0.0) + time.perf_counter() - t0
            am.invalidate(result)
            if ctx.diagnostics.has_errors:
                raise CompileError(ctx.diagnostics.errors_and_warnings(), ctx.diagnostics.sources,
                                   ctx.diagnostics.error_count)
            if self.verify_each and result.changed:
                t0 = time.perf_counter()
                module.verify()
                if ctx.host_module is not None and p.name == "split-if-device":
                    ctx.host_module.verify()
                ctx.timings["verify"] = ctx.timings.get("verify", 0.0) + time.perf_counter() - t0
            if self._wants(self.print_after, p):
                self.dump.write(f"; *** IR Dump After {p.name} ***\n{module.text()}\n")
