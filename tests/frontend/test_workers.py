"""The front end's forked workers (``frontend/workers.py``) change nothing but the time:
the module's text byte for byte, LLVM's printing, the warnings and the errors
(text, order, ``file:line:col``) are those of the serial path.

A generator builds programs from pieces that exercise what a worker must hand
back: string constants shared between functions and their own (``@.str.N``),
``if_device`` helpers, intrinsics, virtual functions and their attribute
groups, class types first used in a body, ``half`` (module metadata), fp64 and
atomic64 aspect uses (function metadata the declarations carry), work-group
memory, prototypes whose definitions come later (emission order is not body
order), constructors, warnings and errors, syntax errors in bodies (which
the workers parse: the serial parse then says what is wrong).  Each program is compiled serially and with 2 and 3 workers, the
minimum share lowered so that small programs fork.
"""
from __future__ import annotations

import contextlib
import gc
import os
import signal
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from minisycl import frontend
from minisycl.frontend import CompileError, ast, compile_source, descent, lexer, parser, workers
from minisycl.passes.support import knobs
from minisycl.passes.support.diagnostics import DiagnosticSink

CORPUS = Path(__file__).parent / "corpus"
EXAMPLES = Path(__file__).parents[2] / "examples"

PRELUDE = "device_global<int> counter;\nconst int N = 3;\nstruct P { int a; float b; };\n"

#: name -> (text with ``{i}``, whether it declares a local constexpr object)
PIECES = {
    "loop": "float loop_{i}(float x, int n) {{\n  float acc = 0.0f;\n  for (int j = 0; j < n; j++) {{\n"
            "    acc = acc + x * (float)j;\n    if (acc > 100.0f) {{ acc = acc - 100.0f; }}\n  }}\n  return acc;\n}}\n",
    "kernel": "kernel k_{i}(id<1> i, float* a, int n) {{\n  a[i] = loop_0(a[i], n % N);\n"
              "  atomic_fetch_add(&counter, 1);\n}}\n",
    "print": "host void show_{i}(int a, float f) {{\n  print(\"shared\", a);\n  print(\"only {i}\", f);\n}}\n",
    "if_device": "float dev_{i}(float x) {{\n  float r = x;\n  if_device {{ r = sqrt(x) + exp(x); }} "
                 "otherwise {{ print(\"host {i}\"); print(\"shared\"); }}\n  return r;\n}}\n",
    "virtual": "class S{i} {{\n  float v;\n  virtual float f() [[indirectly_callable]] {{ return v * 2.0f; }}\n}};\n"
               "kernel vk_{i}(S{i}* a, float* o) [[calls_indirectly]] {{ o[0] = a->f(); }}\n",
    "half": "half h_{i}(half a) {{\n  half c = a * a + (half)1.0f;\n  return c;\n}}\n",
    "fp64": "double d_{i}(double x) {{ return x * 2.0 + (double){i}; }}\n",
    "atomic64": "kernel a64_{i}(long* p) {{ atomic_fetch_add(p, 1); }}\n",
    "struct": "kernel st_{i}(P q, float* o) {{\n  P r = q;\n  r.a = r.a + {i};\n  o[0] = r.b + (float)r.a;\n}}\n",
    "class_in_body": "struct B{i} {{ int x; int y; }};\nint cb_{i}(int v) {{ B{i} b; b.x = v; b.y = 2; "
                     "return b.x * b.y; }}\n",
    "local_memory": "kernel wg_{i}(nd_item<1> it, float* p) {{\n  local float t[16];\n"
                    "  t[it.get_local_id(0)] = p[it.get_global_id(0)];\n  group_barrier(it);\n"
                    "  p[it.get_global_id(0)] = t[0];\n}}\n",
    "prototype": "float late_{i}(float x);\nkernel uses_late_{i}(float* p) {{ p[0] = late_{i}(p[1]); }}\n",
    "warning": "float w_{i}() {{ return 1e300f; }}\n",
    "error": "int e_{i}(int v) {{ return v + missing_{i}; }}\n",
    "syntax_error": "int se_{i}(int v) {{ return v +; }}\n",
    "math": "float m_{i}(float x) {{ return sqrt(x) + fabs(x) + min(x, 1.0f); }}\n",
    "constructor": "struct C{i} {{ int a; int b; C{i}(int x, int y) {{ a = x; b = y; }} }};\n"
                   "int ce_{i}() {{ const C{i} c(1, 2); const C{i} d = {{3, 4}}; return c.a + d.b; }}\n",
    # braces, quotes and slashes where no brace token is: the parent's scan for the bodies must skip them
    "literals": "host void lit_{i}(int a) {{\n  print(\"}} {{ \\\" }}\", a);   // a }} in a comment {{\n"
                "  /* {{ over\n     two lines }} */ char c = '{{'; char d = '}}'; char e = '\\'';\n"
                "  print(\"x\", (int)c + (int)d + (int)e / 2);\n}}\n",
    "comment_before_body": "int cm_{i}(int v) /* {{ */ {{ return v; }} // }}\n",
    "class_word_in_body": "int cw_{i}(int v) {{ // a class or struct word: the parent tokenizes this body\n"
                          "  return v; }}\n",
    "initializer": "constexpr int arr_{i}[3] = {{1, 2, {i}}};\nint ua_{i}(int k) {{ return arr_{i}[k % 3]; }}\n",
    "escape_warning": "host void ew_{i}() {{ print(\"\\q{i}\"); }}\n",
    "lexical_error": "int le_{i}(int v) {{ return v @ {i}; }}\n",
    "unsupported_error": "int un_{i}(int v) {{ template x; return v; }}\n",
}


