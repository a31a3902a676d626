"""Source text → AST, with Lark's LALR(1) parser.

The tokens come from ``lexer.py``; Lark turns the grammar into LALR(1) tables,
and ``_run`` walks them, building AST nodes as it reduces (no intermediate
parse tree).  Most declarations take a faster way first, the recursive descent
of ``descent.py``, which builds the same nodes with the same ``_Builder`` and
leaves every declaration it does not take (and every syntax error) to ``_run``.  Each top-level declaration is parsed on its own, so a syntax
error in one is reported and the next is still parsed: several errors per run.

Lark's internals used here: ``Lark(...).parser.parser.parser.parse_table``
(``states``, ``start_states``, ``end_states``; actions ``Shift``/``Reduce`` with
rules' ``origin``, ``expansion`` and ``options``) and the ``Lexer`` base class.
They are the same in Lark 1.0.0 through 1.3.1; ``pyproject.toml`` pins the range
(``tests/frontend/test_parser.py`` checks our loop against Lark's own driver).
"""
from __future__ import annotations

import functools
import itertools
import operator
import os
import time
from pathlib import Path

from lark import Lark
from lark.lexer import Lexer

from . import ast
from .descent import Descent, Fallback, Reparse
from ..passes.support import knobs
from ..passes.support.diagnostics import DiagnosticSink, SourceLoc
from ..passes.support.numbers import parse_int
from .lexer import (BODY, ESCAPES, LOCAL_WORD, SPELLING, Token, body_tokens, mark_local, scan_bodies,
                    split_top_level, tokenize)


