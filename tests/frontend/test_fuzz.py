"""Any input gives either IR or clean diagnostics: never a traceback.

Hypothesis generates 300 inputs: random token soups from the language's own
vocabulary, and valid programs with one random mutation (a deleted, duplicated
or replaced token).  Every one must compile, or raise ``CompileError`` whose
every line has the ``file:line:col: error:`` form.
"""
import re

from hypothesis import HealthCheck, given, settings, strategies as st

from minisycl.frontend import CompileError, compile_source

VOCAB = ["kernel", "class", "struct", "int", "float", "double", "half", "long", "uint", "void", "bool",
         "id", "<", ">", "1", "2", "(", ")", "{", "}", "[", "]", "[[", "]]", ";", ",", "=", "+", "-",
         "*", "&", "->", ".", "::", "x", "y", "p", "Foo", "new", "return", "if", "else", "for", "while",
         "if_device", "if_host", "otherwise", "device_global", "static", "SYCL_EXTERNAL", "extern",
         "virtual", "override", "print", "\"s\"", "'c'", "1.5f", "0x1F", "sizeof", "this", "host",
         "indirectly_callable", "calls_indirectly", "device_has", "fp64", "break", "continue", "?", ":",
         "atomic_fetch_add", "min", "sqrt", "!", "~", "&&", "||", "<<", "%", "/*", "@", "$"]
SEEDS = [
    "kernel k(float* p, int n) { for (int i = 0; i < n; i++) p[i] = p[i] * 2.0f; }",
    "class A { float v; virtual float f() [[indirectly_callable]] { return v; } };\n"
    "kernel k(A* a, float* o) [[calls_indirectly]] { o[0] = a->f(); }",
    "device_global<int> g; kernel k(id<1> i, int* p) { atomic_fetch_add(&g, p[i]); }",
    "float f(float x) { float r = x; if_device { r = sqrt(x); } otherwise { print(x); } return r; }",
    "struct P { int a; int b; }; int s(P* p) { return p->a + p->b; }",
]
LINE = re.compile(r"^(\S+:\d+:\d+: (error|warning|note): .+|minisycl: error: .+|\d+ errors? generated\.)$")


def check(src):
    try:
        compile_source(src, "fuzz.ksl")
    except CompileError as err:
        assert err.diagnostics, "CompileError without diagnostics"
        for d in err.diagnostics:
            head = d.render().splitlines()[0]
            assert LINE.match(head), head
            assert d.severity != "error" or d.loc is None or d.loc.line >= 1


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=40))
def test_token_soup(tokens):
    check(" ".join(tokens))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(SEEDS), st.integers(0, 10_000), st.sampled_from(["delete", "dup", "replace"]),
       st.sampled_from(VOCAB))
def test_mutated_programs(seed, pos, how, tok):
    words = re.findall(r"\w+|[^\w\s]", seed)
    i = pos % len(words)
    if how == "delete":
        del words[i]
    elif how == "dup":
        words.insert(i, words[i])
    else:
        words[i] = tok
    check(" ".join(words))


def test_binary_garbage():
    check("\x00\xff kernel \x7f")
    check("")
    check("/* unterminated")
