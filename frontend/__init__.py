"""The kernel-language front end: ``*.ksl`` source → verified LLVM IR.

Stages, each a plain function (``../shared/design/architecture.md``):

    parse(text, file, diags)      -> ast.Unit                 (parser.py, Lark LALR tables)
    check(unit, diags)            -> symbols.Program          (checker/ + device_rules.py)
    emit(program, module_id)      -> ir_writer.Module         (emitter/; str() is IR text)
    verify(ir_module, file)       -> LLVM's verified module   (the IR layer's ``verify_generated``)

``compile_source`` runs them all and returns LLVM's canonical printing of the
verified module.  User errors raise ``CompileError`` carrying every diagnostic.
Several sources (``compile_files``) are joined by the IR layer's plain linker
(``passes.ir.link``), the one ``minisycl link`` builds on; LLVM is reached only
through the IR layer.
"""
from __future__ import annotations

import contextlib
import sys
import time
from dataclasses import dataclass, field

from . import device_rules
from ..passes.support.gc_pause import gc_paused
from .emitter import emit
from ..passes.ir import InternalCompilerError, link, verify_generated
from ..passes.support.diagnostics import CompileError, Diagnostic, DiagnosticSink, NestingTooDeep, SourceLoc
from .data_layout import sizeof
from .parser import parse
from .checker import Checker
from .symbols import Program

__all__ = ["compile_source", "compile_files", "parse", "check", "emit", "verify", "InternalCompilerError",
           "CompileResult", "CompileError", "Diagnostic", "DiagnosticSink", "SourceLoc"]


def check(unit, diags: DiagnosticSink) -> Program:
    """Semantic analysis and the device-code rules for one parsed file."""
    prog = Checker(unit, diags, sizeof=sizeof).run()
    if not diags.has_errors:
        device_rules.check(prog.functions, diags)
    return prog


def verify(module, file: str = "<module>"):
    """Parse the printed module with LLVM and run its verifier (in a fresh context,
    so type names never collide between compilations); LLVM rejecting it is
    ``InternalCompilerError``, a bug in the front end."""
    return verify_generated(str(module), file)


@dataclass
class CompileResult:
    module: object          #: LLVM's verified module (llvmlite ``ModuleRef``, from the IR layer)
    warnings: list[Diagnostic]
    sources: dict[str, str]
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def ir(self) -> str:
        return str(self.module)

    def bitcode(self) -> bytes:
        return self.module.as_bitcode()


#: Python frames the checker and emitter may nest: each level of a source's
#: nesting costs a few, so about 20,000 levels compile (Python 3.11+ keeps
#: Python-to-Python calls off the C stack, so this is safe); deeper bodies get
#: a ``too_deep`` error, not a crash.
RECURSION_LIMIT = 100_000


@contextlib.contextmanager
def _deep_recursion():
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def compile_source(text: str, filename: str = "<input>.ksl") -> CompileResult:
    """Compile one source text; raises ``CompileError`` with all diagnostics on error."""
    with gc_paused(), _deep_recursion():
        return _compile(text, filename)


def _compile(text: str, filename: str) -> CompileResult:
    diags = DiagnosticSink({filename: text})
    timings = {}
    t0 = time.perf_counter()
    unit = parse(text, filename, diags)
    t1 = time.perf_counter()
    timings["parse"] = t1 - t0
    prog = check(unit, diags) if not diags.has_errors or unit.items else None
    t2 = time.perf_counter()
    timings["check"] = t2 - t1
    diags.raise_if_errors()
    try:
        module = emit(prog, filename)
    except NestingTooDeep as err:
        diags.error(err.loc, str(err))
        diags.raise_if_errors()
    t3 = time.perf_counter()
    timings["emit"] = t3 - t2
    ref = verify(module, filename)
    timings["verify"] = time.perf_counter() - t3
    return CompileResult(ref, diags.warnings(), diags.sources, timings)


def compile_files(paths: list[str]) -> CompileResult:
    """Compile each file; several files are linked into one module.  Errors of all
    files are reported together."""
    results, errors, sources, error_count = [], [], {}, 0
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        try:
            results.append(compile_source(text, path))
        except CompileError as err:
            errors.extend(err.diagnostics)
            sources.update(err.sources)
            error_count += err.error_count
    if errors:
        raise CompileError(errors, sources, error_count)
    if len(results) == 1:
        return results[0]
    linked = link([str(r.module) for r in results], paths, name="linked")
    warnings = [w for r in results for w in r.warnings]
    for r in results:
        sources.update(r.sources)
    return CompileResult(linked, warnings, sources)