def unescape(body: str) -> str:
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(ESCAPES.get(body[i + 1], body[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


#: ``SourceLoc(...)`` without the named tuple's Python-level ``__new__`` (one per AST node)
_new_loc = tuple.__new__


class _TokenList(Lexer):
    """Lark 'lexer' that hands over the tokens ``lexer.tokenize`` already made."""

    def __init__(self, lexer_conf):  # noqa: D401 - Lark's interface
        pass

    def lex(self, data):
        return iter(data)


class _Builder:
    """One method per grammar rule (or alias): the AST node for the rule's
    children, called as ``_run`` reduces it; ``file`` is set per source file."""

    file = "<input>"

    def _loc(self, tok: Token) -> SourceLoc:
        return _new_loc(SourceLoc, (self.file, tok[2], tok[3], len(tok[1]) or 1))

    # top level
    def start(self, c):
        return [x for x in c if x is not None]

    def empty(self, c):
        return None

    def access_label(self, c):
        return ast.AccessLabel(self._loc(c[0]), c[0][1])

    def specs(self, c):
        return list(c)

    def prim_type(self, c):
        return ast.TypeSpec(self._loc(c[0]), "prim", words=tuple(t[1] for t in c))

    def named_type(self, c):
        return ast.TypeSpec(self._loc(c[0]), "named", name=c[0][1])

    def item_type(self, c):
        return ast.TypeSpec(self._loc(c[0]), "item", name=c[0][1], dims=int_value(c[2][1])[0])

    def dg_type(self, c):
        return ast.TypeSpec(self._loc(c[0]), "dg", inner=c[2], inner_dims=c[3])

    def spec_id_type(self, c):
        return ast.TypeSpec(self._loc(c[0]), "spec_id", inner=c[2], inner_dims=c[3])

    def handler_type(self, c):
        return ast.TypeSpec(self._loc(c[0]), "handler", name="kernel_handler")

    def spec_get(self, c):
        return ast.SpecConstGet(self._loc(c[2]), c[0], c[4][1], self._loc(c[4]))

    def reducer_type(self, c):
        return ast.TypeSpec(self._loc(c[0]), "reducer", name=c[3][1], inner=c[2], name_loc=self._loc(c[3]))

    def type(self, c):
        words = 0
        const = local = False
        while type(c[words]) is tuple:          # CONST and LOCAL tokens before the base type
            const |= c[words][0] == "CONST"
            local |= c[words][0] == "LOCAL"
            words += 1
        spec = c[words]
        spec.const, spec.local = const, local
        spec.ptr = len(c) - words - 1
        return spec

    def class_def(self, c):
        kind, name = c[0], c[1]
        base = c[2] if len(c) > 2 and type(c[2]) is tuple and c[2][0] == "TYPE_NAME" else None
        members = [m for m in c[3 if base else 2:-1] if m is not None]
        return ast.ClassDef(self._loc(name), kind[1], name[1], base, members)

    def base_clause(self, c):
        return c[-1]

    def ctor(self, c):
        specs, name, params = c[0], c[1], c[2]
        props = c[3] if len(c) == 5 else []
        return ast.FuncDef(self._loc(name), specs, None, name[1], params, None, props, c[-1], is_ctor=True)

    def dtor(self, c):
        return ast.Destructor(self._loc(c[1]), c[2][1])

    def function(self, c):
        specs, ret, name, params = c[0], c[1], c[2], c[3]
        override = None
        props = []
        for x in c[4:-1]:
            if type(x) is tuple:
                override = self._loc(x)
            else:
                props = x
        return ast.FuncDef(self._loc(name), specs, ret, name[1], params, override, props, c[-1])

    def kernel(self, c):
        specs, kw, name, params = c[0], c[1], c[2], c[3]
        props = c[4] if len(c) == 6 else []
        fd = ast.FuncDef(self._loc(name), specs + [kw], None, name[1], params, None, props, c[-1], is_kernel=True)
        return fd

    def no_body(self, c):
        return None

    def params(self, c):
        return list(c)

    def param(self, c):
        if len(c) == 3:
            return ast.Param(self._loc(c[1]), c[0], c[1][1], c[2])
        return ast.Param(c[0].loc, c[0], None, c[1])

    def var_decl(self, c):
        return ast.VarDecl(c[1].loc, c[0], c[1], c[2:])

    def local_decl(self, c):
        return ast.VarDecl(c[0].loc, [], c[0], c[1:])

    def declarator(self, c):
        name, dims = c[0], c[1]
        props, init = [], None
        for x in c[2:]:
            if isinstance(x, list):
                props = x
            else:
                init = x
        return ast.Declarator(self._loc(name), name[1], dims, props, init)

    def paren_declarator(self, c):
        name = c[0]
        init = ast.InitList(c[1].loc, list(c[1:]), paren=True)
        return ast.Declarator(self._loc(name), name[1], [], [], init)

    def dims(self, c):
        return list(c)

    def init_list(self, c):
        return ast.InitList(self._loc(c[-1]) if not c[:-1] else c[0].loc, list(c[:-1]))

    def props(self, c):
        return list(c)

    def prop(self, c):
        args = [(t[0], t[1], self._loc(t)) for t in c[1:]]
        return ast.Prop(self._loc(c[0]), c[0][1], args, len(c) > 1)

    def neg_int(self, c):
        return ("INT", "-" + c[1][1], c[0][2], c[0][3])

    # statements
    def block(self, c):
        end = c[-1]
        stmts = c[:-1]
        loc = stmts[0].loc if stmts else self._loc(end)
        return ast.Block(loc, stmts, self._loc(end))

    def expr_stmt(self, c):
        return ast.ExprStmt(c[0].loc, c[0])

    def if_stmt(self, c):
        return ast.If(self._loc(c[0]), c[1], c[2], c[3])

    def while_stmt(self, c):
        return ast.While(self._loc(c[0]), c[1], c[2])

    def do_stmt(self, c):
        return ast.DoWhile(self._loc(c[1]), c[0], c[2])

    def for_stmt(self, c):
        return ast.For(self._loc(c[0]), c[1], c[2], c[3], c[4])

    def for_init(self, c):
        return c[0]

    def opt_expr(self, c):
        return c[0]

    def opt_exprs(self, c):
        return list(c)

    def break_stmt(self, c):
        return ast.Break(self._loc(c[0]))

    def continue_stmt(self, c):
        return ast.Continue(self._loc(c[0]))

    def return_stmt(self, c):
        return ast.Return(self._loc(c[0]), c[1])

    def if_device(self, c):
        return ast.IfDevice(self._loc(c[0]), c[0][0] == "IF_DEVICE", c[1], c[2])

    def empty_stmt(self, c):
        return ast.Empty(None)

    # expressions
    def assign(self, c):
        if len(c) == 2:
            return ast.Assign(c[0].loc, None, c[0], c[1])
        return ast.Assign(self._loc(c[1]), c[1][1][:-1], c[0], c[2])

    def ternary(self, c):
        return ast.Ternary(c[0].loc, c[0], c[1], c[2])

    def logical(self, c):
        return ast.Logical(self._loc(c[1]), c[1][1], c[0], c[2])

    def binop(self, c):
        return ast.Binary(self._loc(c[1]), c[1][1], c[0], c[2])

    def cast(self, c):
        return ast.Cast(c[0].loc, c[0], c[1])

    def unop(self, c):
        return ast.Unary(self._loc(c[0]), c[0][1], c[1])

    def deref(self, c):
        return ast.Deref(self._loc(c[0]), c[1])

    def addrof(self, c):
        return ast.AddrOf(self._loc(c[0]), c[1])

    def preincdec(self, c):
        return ast.IncDec(self._loc(c[0]), c[0][1], c[1], True)

    def postincdec(self, c):
        return ast.IncDec(self._loc(c[1]), c[1][1], c[0], False)

    def sizeof_type(self, c):
        return ast.SizeofType(self._loc(c[0]), c[1], c[2])

    def sizeof_expr(self, c):
        return ast.SizeofExpr(self._loc(c[0]), c[1])

    def new_expr(self, c):
        return ast.New(self._loc(c[0]), c[1], c[2][1], c[3])

    def index(self, c):
        return ast.Index(c[0].loc, c[0], c[1])

    def call(self, c):
        return ast.Call(c[0].loc, c[0], c[1])

    def member(self, c):
        return ast.Member(self._loc(c[2]), c[0], c[2][1], c[1][0] == "ARROW")

    def args(self, c):
        return list(c)

    def int_lit(self, c):
        value, _ = int_value(c[0][1])
        return ast.IntLit(self._loc(c[0]), value, c[0][1])

    def float_lit(self, c):
        text = c[0][1]
        suffix = text[-1].lower() if text[-1] in "fFhH" else ""
        return ast.FloatLit(self._loc(c[0]), float(text.rstrip("fFhH")), suffix, text)

    def char_lit(self, c):
        body = unescape(c[0][1][1:-1])
        return ast.CharLit(self._loc(c[0]), ord(body[0]) if body else 0)

    def str_lit(self, c):
        return ast.StrLit(self._loc(c[0]), "".join(unescape(t[1][1:-1]) for t in c))

    def bool_lit(self, c):
        return ast.BoolLit(self._loc(c[0]), c[0][1] == "true")

    def null_lit(self, c):
        return ast.NullLit(self._loc(c[0]))

    def this_expr(self, c):
        return ast.This(self._loc(c[0]))

    def name(self, c):
        return ast.Name(self._loc(c[0]), c[0][1])

    def scoped(self, c):
        return ast.Scoped(self._loc(c[1]), c[0][1], c[1][1])


#: What ``int_value`` gives a literal of more than 64 bits: the checker's
#: "integer literal is too large" (any value of 2**64 or more).
TOO_LARGE = 2 ** 64


def int_value(text: str) -> tuple[int, str]:
    """Value and (lower-case) suffix of an integer literal; ``TOO_LARGE`` when
    it needs more than 64 bits, at any length (``parse_int``)."""
    body = text.rstrip("uUlL")
    suffix = text[len(body):].lower()
    if body[:2] in ("0x", "0X"):
        value = parse_int(body[2:], 16, 64)
    elif body[:2] in ("0b", "0B"):
        value = parse_int(body[2:], 2, 64)
    elif len(body) > 1 and body[0] == "0":
        value = parse_int(body, 8, 64)
        if value is None and body.isdigit():    # 08 and 09 read as decimal
            value = parse_int(body, 10, 64)
    else:
        value = parse_int(body, 10, 64)
    return (TOO_LARGE if value is None else value), suffix


class _Tables:
    """Lark's LALR(1) tables for ``grammar.lark``, recast for ``_run``.

    ``actions[state][terminal or rule name]`` is an ``int`` (shift or goto to
    that state) or a ``_Reduce``.  Lark builds the automaton; the loop that
    walks it is ours, because Lark's general one (tokens as ``str`` objects,
    a callback wrapper chain per reduction) is most of the front end's time.
    Its tree-building rules are kept exactly: tokens named ``_X`` are dropped,
    ``?rule`` with one child is that child, ``__rule`` (Lark's repetitions) is
    spliced into its parent, and a missing ``[optional]`` is ``None``.
    """

    def __init__(self, lark: Lark, builder: "_Builder"):
        table = lark.parser.parser.parser.parse_table
        self.start = table.start_states["start"]
        #: (state below, top state, terminal) -> top state after the run of
        #: ``?rule: other`` reductions there (``a`` is ``expr``... ``primary``: ten
        #: of them), filled in as met
        self.unit_chains: dict[tuple, int] = {}
        self.end = table.end_states["start"]
        reduces: dict = {}
        self.actions = [None] * (max(table.states) + 1)
        for state, row in table.states.items():
            self.actions[state] = {   # plain str keys: Lark's are str subclasses, slow to compare
                str(name): (arg if action.name == "Shift" else
                       reduces.get(arg) or reduces.setdefault(arg, _Reduce(arg, builder)))
                for name, (action, arg) in row.items()}

    def expected(self, state: int) -> set[str]:
        """The terminals ``state`` has an action for (rule names are lower case)."""
        return {name for name in self.actions[state] if name.isupper()}


class _Reduce:
    """How one grammar rule turns the values it pops into the value it pushes."""

    __slots__ = ("origin", "size", "unit", "plain", "steps", "trailing", "expand1", "build", "fn")

    def __init__(self, rule, builder: "_Builder"):
        self.origin = str(rule.origin.name)
        self.size = len(rule.expansion)
        nones = [0] * (self.size + 1)
        if rule.options.empty_indices:   # placeholders: Lark's encoding, decoded as Lark does
            marks = "".join(str(int(b)) for b in rule.options.empty_indices)
            nones = [len(ones) for ones in marks.split("0")]
        self.steps, pending = [], 0
        for i, sym in enumerate(rule.expansion):
            pending += nones[i]
            if not (sym.is_term and sym.filter_out):
                self.steps.append((i, not sym.is_term and sym.name.startswith("_"), pending))
                pending = 0
        self.trailing = pending + nones[self.size]
        self.expand1 = rule.options.expand1 and not rule.alias
        name = rule.alias or rule.origin.name
        self.build = None if name.startswith("__") else getattr(builder, name, None)
        if self.build is None and not name.startswith("__") and not self.expand1:
            raise AssertionError(f"parser: no AST builder for grammar rule '{name}'")
        simple = not self.trailing and all(not expand and not pending for _, expand, pending in self.steps)
        #: the value passes through unchanged (``?rule: other``): only the state changes
        self.unit = self.expand1 and self.size == 1 and len(self.steps) == 1 and simple
        #: every popped value is a child, in order
        self.plain = simple and len(self.steps) == self.size
        #: popped values -> pushed value (``_reducer``): the builder itself where the values are its children
        self.fn = self.build if self.plain and not self.expand1 and self.build is not None else _reducer(self, name)


def _reducer(red: _Reduce, name: str):
    """A function of the popped values that shapes them as Lark does (``_Tables``)
    and builds the value, written out for the rule: dropped tokens skipped, each
    ``None`` placeholder and each spliced repetition in its place.  Generated (as
    ``collections.namedtuple`` does) because the generic loop over ``steps`` was a
    large share of the parse.  A rule that starts with a repetition grows that
    repetition's own list, so a long one costs linear time, not quadratic."""
    parts, base = [], None
    for i, expand, pending in red.steps:
        parts += ["None"] * pending
        if expand and base is None and not parts:
            base = f"p[{i}]"
        else:
            parts.append(f"*p[{i}]" if expand else f"p[{i}]")
    parts += ["None"] * red.trailing
    if base is None:
        body = [f"c = [{', '.join(parts)}]"]
    else:
        body = [f"c = {base}"] + ([f"c += [{', '.join(parts)}]"] if parts else [])
    if red.expand1:
        body.append("if len(c) == 1: return c[0]")
    body.append("return c" if red.build is None else "return build(c)")
    fname = "reduce_" + "".join(ch if ch.isalnum() else "_" for ch in name)
    source = f"def {fname}(p):\n" + "".join(f"    {line}\n" for line in body)
    namespace = {"build": red.build}
    exec(compile(source, f"<parser rule {name}>", "exec"), namespace)
    return namespace[fname]


class _SyntaxError(Exception):
    def __init__(self, token: Token, expected: set[str]):
        self.token, self.expected = token, expected


def _run(tables: _Tables, tokens: list[Token], end: Token):
    """The value of the ``start`` rule over ``tokens`` then ``end``; raises ``_SyntaxError``.

    The state on top of the stack lives in ``state``; ``states`` holds those
    below it, one per value in ``values``."""
    actions, chains, accept = tables.actions, tables.unit_chains, tables.end
    state = tables.start
    states: list[int] = []
    values: list = []
    push_state, push_value = states.append, values.append
    for tok in itertools.chain(tokens, (end,)):
        kind = tok[0]
        act = actions[state].get(kind)
        while type(act) is not int:                  # reduce until the token shifts
            if act is None:
                raise _SyntaxError(tok, tables.expected(state))
            if act.unit:                             # ?rule: other -- goto only
                below = states[-1]
                key = (below, state, kind)
                top = chains.get(key)
                if top is None:                      # follow the chain once, then remember it
                    top = actions[below][act.origin]
                    nxt = actions[top].get(kind)
                    while type(nxt) is _Reduce and nxt.unit:
                        top = actions[below][nxt.origin]
                        nxt = actions[top].get(kind)
                    chains[key] = top
                state = top
            else:
                n = act.size
                if n:
                    value = act.fn(values[-n:])
                    del values[-n:]
                    below = states[-n]
                    del states[-n:]
                else:
                    value = act.fn([])
                    below = state
                state = actions[below][act.origin]
                if state == accept:                  # `start` reduced before the end: done
                    return value
                push_state(below)
                push_value(value)
            act = actions[state].get(kind)
        push_state(state)                            # shift
        push_value(tok)
        state = act
    raise AssertionError("parser: input ended without reaching the accepting state")


@functools.lru_cache(maxsize=None)
def _tables() -> tuple[_Tables, "_Builder"]:
    builder = _Builder()
    grammar = (Path(__file__).parent / "grammar.lark").read_text()
    # Lark keeps the analysed grammar in our cache folder (keyed by the grammar's
    # hash, checked on load): a short compile is then not mostly table building.
    folder = knobs.cache_dir()
    cache = os.path.join(folder, "grammar.lark-cache") if folder else False
    if cache:
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError:
            cache = False
    lark = Lark(grammar, parser="lalr", lexer=_TokenList, maybe_placeholders=True, cache=cache)
    return _Tables(lark, builder), builder


def _unknown_parameter_type(chunk: list[Token], close: int) -> Token | None:
    """The first parameter of the list closed at ``chunk[close]`` that starts ``foo x``
    or ``foo* x`` with ``foo`` naming no type (a function definition the grammar
    read as a variable with constructor arguments), or None."""
    depth, i = 0, close
    while i >= 0:
        depth += {"_RPAR": 1, "_LPAR": -1}.get(chunk[i][0], 0)
        if depth == 0:
            break
        i -= 1
    start = i
    for j in range(start + 1, close):
        if chunk[j - 1][0] in ("_LPAR", "_COMMA") and chunk[j][0] == "NAME" and j + 2 <= close and \
                (chunk[j + 1][0] == "NAME" or chunk[j + 1][0] == "STAR" and chunk[j + 2][0] == "NAME"):
            return chunk[j]
    return None


def _unknown_type_name(tok: Token, chunk: list[Token], at: int, expected: set) -> Token | None:
    """The name a syntax error at ``chunk[at]`` shows is no type (C's "unknown type
    name": ``foo x``, ``foo* x = ...``, ``int f(foo* p) {``), or None."""
    previous = chunk[at - 1] if at > 0 else None
    before = [t[0] for t in chunk[max(at - 4, 0):at]]
    if tok[0] == "NAME" and previous is not None and previous[0] == "NAME":
        return previous
    if tok[0] == "_EQ" and before[-3:] == ["NAME", "STAR", "NAME"] and \
            (at == 3 or before[0] in ("_SEMI", "_LBRACE", "RBRACE")):   # `foo* x = ...` read as `foo * x`
        return chunk[at - 3]
    if tok[0] == "NAME" and expected & {"PRIM", "TYPE_NAME"} and "NAME" not in expected:
        return tok
    if tok[0] == "_LBRACE" and previous is not None and previous[0] == "_RPAR":
        return _unknown_parameter_type(chunk, at - 1)      # `int f(foo* p) {` read as `int f(foo * p);`
    return None


def _syntax_message(err: _SyntaxError, chunk: list[Token]) -> tuple[Token, str]:
    """Where to point and what to say for a syntax error at ``err.token`` in the
    declaration ``chunk``."""
    expected = {e for e in err.expected if not e.startswith("__")}
    tok = err.token
    at = next((i for i, t in enumerate(chunk) if t is tok), len(chunk))
    unknown = _unknown_type_name(tok, chunk, at, expected)
    if unknown is not None:
        return unknown, f"unknown type name '{unknown[1]}'"
    got = "end of input" if tok[0] == "$END" else f"'{tok[1]}'"
    unclosed = sum({"_LPAR": 1, "_RPAR": -1}.get(t[0], 0) for t in chunk[:at])
    if unclosed > 0 and "_RPAR" in expected:             # `int g( { }`: the parenthesis is what is missing
        return tok, f"expected ')' before {got}"
    for term, text in (("_SEMI", "';'"), ("_RPAR", "')'"), ("_RSQB", "']'"), ("RBRACE", "'}'")):
        if term in expected:
            return tok, f"expected {text} before {got}"
    names = sorted({SPELLING.get(e, e.lower()) for e in expected})
    if 0 < len(names) <= 5:
        return tok, f"unexpected {got}; expected {', '.join(names[:-1]) + ' or ' if len(names) > 1 else ''}{names[-1]}"
    return tok, f"unexpected {got}"


def parse(text: str, filename: str, diags: DiagnosticSink, defer: bool = False,
          timings: dict | None = None) -> ast.Unit:
    """Parse one source file; syntax errors are reported to ``diags``.  With
    ``defer``, top-level function bodies the fast path meets are left as
    ``descent.Deferred`` (``frontend.workers`` parses them, in workers), most
    of them not even tokenized (``lexer.scan_bodies``: a ``BODY`` token stands
    for the inside, ``expand_bodies`` makes its tokens); a lexical diagnostic
    anywhere is then ``Reparse`` (the serial way finds them all, in its order).
    ``timings["cpu_tokenize"]``: this thread's CPU seconds in tokenizing."""
    diags.sources.setdefault(filename, text)
    tables, builder = _tables()
    builder.file = filename
    errors, warnings = diags.error_count, diags.warning_count
    t0 = time.thread_time()
    tokens = tokenize(text, filename, diags, scan_bodies(text) if defer else None)
    if timings is not None:
        timings["cpu_tokenize"] = time.thread_time() - t0
    lexical_errors = diags.error_count > errors     # only then can a chunk hold an ERROR token
    if defer and (lexical_errors or diags.warning_count > warnings):
        raise Reparse
    if LOCAL_WORD in text:
        mark_local(tokens)
    items: list = []
    fast = Descent(builder, defer)
    for chunk in split_top_level(tokens):
        if lexical_errors and any(t[0] == "ERROR" for t in chunk):
            continue                        # the lexer said why; nothing more to say here
        last = chunk[-1]
        end = ("$END", "", last[2], last[3] + len(last[1]))
        if defer:
            held = _bodies_in(chunk)
            if held:
                made = len(fast.deferred)
                try:
                    parsed = fast.parse(chunk, end)
                    if sum(_bodies_in(d.tokens) for d in fast.deferred[made:]) == held:
                        for d in fast.deferred[made:]:
                            if not is_body(d.tokens):       # more than a body's stand-in: made here
                                d.tokens = expand_bodies(d.tokens)
                        items.extend(parsed)
                        continue
                except Fallback:
                    pass
                chunk = expand_bodies(chunk)    # a body left where the fast path defers none: its tokens
        try:
            items.extend(fast.parse(chunk, end))
            continue
        except Fallback:                    # not a form the fast path takes, or wrong: the tables decide
            pass
        try:
            items.extend(_run(tables, chunk, end))
        except _SyntaxError as err:
            tok, message = _syntax_message(err, chunk)
            diags.error(SourceLoc(filename, tok[2], tok[3], len(tok[1]) or 1), message)
    return ast.Unit(filename, items)


def _bodies_in(tokens: list[Token]) -> int:
    """How many ``BODY`` tokens ``tokens`` holds."""
    return list(map(_kind, tokens)).count(BODY)


_kind = operator.itemgetter(0)


def is_body(tokens: list[Token]) -> bool:
    """Whether ``tokens`` is ``{`` ``BODY`` ``}``: one body, for ``expand_bodies``."""
    return len(tokens) == 3 and tokens[1][0] == BODY


def expand_bodies(tokens: list[Token]) -> list[Token]:
    """``tokens`` with each ``{`` ``BODY`` ``}`` replaced by the tokens of the
    body (``lexer.body_tokens``): the tokens ``tokenize`` makes without
    ``bodies``.  ``Reparse`` where a body holds a lexical diagnostic."""
    if not _bodies_in(tokens):
        return tokens
    out: list[Token] = []
    i = 0
    while i < len(tokens):
        if i + 1 < len(tokens) and tokens[i + 1][0] == BODY:
            sink = DiagnosticSink()
            out += body_tokens(tokens[i + 1], sink)
            if sink.error_count or sink.warning_count:
                raise Reparse
            i += 3                          # ``{``, the body, ``}``
        else:
            out.append(tokens[i])
            i += 1
    return out
