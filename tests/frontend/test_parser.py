"""Our LALR(1) loop over Lark's tables builds the tree Lark's own parser builds.

``parser._run`` replaces Lark's driver for speed, keeping its tree-shaping rules
(dropped ``_X`` tokens, ``?rule`` inlining, ``__`` repetitions spliced, ``None``
for a missing ``[optional]``).  Here both parse the same token streams -- every
golden-test and example source, a generated program, and random mutations of
them -- and must agree on every tree, and on where a syntax error is.
"""
import random
from pathlib import Path

import pytest
from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedToken

from minisycl.frontend import parser as P
from minisycl.passes.support.diagnostics import DiagnosticSink
from minisycl.frontend.lexer import split_top_level, tokenize

from test_descent import mutate     # one token deleted, doubled or replaced

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(ROOT.glob("tests/lit/**/*.ksl")) + sorted(ROOT.glob("examples/*.ksl"))


class _TreeBuilder:
    """Builds the plain tree Lark builds, whatever the rule."""

    def __getattr__(self, name):
        return lambda children: Tree(name, children)


@pytest.fixture(scope="module")
def parsers():
    grammar = (Path(P.__file__).parent / "grammar.lark").read_text()
    lark = Lark(grammar, parser="lalr", lexer=P._TokenList, maybe_placeholders=True)
    return lark, P._Tables(lark, _TreeBuilder())


def canonical(node):
    """Trees and tokens of either parser in one comparable form."""
    if isinstance(node, Tree):
        return (node.data, tuple(canonical(c) for c in node.children))
    if isinstance(node, Token):
        return (node.type, str(node), node.line, node.column)
    if isinstance(node, tuple):             # our token
        return node
    return node                             # None: a missing optional


def both(parsers, chunk):
    lark, tables = parsers
    try:
        theirs = ("tree", canonical(lark.parse([Token(t, v, line=ln, column=c) for t, v, ln, c in chunk])))
    except UnexpectedToken as err:
        theirs = ("error", (err.token.type, str(err.token)), frozenset(err.expected))
    last = chunk[-1]
    try:
        ours = ("tree", canonical(P._run(tables, chunk, ("$END", "", last[2], last[3] + 1))))
    except P._SyntaxError as err:
        ours = ("error", err.token[:2], frozenset(err.expected))
    return theirs, ours


def chunks_of(text):
    return split_top_level(tokenize(text, "t.ksl", DiagnosticSink()))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_same_tree_as_lark(parsers, path):
    for chunk in chunks_of(path.read_text()):
        theirs, ours = both(parsers, chunk)
        assert ours == theirs


def test_same_errors_as_lark_on_mutations(parsers):
    rng = random.Random(7)
    tokens = [t for path in SOURCES for t in tokenize(path.read_text(), "t.ksl", DiagnosticSink())]
    errors = 0
    for _ in range(400):
        chunk = mutate(rng.choice(chunks_of(rng.choice(SOURCES).read_text())), rng, tokens)
        theirs, ours = both(parsers, chunk)
        assert ours == theirs
        errors += theirs[0] == "error"
    assert errors > 100          # the mutations did exercise the error path


@pytest.mark.parametrize("text, props", [
    ("[[a]]", True), ("x [[a]]", True), ("[ [a]]", False), ("[\n[a]]", False), ("[/**/[a]]", False),
    ("a[[b]]", True), ("a[ [b]]", False),
])
def test_props_open_only_at_two_adjacent_brackets(text, props):
    """``[[`` (a property list) is two ``[`` with nothing between them, on one line."""
    kinds = [t[0] for t in tokenize(text, "t.ksl", DiagnosticSink())]
    assert ("_PROPS" in kinds) == props
    assert kinds.count("_LSQB") == (1 if props else 2)


def test_operators_take_the_longest_punctuator():
    """The lexer's hand-grouped operator pattern (``lexer._OP_RE``) takes, at every
    string of up to three punctuation characters, the longest ``PUNCT`` it starts with."""
    import itertools
    import re

    from minisycl.frontend.lexer import PUNCT, _OP_RE
    ops = re.compile(_OP_RE)
    chars = sorted({c for p in PUNCT for c in p if c not in "/."})
    for n in (1, 2, 3):
        for text in map("".join, itertools.product(chars, repeat=n)):
            longest = max((p for p in PUNCT if text.startswith(p) and p[0] not in "/."), key=len, default=None)
            m = ops.match(text)
            assert (m.group() if m else None) == longest, text
