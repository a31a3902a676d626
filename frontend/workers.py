"""Checking and emitting one translation unit's bodies in forked workers.

The serial front end checks every declaration, then every body, then emits
every declaration, then every body (``Checker.declare``/``check_bodies``,
``Emitter.declare``/``define``).  The bodies are where the time goes, and one
body's checking and emission read only the declarations, so here the parent
checks the declarations and forks ``n`` workers (``os.fork``: each inherits the
parsed unit and the symbol tables, nothing is copied over a pipe); worker
``k`` checks the ``k``-th contiguous share of the bodies and, when nothing had
an error, emits the functions of its share.  It sends back:

* its diagnostics, in the order it found them (the parent adds them to its
  sink in share order: the serial order, with the same limits applied);
* the facts body checking leaves on the program (each function's aspect uses,
  ``if_device`` count and work-group memory; whether ``half`` is used), which
  the emitter's declarations read;
* per function, its IR text and, in the order they happened, what its
  emission added to the module: metadata nodes, attribute groups, identified
  types, string constants and other globals (intrinsics, ``if_device``
  helpers, constants, work-group memory).  Module-wide numbers in the text
  (``!N``, ``#N``, ``@.str.N``) are placeholders (``\\x01M7\\x02``: kind, the
  worker's own index), which the parent resolves once it has replayed every
  function's additions in the serial emission order, so the module is
  byte-identical to the serial one (``tests/frontend/test_workers.py``
  compares them on generated programs).

The bodies' tokens are the workers' to make too: with deferral, the parent
finds the top-level ``{...}`` spans with one C-speed scan (``lexer.scan_bodies``:
it steps over comments, strings and character literals as the tokenizer does)
and tokenizes only what is outside those that follow a function's header; a
``BODY`` token stands for each inside, and the worker that parses the body
makes its tokens (``parser.expand_bodies``, ``lexer.body_tokens``: the same
kinds, lines and columns as tokenizing the whole text).  A body holding a
``class`` or ``struct`` word is tokenized by the parent (a class name changes
the tokens after it).  A lexical diagnostic anywhere makes the front end parse
again the serial way (``Reparse``): only it finds them in the order the 50-error
limit is applied in.

A share whose checking changes what the program declares (a local ``constexpr``
object made by a constructor, which ``construct_device_globals`` evaluates after
all bodies) makes the parent go the serial way from where it forked (nothing of
its state changed), as does a defined function whose body is not in the
checker's list.  Workers are reaped whatever happens (``bridge._forked``:
an exception or Ctrl-C in the parent kills and reaps them; a worker ignores
Ctrl-C, its parent acts on it).  Without ``os.fork``, with
``MINISYCL_FRONTEND_WORKERS=1`` (by default: on a machine whose load average
leaves no core free), or for fewer than ``MIN_BODIES`` bodies per worker, the
front end is serial.
"""
from __future__ import annotations

import contextlib
import os
import pickle
import re
import time
import traceback

from ..passes.ir.bridge import _forked, _record, _send, child_setup
from ..passes.ir.lexer import quote_name
from ..passes.support import knobs
from ..passes.ir import InternalCompilerError
from ..passes.support.diagnostics import DiagnosticSink, NestingTooDeep
from . import parser
from .data_layout import DATALAYOUT, TRIPLE
from .descent import Deferred, Descent, Fallback, Reparse
from .emitter import Emitter
from .ir_writer import Function, Module, Rendered, Type, struct_type

__all__ = ["worker_count", "defer_bodies", "resolve", "check_and_emit", "Reparse", "MIN_BODIES"]

#: bodies per worker below which a fork does not pay (a fork and its answer cost
#: a few milliseconds; a body of the bench's kind about 0.2 ms to check and emit)
MIN_BODIES = 100

#: characters of source below which bodies are parsed in the parent (``defer_bodies``):
#: fewer than about ``2 * MIN_BODIES`` bodies of a few hundred characters
MIN_DEFER_CHARS = 2 * MIN_BODIES * 200


def defer_bodies(text: str) -> bool:
    """Whether to leave top-level function bodies to the workers (``parser.parse(defer=True)``)."""
    return len(text) >= MIN_DEFER_CHARS and workers_wanted() > 1