def program(names: list[str]) -> str:
    out, later = [PRELUDE, PIECES["loop"].format(i=0)], []
    for i, name in enumerate(names, start=1):
        out.append(PIECES[name].format(i=i))
        if name == "prototype":
            later.append(f"float late_{i}(float x) {{ return x + {i}.0f; }}\n")
    return "".join(out + later)


def outcome(src: str, name: str = "gen.ksl") -> tuple:
    """Everything a caller sees: our IR text, LLVM's printing and the warnings,
    or the rendered diagnostics; and how many workers ran.  The IR text comes
    the way ``compile_source`` goes (bodies deferred, tokenized by the workers,
    where ``defer_bodies`` says so; the serial parse on ``Reparse``)."""
    timings = {}
    text = None
    try:
        try:
            _, _, module = frontend._front(src, name, timings, workers.defer_bodies(src))
        except workers.Reparse:
            _, _, module = frontend._front(src, name, timings, False)
        text = str(module)
        r = compile_source(src, name)
        return ("ok", text, r.ir, [w.render(r.sources) for w in r.warnings]), timings.get("workers", 1)
    except CompileError as err:
        return ("error", text, str(err),
                [d.render(err.sources) for d in err.diagnostics]), timings.get("workers", 1)


@contextlib.contextmanager
def worker_setting(n: int, min_bodies: int = 1):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MINISYCL_FRONTEND_WORKERS", str(n))
        mp.setattr(workers, "MIN_BODIES", min_bodies)
        mp.setattr(workers, "MIN_DEFER_CHARS", 0)
        yield


def compare(src: str, expect_parallel: bool = True):
    with worker_setting(1):
        serial, used = outcome(src)
        assert used == 1
    for n in (2, 3):
        with worker_setting(n):
            parallel, used = outcome(src)
        assert parallel == serial, f"{n} workers differ from the serial path"
        if expect_parallel:
            assert used > 1, "the workers were not used"
    return serial


@settings(max_examples=knobs.fuzz_examples(25), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(sorted(PIECES)), min_size=2, max_size=14))
def test_workers_match_the_serial_path(names):
    src = program(names)
    serial = compare(src, expect_parallel=not set(names) & REPARSED)
    assert (serial[0] == "error") == bool(set(names) & {"error", "syntax_error", "lexical_error", "unsupported_error"})


#: the pieces that make the front end parse again the serial way (a body the fast
#: path does not parse; a lexical diagnostic anywhere, which a worker's share cannot order)
REPARSED = {"syntax_error", "escape_warning", "lexical_error", "unsupported_error"}


#: what ``test_damage_anywhere_matches_the_serial_path`` puts somewhere in a program
DAMAGE = ["{", "}", "(", ")", ";", "\"", "'", "/*", "*/", "//", "\n", "@", "\\", "class Z ", "struct", "local ",
          "[[", "]]", "template", "'{'", "\"}\"", "int", "kernel", "\ufeff"]


@settings(max_examples=knobs.fuzz_examples(25), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(sorted(PIECES)), min_size=2, max_size=8),
       st.lists(st.tuples(st.floats(0, 1), st.sampled_from(DAMAGE)), min_size=1, max_size=3))
def test_damage_anywhere_matches_the_serial_path(names, damage):
    """A program with a few brace, quote, comment or word fragments put anywhere
    (in a header, a body, a comment, a string, between declarations): whatever it
    becomes, the workers' way -- the bodies found by the parent's scan, each
    tokenized by its worker -- says what the serial way says."""
    src = program(names)
    for where, what in damage:
        at = int(where * len(src))
        src = src[:at] + what + src[at:]
    compare(src, expect_parallel=False)


