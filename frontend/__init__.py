"""The kernel-language front end: ``*.ksl`` source → verified LLVM IR.

Stages, each a plain function (``docs/architecture.md``):

    parse(text, file, diags)      -> ast.Unit                 (parser.py, Lark LALR tables)
    check(unit, diags)            -> symbols.Program          (checker/)
    emit(program, module_id)      -> ir_writer.Module         (emitter/; str() is IR text)
    check_device_code(text, diags)                            (the IR passes' ``check-device-code``)
    verify(ir_module, file)       -> LLVM's verified module   (the IR layer's ``verify_generated``)

``compile_source`` runs the last two side by side: LLVM parses and verifies on
the IR layer's verifier thread while Python applies the rules.  For a large
source on a machine with free cores, the bodies are parsed, checked and
emitted by forked workers (``workers.py``; ``MINISYCL_FRONTEND_WORKERS``),
with the same module, byte for byte, and the same diagnostics.

The rules that need the device call graph (host-only calls, recursion,
undefined functions, virtual calls, aspects missing from ``device_has``) have
one engine, the IR passes: the front end attaches what they need to speak the
source's language (``!minisycl.loc``, ``!minisycl.name``, ``!minisycl.vcall``,
``!minisycl.aspect_uses``, the ``"minisycl-host-only"``/``"minisycl-undefined"``
attributes) and runs the ``check-device-code`` pipeline through the pass
manager on the emitted text, cut by the IR layer (the emitter writes attribute
groups as LLVM does, so no LLVM printing is needed).  It runs here rather than
in the CLI and the build so that ``compile_source`` stays the whole front end
for every caller; this is the one reason the front end imports the pass
registry and manager (``tests/test_layering.py``).

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

from ..passes import parse_pipeline
from ..passes.manager import PassContext, PassManager
from ..passes.support.gc_pause import gc_paused
from ..passes.support.inputs import read_input
from .emitter import emit
from ..passes.ir import InternalCompilerError, Module, link, verify_generated
from ..passes.ir.bridge import close_in_background, in_background, parse_and_verify
from ..passes.support.diagnostics import CompileError, Diagnostic, DiagnosticSink, NestingTooDeep, SourceLoc
from .data_layout import class_layouts, sizeof
from .parser import parse
from .checker import Checker
from . import workers
from .symbols import Program

__all__ = ["compile_source", "compile_files", "parse", "check", "emit", "check_device_code", "verify",
           "InternalCompilerError",
           "CompileResult", "CompileError", "Diagnostic", "DiagnosticSink", "SourceLoc"]


#: the pipeline that applies the device-code rules to one file's emitted module
DEVICE_CHECKS = "check-device-code"


def check(unit, diags: DiagnosticSink) -> Program:
    """Semantic analysis of one parsed file."""
    return Checker(unit, diags, sizeof=sizeof).run()


def check_device_code(text: str, file: str, diags: DiagnosticSink) -> None:
    """The device-code rules on the emitted IR ``text``: errors raise
    ``CompileError`` (with every diagnostic so far), warnings join ``diags``."""
    PassManager(parse_pipeline(DEVICE_CHECKS)).run(Module.parse(text, file), PassContext(diagnostics=diags))


def verify(module, file: str = "<module>"):
    """Parse the printed module (or its text) with LLVM and run its verifier (in a fresh context,
    so type names never collide between compilations); LLVM rejecting it is
    ``InternalCompilerError``, a bug in the front end."""
    return verify_generated(str(module), file)


@dataclass
class CompileResult:
    module: object          #: LLVM's verified module (llvmlite ``ModuleRef``, from the IR layer)
    warnings: list[Diagnostic]
    sources: dict[str, str]
    timings: dict[str, float] = field(default_factory=dict)
    #: every class's layout (``data_layout.class_layouts``): what a bundle carries for ``prog.sizeof``
    layouts: dict[str, dict] = field(default_factory=dict)

    @property
    def ir(self) -> str:
        return str(self.module)

    def bitcode(self) -> bytes:
        return self.module.as_bitcode()


#: Python frames the checker and emitter may nest: each level of a source's
#: nesting costs a few (up to about seven), so 60,000 nested statements and
#: expressions several times deeper compile (Python 3.11+ keeps Python-to-Python
#: calls off the C stack, so this is safe: 300,000 nested unary operators and
#: parentheses were tried); deeper bodies get a ``too_deep`` error, not a crash.
RECURSION_LIMIT = 1_000_000


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
    timings = {}
    try:
        diags, prog, module = _front(text, filename, timings, workers.defer_bodies(text))
    except workers.Reparse:         # a body the workers could not parse: the serial way says why
        diags, prog, module = _front(text, filename, timings, False)
    t2, c2 = time.perf_counter(), time.thread_time()
    text = str(module)
    timings["emit"] += time.perf_counter() - t2
    timings["cpu_print"] = time.thread_time() - c2
    ref = _rules_beside_verify(text, filename, diags, timings)
    return CompileResult(ref, diags.warnings(), diags.sources, timings, class_layouts(prog.classes))


def _front(text: str, filename: str, timings: dict[str, float], defer: bool):
    """Parse, check and emit: ``(diagnostics, program, ir_writer.Module)``.
    ``timings``: each stage's wall seconds (``parse``, ``check``, ``emit``) and,
    as ``cpu_<stage>``, this thread's CPU seconds in each part of them: what
    the parent does alone whatever the workers, the critical path on free cores."""
    diags = DiagnosticSink({filename: text})
    t0, c0 = time.perf_counter(), time.thread_time()
    unit = parse(text, filename, diags, defer=defer, timings=timings)
    t1 = time.perf_counter()
    timings["parse"] = t1 - t0
    timings["cpu_parse"] = time.thread_time() - c0 - timings["cpu_tokenize"]
    prog = module = None
    if not diags.has_errors or unit.items:
        prog, module = _check(unit, diags, filename, timings)
    t2 = time.perf_counter()
    timings["check"] = t2 - t1
    diags.raise_if_errors()
    if module is None:
        c2 = time.thread_time()
        try:
            module = emit(prog, filename)
        except NestingTooDeep as err:
            diags.error(err.loc, str(err))
            diags.raise_if_errors()
        timings["cpu_emit"] = time.thread_time() - c2
    timings["emit"] = time.perf_counter() - t2
    return diags, prog, module


def _check(unit, diags: DiagnosticSink, filename: str, timings: dict[str, float]):
    """``(program, None)``; or, where the bodies are many and workers may be
    forked (``workers.worker_count``), ``(program, module)``: the bodies parsed
    (where ``parse`` deferred them), checked and emitted by the workers
    (``timings["workers"]``: how many), the module byte for byte the serial one
    (with errors, None).  ``workers.Reparse``: a deferred body needs the serial parse."""
    checker = Checker(unit, diags, sizeof=sizeof)
    try:
        c0 = time.thread_time()
        bodies = checker.declare()
        timings["cpu_declare"] = time.thread_time() - c0
        n = workers.worker_count(len(bodies))
        done = workers.check_and_emit(checker, bodies, diags, filename, n, timings) if n > 1 else None
        if done is not None:
            timings["workers"] = n
            return done
        c1 = time.thread_time()
        workers.resolve(bodies)
        c2 = time.thread_time()
        checker.check_bodies(bodies)
        timings["cpu_parse_bodies"], timings["cpu_check"] = c2 - c1, time.thread_time() - c2
        return checker.finish(), None
    finally:
        checker.release()


def _rules_beside_verify(text: str, filename: str, diags: DiagnosticSink, timings: dict[str, float]):
    """``check_device_code`` on ``text`` while LLVM parses and verifies it on the
    IR layer's verifier thread (``in_background``: llvmlite lets go of the GIL,
    so the two share the wall time on two cores); LLVM's verified module.  The
    outcome is the one of running them in turn: the rules' errors first (LLVM's
    module, if any, is let go of), then LLVM's rejection as
    ``InternalCompilerError``.  ``timings``: ``rules``, and ``verify`` as the
    wait for LLVM after the rules (what of LLVM's time the rules did not hide)."""
    t0, c0 = time.perf_counter(), time.thread_time()
    job = in_background(_timed_parse_and_verify, text, filename)
    try:
        check_device_code(text, filename, diags)
    except BaseException:
        ref, _, _ = job.result()
        if ref is not None:
            close_in_background(ref)
        raise
    t1 = time.perf_counter()
    timings["cpu_rules"] = time.thread_time() - c0
    ref, problem, timings["cpu_llvm"] = job.result()
    timings["rules"], timings["verify"] = t1 - t0, time.perf_counter() - t1
    if problem is not None:
        raise InternalCompilerError(f"{filename}: LLVM rejected the generated IR: {problem}")
    return ref


def _timed_parse_and_verify(text: str, filename: str):
    """``parse_and_verify`` and the CPU seconds of the thread it ran on."""
    c0 = time.thread_time()
    ref, problem = parse_and_verify(text, filename)
    return ref, problem, time.thread_time() - c0


def compile_files(paths: list[str]) -> CompileResult:
    """Compile each file; several files are linked into one module.  Errors of all
    files are reported together."""
    results, errors, sources, error_count = [], [], {}, 0
    for path in paths:
        text = read_input(path, what="source").decode("utf-8", errors="replace")
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
    layouts = {}
    for r in results:
        sources.update(r.sources)
        for name, layout in r.layouts.items():
            layouts.setdefault(name, layout)     # a class defined in several files: one definition rule
    return CompileResult(linked, warnings, sources, layouts=layouts)