def resolve(bodies: list) -> None:
    """Parse the ``Deferred`` bodies among ``bodies`` (in place); ``Reparse`` where one fails."""
    fast = None
    for node, _ in bodies:
        if type(node.body) is Deferred:
            if fast is None:
                fast = Descent(parser._tables()[1])
            try:
                if parser.is_body(node.body.tokens):        # tokenized here (``lexer.tokenize``'s ``bodies``)
                    node.body.tokens = parser.expand_bodies(node.body.tokens)
                node.body = fast.parse_body(node.body)
            except Fallback:
                raise Reparse from None


_PLACEHOLDER = re.compile("\x01([MGS])([0-9]+)\x02")


#: the most workers the default picks
MAX_WORKERS = 8


def workers_wanted() -> int:
    """``MINISYCL_FRONTEND_WORKERS``, or by default the cores this process may use
    that the load average leaves free (on a busy machine a worker adds its cost
    and runs no sooner), at most ``MAX_WORKERS``; 1 without ``os.fork``."""
    if not hasattr(os, "fork"):
        return 1
    wanted = knobs.frontend_workers()
    if wanted is not None:
        return wanted
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    try:
        free = int(cores - os.getloadavg()[0] + 1)     # this process is one of the load
    except (AttributeError, OSError):
        free = cores
    return max(1, min(cores, free, MAX_WORKERS))


