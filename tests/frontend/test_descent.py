"""The parser's fast path (``frontend/descent.py``) against the LALR tables.

``parser.parse`` parses each top-level declaration by recursive descent and
hands it to the LALR loop (``parser._run``) only when the fast path falls
back.  That is right only if, on every declaration, the fast path either falls
back or builds exactly the tree the loop builds -- and falls back on every
declaration the loop rejects, so each syntax error is still the tables' to
report.  Checked here on the token streams of every corpus, lit and example
source, on programs derived at random from ``grammar.lark`` itself (every
rule, every alternative), on those with one token deleted, doubled or
replaced, and on the front-end fuzz test's token soups and mutated programs.
"""
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from minisycl.frontend import ast, descent, parser as P
from minisycl.frontend.lexer import split_top_level, tokenize
from minisycl.passes.support import knobs
from minisycl.passes.support.diagnostics import DiagnosticSink

from test_fuzz import SEEDS, VOCAB      # the front end's fuzz vocabulary and seed programs

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(ROOT.glob("tests/**/*.ksl")) + sorted(ROOT.glob("examples/*.ksl"))


def examples(default: int):
    return settings(max_examples=knobs.fuzz_examples(default), deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


def canonical(x):
    """AST nodes, tokens, lists and locations in one comparable form (every slot of a node)."""
    if isinstance(x, ast.Node):
        slots = [s for cls in type(x).__mro__ for s in getattr(cls, "__slots__", ())]
        return (type(x).__name__, tuple((s, canonical(getattr(x, s, None))) for s in slots))
    if isinstance(x, (list, tuple)):
        return tuple(canonical(y) for y in x)
    return x


def both(chunk):
    """(fast path's outcome, the tables' outcome) on one declaration's tokens: a
    canonical tree, or ``"fallback"``/``"error"``."""
    tables, builder = P._tables()
    last = chunk[-1]
    end = ("$END", "", last[2], last[3] + len(last[1]))
    try:
        fast = canonical(descent.Descent(builder).parse(list(chunk), end))
    except descent.Fallback:
        fast = "fallback"
    try:
        ref = canonical(P._run(tables, list(chunk), end))
    except P._SyntaxError:
        ref = "error"
    return fast, ref


def agree(chunk) -> str:
    """Assert the invariant on ``chunk``; which way it went."""
    fast, ref = both(chunk)
    if fast == "fallback":
        return "fallback" if ref != "error" else "error"
    assert ref != "error", f"the fast path accepted what the tables reject: {[t[1] for t in chunk]}"
    assert fast == ref, f"trees differ: {[t[1] for t in chunk]}"
    return "same"


def chunks_of(text: str):
    return split_top_level(tokenize(text, "t.ksl", DiagnosticSink()))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_same_tree_on_sources(path):
    outcomes = [agree(chunk) for chunk in chunks_of(path.read_text(errors="replace"))]
    assert "same" in outcomes or "error" in outcomes or not outcomes, outcomes


@pytest.mark.parametrize("name", ["bench", "builtins"])
def test_fast_path_takes_the_common_declarations(name):
    """Functions, kernels, variables and classes go the fast way (else it would speed nothing up)."""
    src = (ROOT / f"tests/frontend/corpus/{name}.ksl").read_text()
    outcomes = [agree(chunk) for chunk in chunks_of(src)]
    assert outcomes.count("same") == len(outcomes), outcomes


# -- programs derived from the grammar --------------------------------------------------------

#: a spelling of each terminal the derivations use (the builders read INT, FLOAT, CHAR, STRING)
SPELL = {"NAME": "x", "TYPE_NAME": "T", "INT": "1", "FLOAT": "1.5f", "CHAR": "'c'", "STRING": '"s"',
         "BOOL": "true", "NULLPTR": "nullptr", "THIS": "this", "PRIM": "int", "ITEM": "id", "LOCAL": "local",
         "ASSIGN_OP": "+=", "INCDEC": "++", "SHIFTOP": "<<", "RELOP": "<=", "EQOP": "==", "SPEC": "static",
         "ACCESS": "private", "_PROPS": "["}


class Derivations:
    """Random derivations of ``start`` in ``grammar.lark`` (Lark's own rules of it), as token lists."""

    def __init__(self):
        from lark import Lark
        grammar = (Path(P.__file__).parent / "grammar.lark").read_text()
        self.rules: dict = {}
        for rule in Lark(grammar, parser="lalr", lexer=P._TokenList, maybe_placeholders=True).rules:
            self.rules.setdefault(rule.origin.name, []).append([(s.name, s.is_term) for s in rule.expansion])
        from minisycl.frontend.lexer import KEYWORDS, PUNCT
        self.spell = {**{term: word for word, term in KEYWORDS.items()}, **{term: p for p, term in PUNCT.items()},
                      **SPELL}
        #: the rules one step up or down a chain (``?cond: lor | ...`` links cond and lor):
        #: deriving one in place of the other is the near miss precedence mistakes make
        self.neighbours: dict = {name: set() for name in self.rules}
        for name, expansions in self.rules.items():
            for e in expansions:
                if len(e) == 1 and not e[0][1]:
                    self.neighbours[name].add(e[0][0])
                    self.neighbours[e[0][0]].add(name)
        # the fewest derivation steps below each rule, so that a deep derivation can end
        self.height = {name: float("inf") for name in self.rules}
        changed = True
        while changed:
            changed = False
            for name, expansions in self.rules.items():
                h = min(1 + max([self.height[s] for s, term in e if not term] or [0]) for e in expansions)
                if h < self.height[name]:
                    self.height[name], changed = h, True

    def tokens(self, rng: random.Random, depth: int = 9, swap: float = 0.0) -> list:
        """A derivation's tokens; ``swap``: how often a rule is derived in place
        of another one (a near miss of the grammar: ``a ? b : c = d`` is a
        ``?cond`` where an ``assign`` is)."""
        out: list = []
        self.swapped = False
        what = rng.randrange(3)
        if what == 0:
            self._derive("start", rng, depth, out, swap)
        else:                               # statements and expressions, where most of a program is
            out += ["KERNEL", "NAME", "_LPAR", "_RPAR", "_LBRACE"]
            for _ in range(rng.randrange(1, 4)):
                if what == 1:
                    self._derive("stmt", rng, depth, out, swap)
                else:
                    self._derive("expr", rng, depth, out, swap)
                    out.append("_SEMI")
            out.append("RBRACE")
        return [(kind, self.spell.get(kind, kind.lower()), 1, 2 * i + 1) for i, kind in enumerate(out)]

    def _derive(self, name, rng, depth, out, swap):
        if swap and not self.swapped and rng.random() < swap:
            self.swapped = True             # one near miss a program: a second would hide it
            near = sorted(self.neighbours[name])
            name = rng.choice(near if near and rng.random() < 0.8 else sorted(self.rules))
        expansions = self.rules[name]
        if depth <= 0:                      # only the shallowest ways on
            low = min(max([self.height[s] for s, t in e if not t] or [0]) for e in expansions)
            expansions = [e for e in expansions if max([self.height[s] for s, t in e if not t] or [0]) == low]
        expansion = rng.choice(expansions)
        deeper = depth - (len(expansion) > 1)     # a chain (``?expr: assign``...) costs no depth
        for sym, term in expansion:
            if term:
                out.append(sym)
            else:
                self._derive(sym, rng, deeper, out, swap)


@pytest.fixture(scope="module")
def derivations():
    return Derivations()


def mutate(tokens: list, rng: random.Random, vocabulary: list | None = None) -> list:
    """``tokens`` with one deleted, doubled or replaced (by one of ``vocabulary``,
    default ``tokens``): the mutations ``test_parser.py`` and this file make."""
    tokens = list(tokens)
    vocabulary = tokens if vocabulary is None else vocabulary
    i = rng.randrange(len(tokens))
    how = rng.randrange(3)
    if how == 0 and len(tokens) > 1:
        del tokens[i]
    elif how == 1:
        tokens.insert(i, rng.choice(vocabulary))
    else:
        tokens[i] = rng.choice(vocabulary)
    return tokens


def test_derived_programs_take_every_way(derivations):
    """The derivations reach every rule the fast path has, and it agrees on them all."""
    rng = random.Random(11)
    seen = {"same": 0, "fallback": 0, "error": 0}
    for _ in range(150):
        for chunk in split_top_level(derivations.tokens(rng, 6)):
            seen[agree(chunk)] += 1
    assert seen["same"] > 100, seen


def test_near_misses_fall_back(derivations):
    """Derivations with a rule swapped for another: many are no program, and the
    fast path must leave every one of those to the tables."""
    rng = random.Random(5)
    seen = {"same": 0, "fallback": 0, "error": 0}
    for _ in range(400):
        for chunk in split_top_level(derivations.tokens(rng, 5, swap=0.05)):
            seen[agree(chunk)] += 1
    assert seen["error"] > 100 and seen["same"] > 100, seen


@examples(200)
@given(seed=st.integers(0, 2 ** 32 - 1), depth=st.integers(2, 7), mutations=st.integers(0, 2),
       swap=st.sampled_from([0.0, 0.02, 0.1]))
def test_derived_and_mutated_programs(derivations, seed, depth, mutations, swap):
    rng = random.Random(seed)
    tokens = derivations.tokens(rng, depth, swap)
    for _ in range(mutations):
        if tokens:
            tokens = mutate(tokens, rng)
    for chunk in split_top_level(tokens):
        agree(chunk)


@examples(150)
@given(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=40))
def test_token_soups(words):
    for chunk in chunks_of(" ".join(words)):
        agree(chunk)