def test_every_piece_compiles_alone():
    """The generator's pieces are what they say: each (but ``error``) compiles, so
    the comparisons above are between modules, not between two failures."""
    for name in PIECES:
        kind = outcome(program([name]))[0][0]
        assert kind == ("error" if "error" in name else "ok"), name


def test_a_share_that_changes_the_declarations_goes_the_serial_way():
    """Should checking a body ever add to what the program declares (none does
    today), the parent goes on serially from where it forked: same outcome."""
    src = program(["loop", "kernel", "print", "virtual"] * 3)
    with worker_setting(1):
        serial, _ = outcome(src)
    with worker_setting(2), pytest.MonkeyPatch.context() as mp:
        mp.setattr(workers, "_shape", lambda prog: (os.getpid(), 0))   # differs in a worker
        parallel, used = outcome(src)
    assert used == 1 and parallel == serial


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.ksl")) + sorted(EXAMPLES.glob("*.ksl")), ids=lambda p: p.name)
def test_corpus_and_examples_match(path):
    compare(path.read_text(), expect_parallel=False)


def test_errors_keep_source_order_and_limits():
    """Errors and warnings of many bodies in several workers: the serial order and
    the serial limits (50 errors shown, then the count)."""
    src = program(["error", "warning"] * 40)
    serial = compare(src)
    assert "too many errors" in serial[2] or len(serial[3]) > 50


def test_small_sources_and_one_worker_are_serial():
    with worker_setting(4, min_bodies=workers.MIN_BODIES):
        assert workers.worker_count(workers.MIN_BODIES - 1) == 1
        assert workers.worker_count(workers.MIN_BODIES * 2) == 2
        assert workers.worker_count(workers.MIN_BODIES * 100) == 4
    with worker_setting(1):
        assert workers.worker_count(10 ** 6) == 1