def worker_count(bodies: int) -> int:
    """How many workers check and emit ``bodies`` bodies (1: the serial way)."""
    return max(1, min(workers_wanted(), bodies // MIN_BODIES))


def _shape(prog) -> tuple:
    """What body checking must leave as it is for the parallel way to hold."""
    return (len(prog.classes), len(prog.functions), len(prog.device_globals), len(prog.spec_ids),
            len(prog.constants), sum(1 for g in prog.device_globals + prog.constants if g.construct is not None))


def check_and_emit(checker, bodies: list, diags: DiagnosticSink, filename: str, n: int, timings: dict | None = None):
    """The bodies checked (diagnostics in ``diags``) and the module emitted by
    ``n`` workers: ``(program, ir_writer.Module or None where there were errors)``;
    None where the parallel way does not hold (the caller goes on serially).
    ``timings`` gets the slowest worker's CPU seconds in each stage
    (``worker_parse``, ``worker_check``, ``worker_emit``; the slowest in all:
    ``worker_total``) and this thread's own (``cpu_fork_and_collect``: forking,
    reading the answers, taking in their diagnostics and facts; ``cpu_assemble``)."""
    prog = checker.cx.prog
    mine = {id(sym) for _, sym in bodies}
    if any(id(f) not in mine for f in Emitter.defined_of(prog)) or _shape(prog)[-1]:
        return None
    before = _shape(prog)
    clean = not diags.has_errors
    step = -(-len(bodies) // n)
    shares = [bodies[i:i + step] for i in range(0, len(bodies), step)]
    c0 = time.thread_time()
    with contextlib.ExitStack() as stack:
        runs = [stack.enter_context(_forked(
            lambda out, errors, share=share: _serve(checker, share, filename, before, clean, out, errors)))
            for share in shares]
        results = [_answer(run) for run in runs]
    if timings is not None:
        timings["cpu_fork_and_collect"] = time.thread_time() - c0
    if any(r.get("serial") == "reparse" for r in results):
        raise Reparse
    if any(r.get("serial") for r in results):
        return None
    if timings is not None:
        for i, stage in enumerate(("worker_parse", "worker_check", "worker_emit")):
            timings[stage] = max(r["cpu"][i] for r in results)
        timings["worker_total"] = max(sum(r["cpu"]) for r in results)
    for r in results:
        for severity, loc, message, notes in r["diags"]:
            (diags.error if severity == "error" else diags.warning)(loc, message, notes)
        for i, aspects, if_count, local_decls in r["facts"]:
            f = prog.functions[i]
            f.aspects, f.if_count, f.local_decls = aspects, if_count, local_decls
        prog.uses_half = prog.uses_half or r["uses_half"]
    checker.finish()
    if diags.has_errors:
        return prog, None
    c1 = time.thread_time()
    module = _assemble(prog, filename, results, diags)
    if timings is not None:
        timings["cpu_assemble"] = time.thread_time() - c1
    return prog, module


def _answer(run) -> dict:
    kind, payload = _record(run.pipe)
    status = run.wait()
    if kind == b"R" and os.waitstatus_to_exitcode(status) == 0:
        return pickle.loads(payload)
    said = payload.decode("utf-8", "replace") if kind == b"X" else run.stderr()
    raise InternalCompilerError(f"a front-end worker failed (exit status {os.waitstatus_to_exitcode(status)}): "
                                f"{said.strip()[-2000:]}")


def _assemble(prog, filename: str, results: list, diags: DiagnosticSink) -> Module:
    """The parent's module: its own declarations, then each function the
    workers wrote, its additions replayed in the serial order."""
    emitter = Emitter(prog, filename)
    try:
        emitter.declare()
        module = emitter.cx.module
        index = {id(f): i for i, f in enumerate(prog.functions)}
        written, too_deep = {}, []
        for w, r in enumerate(results):
            for i, events, text in r.get("functions", ()):
                written[i] = (w, events, text)
            if r.get("too_deep"):
                too_deep.append(r["too_deep"])
        first_too_deep = min(too_deep, key=lambda t: t[0]) if too_deep else None
        resolvers = [_Resolver(module, r) for r in results]
        for f in emitter.defined():
            i = index[id(f)]
            if first_too_deep is not None and i == first_too_deep[0]:
                diags.error(first_too_deep[1], first_too_deep[2])
                diags.raise_if_errors()
            w, events, text = written[i]
            resolvers[w].replay(events, emitter)
            emitter.cx.fns[f].rendered = Rendered(f.llname, True, text, resolvers[w].resolve)
        module = emitter.finish()
        for r in resolvers:
            r.settle()
        return module
    finally:
        emitter.release()


class _Resolver:
    """One worker's placeholders and what they stand for in the parent's module."""

    def __init__(self, module: Module, result: dict):
        self.module = module
        self.md, self.groups, self.strings = result["md"], result["groups"], result["strings"]
        self.types, self.globals = result["types"], result["globals"]
        self.string_refs: dict[int, str] = {}

    def replay(self, events, emitter) -> None:
        """A function's additions, in the order its emission made them."""
        module = self.module
        for kind, key in events:
            if kind == "M":
                module.metadata_body(self.md[key])
            elif kind == "G":
                module.attribute_group(self.groups[key])
            elif kind == "S":
                self.string_refs[key] = emitter.cx.globals.cstring(self.strings[key]).ref
            elif kind == "T":
                if key not in module.types:
                    module.types[key] = Type("%" + quote_name(key), "struct")
                    module.type_bodies[key] = self.types[key]
            elif key not in module.globals:             # "N": a global
                is_function, text = self.globals[key]
                module.add(Rendered(key, is_function, text, self.resolve))

    def settle(self) -> None:
        """Every addition replayed: the metadata numbers are final, and the
        module is let go of (it holds this resolver: no reference cycle stays)."""
        self.md_refs = [self.module.find_metadata(body) for body in self.md]
        self.module = None

    def resolve(self, text: str, group) -> str:
        md, groups, strings = self.md_refs, self.groups, self.string_refs

        def one(m):
            kind, key = m.group(1), int(m.group(2))
            if kind == "M":
                return md[key]
            if kind == "G":
                return group(groups[key])
            return strings[key]
        return _PLACEHOLDER.sub(one, text)


# -- the worker's side ----------------------------------------------------------------

class _Recorder(DiagnosticSink):
    """A worker's diagnostics, every one kept in order (the parent applies the limits)."""

    def __init__(self, sources):
        super().__init__(sources)
        self.recorded: list[tuple] = []

    def error(self, loc, message, notes=None) -> None:
        self.error_count += 1
        self.recorded.append(("error", loc, message, notes))

    def warning(self, loc, message, notes=None) -> None:
        self.warning_count += 1
        self.recorded.append(("warning", loc, message, notes))


class _RecordingModule(Module):
    """A worker's module: module-wide numbers are placeholders, and what each
    function's emission adds is logged (``begin``/``end``)."""

    def __init__(self, name: str):
        super().__init__(name, TRIPLE, DATALAYOUT)
        self.md_bodies: list[str] = []
        self._md_index: dict[str, int] = {}
        self.group_lists: list[list[str]] = []
        self._group_index: dict[str, int] = {}
        self.string_gvs: list = []
        self.log: list | None = None
        self._seen: set = set()
        self.new_globals: list[str] = []

    def begin(self) -> None:
        self.log, self._seen = [], set()

    def end(self) -> list:
        log, self.log = self.log, None
        return log

    def _event(self, kind: str, key) -> None:
        if self.log is not None and (kind, key) not in self._seen:
            self._seen.add((kind, key))
            self.log.append((kind, key))

    def metadata_body(self, body: str) -> str:
        i = self._md_index.get(body)
        if i is None:
            i = self._md_index[body] = len(self.md_bodies)
            self.md_bodies.append(body)
        self._event("M", i)
        return f"\x01M{i}\x02"

    def attribute_group(self, attributes: list[str]) -> str:
        body = " ".join(attributes)
        i = self._group_index.get(body)
        if i is None:
            i = self._group_index[body] = len(self.group_lists)
            self.group_lists.append(list(attributes))
        self._event("G", i)
        return f"\x01G{i}\x02"

    def identified_type(self, name: str) -> Type:
        if name not in self.types:
            self._event("T", name)
        return super().identified_type(name)

    def add(self, g):
        super().add(g)
        if self.log is None:                    # a declaration: the parent makes the same
            return g
        if g.name.startswith(".str."):           # ``Globals.cstring``'s (no source name starts with '.')
            self._event("S", len(self.string_gvs))
            g.ref = f"\x01S{len(self.string_gvs)}\x02"
            self.string_gvs.append(g)
        else:
            self._event("N", g.name)
            self.new_globals.append(g.name)
        return g


class _OnDemand(dict):
    """A worker's ``FuncSym -> Function``: a function is declared when first
    asked for (declaring every one was a tenth of a worker's time), unlogged:
    the parent declares them all itself, as the serial way does."""

    declare = module = None

    def __missing__(self, f):
        log, self.module.log = self.module.log, None
        try:
            return self.declare(f)          # ``declare_fn`` enters it here
        finally:
            self.module.log = log


def _serve(checker, share, filename, before, clean, out: int, errors: int) -> None:
    """A worker's life: check and emit ``share``, send the result, end (never returns)."""
    code = 1
    try:
        child_setup(errors)
        result = _share(checker, share, filename, before, clean)
        _send(out, b"R", pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
        code = 0
    except BaseException:           # noqa: BLE001 - reported to the parent, which raises it
        with contextlib.suppress(BaseException):
            _send(out, b"X", traceback.format_exc().encode("utf-8", "replace"))
    finally:
        os._exit(code)


def _share(checker, share, filename, before, clean) -> dict:
    cx = checker.cx
    prog = cx.prog
    sink = cx.diags = _Recorder(cx.diags.sources)
    t0 = time.process_time()
    try:
        resolve(share)
    except Reparse:
        return {"serial": "reparse"}
    t1 = time.process_time()
    checker.check_bodies(share)
    t2 = time.process_time()
    index = {id(f): i for i, f in enumerate(prog.functions)}
    if _shape(prog) != before or any(id(sym) not in index for _, sym in share):
        return {"serial": True}
    result = {"diags": sink.recorded, "uses_half": prog.uses_half, "cpu": (t1 - t0, t2 - t1, 0.0),
              "facts": [(index[id(s)], s.aspects, s.if_count, s.local_decls) for _, s in share]}
    if sink.error_count or not clean:
        return result
    module = _RecordingModule(filename)
    fns = _OnDemand()
    emitter = Emitter(prog, filename, module, fns)
    fns.declare, fns.module = emitter.cx.globals.declare_fn, module
    mine = {id(sym) for _, sym in share}
    functions = []
    try:
        emitter.declare(functions=False)
        for f in emitter.defined():
            if id(f) not in mine:
                continue
            module.begin()
            try:
                emitter.define_one(f)
            except NestingTooDeep as err:
                result["too_deep"] = (index[id(f)], err.loc, str(err))
                break
            functions.append((index[id(f)], module.end(), f))
        group = module.attribute_group
        texts = {id(gv): text for text, gv in emitter.cx.strings.items()}
        result.update(
            functions=[(i, log, emitter.cx.fns[f].text(group)) for i, log, f in functions],
            md=module.md_bodies, groups=module.group_lists,
            strings=[texts[id(gv)] for gv in module.string_gvs],
            types={name: ("opaque" if t.elems is None else struct_type(t.elems).text)
                   for name, t in module.types.items()},
            globals={name: (isinstance(module.globals[name], Function), module.globals[name].text(group))
                     for name in module.new_globals})
    finally:
        emitter.release()
    result["cpu"] = (t1 - t0, t2 - t1, time.process_time() - t2)
    return result