@examples(150)
@given(st.sampled_from(SEEDS), st.integers(0, 10_000), st.integers(0, 2), st.sampled_from(VOCAB))
def test_mutated_seed_programs(seed, pos, how, word):
    rng = random.Random(pos * 3 + how)
    tokens = tokenize(seed, "t.ksl", DiagnosticSink())
    tokens = mutate(tokens, rng) if how else tokens
    for chunk in split_top_level(tokens):
        agree(chunk)
    for chunk in chunks_of(seed.replace(" ", f" {word} ", 1 + pos % 5)):
        agree(chunk)


@pytest.mark.parametrize("body", [
    "a ? b : c = d;", "x = a ? b : c = d;", "a + b = c;", "(int)x = 1;", "++(int)x;", "a = b, c;",
    "f(a = b, c);", "x = (int);", "sizeof(int) = 1;", "a[1] = b = (c ? d : e) = f;", "x = a < b > c;",
    "x->get_specialization_constant<s>();", "int x = 1, float y;", "for (int i; ; ) ;", "if (x) else y;",
    "return return;", "x = new(1) T(;", "local const int x;", "id<1, 2> i;", "x = y++ ++;",
])
def test_near_misses_in_a_body(body):
    """Hand-picked near misses of the expression and statement rules (precedence,
    what may be assigned to, lists): the fast path and the tables agree."""
    for chunk in chunks_of("kernel k(int* p) { " + body + " }"):
        agree(chunk)