def test_the_default_leaves_busy_cores_alone():
    """Unset, the knob gives the cores the load average leaves free (a worker on a
    busy core adds its cost and runs no sooner), at most ``MAX_WORKERS``."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("MINISYCL_FRONTEND_WORKERS", raising=False)
        mp.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
        mp.setattr(os, "getloadavg", lambda: (1.0, 1.0, 1.0))
        assert workers.workers_wanted() == workers.MAX_WORKERS
        mp.setattr(os, "getloadavg", lambda: (12.5, 1.0, 1.0))
        assert workers.workers_wanted() == 4
        mp.setattr(os, "getloadavg", lambda: (40.0, 1.0, 1.0))
        assert workers.workers_wanted() == 1
        mp.setenv("MINISYCL_FRONTEND_WORKERS", "3")
        assert workers.workers_wanted() == 3
        for bad in ("0", "-2", "many", ""):
            mp.setenv("MINISYCL_FRONTEND_WORKERS", bad)
            assert workers.workers_wanted() == 1
        mp.setenv("MINISYCL_FRONTEND_WORKERS", "4")
        mp.delattr(os, "fork")              # no fork (Windows): serial, whatever is asked
        assert workers.workers_wanted() == 1 and not workers.defer_bodies("x" * 10 ** 6)


def test_no_worker_is_left_behind():
    """Every worker is reaped: after compiles (and one interrupted while the workers
    run) this process has no child left, zombie or not."""
    src = program(["loop", "kernel", "print", "if_device"] * 10)
    with worker_setting(2):
        for _ in range(3):
            compile_source(src, "gen.ksl")
        real = workers._share
        with pytest.MonkeyPatch.context() as mp:
            def slow(*args):
                time.sleep(30)
                return real(*args)
            mp.setattr(workers, "_share", slow)
            old = signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
            try:
                signal.setitimer(signal.ITIMER_REAL, 0.5)
                t0 = time.perf_counter()
                with pytest.raises(KeyboardInterrupt):
                    compile_source(src, "gen.ksl")
                assert time.perf_counter() - t0 < 10
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, old)
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_a_failing_worker_is_an_internal_error():
    src = program(["loop", "kernel"] * 5)
    with worker_setting(2), pytest.MonkeyPatch.context() as mp:
        def broken(*args):
            raise RuntimeError("a bug in a worker")
        mp.setattr(workers, "_share", broken)
        with pytest.raises(frontend.InternalCompilerError, match="a bug in a worker"):
            compile_source(src, "gen.ksl")


def test_the_workers_parse_the_top_level_bodies():
    """With deferral, ``parse`` leaves top-level function bodies (never a class's
    methods) to the workers; ``resolve`` makes each the block the serial parse makes."""
    src = program(["loop", "kernel", "virtual", "prototype", "print"])
    diags = DiagnosticSink({"gen.ksl": src})
    unit = frontend.parse(src, "gen.ksl", diags, defer=True)
    deferred = [item for item in unit.items if type(getattr(item, "body", None)) is descent.Deferred]
    assert len(deferred) >= 4
    assert all(parser.is_body(d.body.tokens) for d in deferred)     # not even tokenized: the workers do that
    assert all(type(m.body) is not descent.Deferred for c in unit.items if type(c) is ast.ClassDef for m in c.members
               if type(m) is ast.FuncDef)
    workers.resolve([(item, None) for item in deferred])
    serial = frontend.parse(src, "gen.ksl", DiagnosticSink({"gen.ksl": src}))
    assert [repr_tree(i) for i in unit.items] == [repr_tree(i) for i in serial.items]


def repr_tree(node) -> str:
    """A node and everything under it, as text (slots and lists followed)."""
    if isinstance(node, (list, tuple)):
        return "[" + ", ".join(repr_tree(x) for x in node) + "]"
    slots = [s for cls in type(node).__mro__ for s in getattr(cls, "__slots__", ())]
    if not slots:
        return repr(node)
    return type(node).__name__ + "(" + ", ".join(f"{s}={repr_tree(getattr(node, s, None))}" for s in slots) + ")"


def test_the_parallel_way_leaves_no_cyclic_garbage():
    """As ``test_memory.py`` asks of the serial way (the collector is paused while
    the front end works): the assembled module and its resolvers form no cycle."""
    src = program(["loop", "kernel", "print", "if_device", "fp64", "struct"] * 4)
    with worker_setting(2):
        compile_source(src, "warm.ksl")
        gc.collect()
        was = gc.isenabled()
        gc.disable()
        try:
            result = compile_source(src, "cycles.ksl")
            assert result.timings.get("workers") == 2
            del result
            assert gc.collect() == 0
        finally:
            if was:
                gc.enable()


#: fragments of text for ``test_bodies_tokenize_as_the_whole_text_does``: every
#: construct that may hold a brace, a quote or a slash, terminated or not
FRAGMENTS = ["{", "}", "(", ")", "[", "]", "[[", ";", " ", "\n", "\t", "//", "/*", "*/", "/", "*", "\"", "'", "\\",
             "\\q", "'{'", "'}'", "\"{\"", "\"}\"", "'\\''", "\"\\\"\"", "class", "struct", "Foo", "Foo x;", "int",
             "local", "local int", "f()", "x", "1", "1.5f", "@", "override", "]]", "\ufeff", "template", "myclass",
             "struct_"]


@settings(max_examples=knobs.fuzz_examples(200), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40))
def test_bodies_tokenize_as_the_whole_text_does(fragments):
    """The parent's scan (``lexer.scan_bodies``) and the bodies each tokenized on
    their own (``parser.expand_bodies``) give the tokens, lines, columns and
    diagnostics of tokenizing the whole text, on any text."""
    text = "".join(fragments)
    whole = DiagnosticSink({"f.ksl": text})
    expected = lexer.tokenize(text, "f.ksl", whole)
    lexer.mark_local(expected)
    split = DiagnosticSink({"f.ksl": text})
    tokens = lexer.tokenize(text, "f.ksl", split, lexer.scan_bodies(text))
    lexer.mark_local(tokens)
    got, bodies = [], DiagnosticSink({"f.ksl": text})
    for i, tok in enumerate(tokens):
        if tok[0] == lexer.BODY:
            got[-1:] = lexer.body_tokens(tok, bodies)
        elif i == 0 or tokens[i - 1][0] != lexer.BODY:
            got.append(tok)
    assert got == expected
    rendered = sorted(d.render(whole.sources) for d in split.diagnostics + bodies.diagnostics)
    assert rendered == sorted(d.render(whole.sources) for d in whole.diagnostics)


def test_the_scan_finds_the_top_level_braces():
    text = ("int f() { /* { */ return \"}\"; } class X { int a; };\n"
            "int g() { char c = '{'; { } } int h() { /* class */ }")
    spans = lexer.scan_bodies(text)
    assert [text[i] + text[j] for i, j in spans] == ["{}"] * 3
    assert [text[i:j + 1].count("\n") for i, j in spans] == [0, 0, 0]
    assert text[spans[0][0]:spans[0][1] + 1] == "{ /* { */ return \"}\"; }"
    assert text[spans[2][0]:spans[2][1] + 1] == "{ char c = '{'; { } }"      # h's body holds a class word