@pytest.mark.parametrize("src", [
    "class A { public int x; };", "class A { public: int x; } int y;", "class A : B { };", "class A : public { };",
    "class A { A(); ~A; };", "class A { ~B() {} };", "class A { int f() override; };", "static class A { };",
    "class A { kernel k() {} };", "class A { A(int x) [[p]] {} };", "int f(int) override {}", "kernel k();;",
    "int x[] = {1, 2,};", "int x = {,};", "int f(int a,) {}", "float g(float x) [[a(1, -2, b)]];",
])
def test_near_misses_of_declarations(src):
    """Hand-picked near misses of the declaration rules: the fast path and the tables agree."""
    for chunk in chunks_of(src):
        agree(chunk)


def test_every_deletion_from_the_corpus():
    """Each token of each corpus declaration deleted in turn: every one agrees."""
    for path in sorted((ROOT / "tests/frontend/corpus").glob("*.ksl")):
        for chunk in chunks_of(path.read_text()):
            for i in range(len(chunk)):
                if len(chunk) > 1:
                    agree(chunk[:i] + chunk[i + 1:])


def test_deep_nesting_falls_back():
    """Deeper than the recursion limit lets the descent go: the loop (no recursion) parses it."""
    src = "kernel k(int* p) { p[0] = " + "(" * 5000 + "1" + ")" * 5000 + "; }"
    chunk = chunks_of(src)[0]
    fast, ref = both(chunk)
    assert fast == "fallback" and ref != "error"
