"""Source text → AST, with Lark's LALR(1) parser.

The tokens come from ``lexer.py``; the AST is built by an embedded transformer
while Lark reduces (no intermediate parse tree).  Each top-level declaration is
parsed on its own, so a syntax error in one is reported and the next is still
parsed: several errors per run.
"""
from __future__ import annotations

import functools
from pathlib import Path

from lark import Lark, Transformer, Token
from lark.exceptions import UnexpectedInput, UnexpectedToken
from lark.lexer import Lexer

from . import ast as A
from .diagnostics import DiagnosticSink, SourceLoc
from .lexer import SPELLING, split_top_level, tokenize

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"',
            "a": "\a", "b": "\b", "f": "\f", "v": "\v", "?": "?"}


def unescape(body: str) -> str:
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(_ESCAPES.get(body[i + 1], body[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


class _TokenList(Lexer):
    """Lark 'lexer' that hands over the tokens ``lexer.tokenize`` already made."""

    def __init__(self, lexer_conf):  # noqa: D401 - Lark's interface
        pass

    def lex(self, data):
        return iter(data)


class _Builder(Transformer):
    """Builds AST nodes as Lark reduces each rule; ``file`` is set per source file."""

    file = "<input>"

    def _loc(self, tok: Token) -> SourceLoc:
        return SourceLoc(self.file, tok.line, tok.column, len(tok.value) or 1)

    # top level
    def start(self, c):
        return [x for x in c if x is not None]

    def empty(self, c):
        return None

    def access_label(self, c):
        return None

    def specs(self, c):
        return list(c)

    def prim_type(self, c):
        return A.TypeSpec(self._loc(c[0]), "prim", words=tuple(t.value for t in c))

    def named_type(self, c):
        return A.TypeSpec(self._loc(c[0]), "named", name=c[0].value)

    def item_type(self, c):
        return A.TypeSpec(self._loc(c[0]), "item", name=c[0].value, dims=_int_value(c[2].value)[0])

    def dg_type(self, c):
        return A.TypeSpec(self._loc(c[0]), "dg", inner=c[2], inner_dims=c[3])

    def type(self, c):
        const = c[0].type == "CONST" if isinstance(c[0], Token) else False
        spec = c[1] if const else c[0]
        spec.const = const
        spec.ptr = len(c) - (2 if const else 1)
        return spec

    def class_def(self, c):
        kind, name = c[0], c[1]
        base = c[2] if len(c) > 2 and isinstance(c[2], Token) and c[2].type == "TYPE_NAME" else None
        members = [m for m in c[3 if base else 2:-1] if m is not None]
        return A.ClassDef(self._loc(name), kind.value, name.value, base, members)

    def base_clause(self, c):
        return c[-1]

    def ctor(self, c):
        specs, name, params = c[0], c[1], c[2]
        props = c[3] if len(c) == 5 else []
        return A.FuncDef(self._loc(name), specs, None, name.value, params, None, props, c[-1], is_ctor=True)

    def function(self, c):
        specs, ret, name, params = c[0], c[1], c[2], c[3]
        override = None
        props = []
        for x in c[4:-1]:
            if isinstance(x, Token):
                override = self._loc(x)
            else:
                props = x
        return A.FuncDef(self._loc(name), specs, ret, name.value, params, override, props, c[-1])

    def kernel(self, c):
        specs, kw, name, params = c[0], c[1], c[2], c[3]
        props = c[4] if len(c) == 6 else []
        fd = A.FuncDef(self._loc(name), specs + [kw], None, name.value, params, None, props, c[-1], is_kernel=True)
        return fd

    def no_body(self, c):
        return None

    def params(self, c):
        return list(c)

    def param(self, c):
        if len(c) == 3:
            return A.Param(self._loc(c[1]), c[0], c[1].value, c[2])
        return A.Param(c[0].loc, c[0], None, c[1])

    def var_decl(self, c):
        return A.VarDecl(c[1].loc, c[0], c[1], c[2:])

    def local_decl(self, c):
        return A.VarDecl(c[0].loc, [], c[0], c[1:])

    def declarator(self, c):
        name, dims = c[0], c[1]
        props, init = [], None
        for x in c[2:]:
            if isinstance(x, list):
                props = x
            else:
                init = x
        return A.Declarator(self._loc(name), name.value, dims, props, init)

    def dims(self, c):
        return list(c)

    def init_list(self, c):
        return A.InitList(self._loc(c[-1]) if not c[:-1] else c[0].loc, list(c[:-1]))

    def props(self, c):
        return list(c)

    def prop(self, c):
        args = []
        for t in c[1:]:
            if isinstance(t, tuple):
                args.append(t)
            else:
                args.append((t.type, t.value, self._loc(t)))
        return A.Prop(self._loc(c[0]), c[0].value, args, len(c) > 1)

    def neg_int(self, c):
        return ("INT", "-" + c[1].value, self._loc(c[0]))

    # statements
    def block(self, c):
        end = c[-1]
        stmts = c[:-1]
        loc = stmts[0].loc if stmts else self._loc(end)
        return A.Block(loc, stmts, self._loc(end))

    def expr_stmt(self, c):
        return A.ExprStmt(c[0].loc, c[0])

    def if_stmt(self, c):
        return A.If(self._loc(c[0]), c[1], c[2], c[3])

    def while_stmt(self, c):
        return A.While(self._loc(c[0]), c[1], c[2])

    def do_stmt(self, c):
        return A.DoWhile(self._loc(c[1]), c[0], c[2])

    def for_stmt(self, c):
        return A.For(self._loc(c[0]), c[1], c[2], c[3], c[4])

    def for_init(self, c):
        return c[0]

    def opt_expr(self, c):
        return c[0]

    def opt_exprs(self, c):
        return list(c)

    def break_stmt(self, c):
        return A.Break(self._loc(c[0]))

    def continue_stmt(self, c):
        return A.Continue(self._loc(c[0]))

    def return_stmt(self, c):
        return A.Return(self._loc(c[0]), c[1])

    def if_device(self, c):
        return A.IfDevice(self._loc(c[0]), c[0].type == "IF_DEVICE", c[1], c[2])

    def empty_stmt(self, c):
        return A.Empty(None)

    # expressions
    def assign(self, c):
        if len(c) == 2:
            return A.Assign(c[0].loc, None, c[0], c[1])
        return A.Assign(self._loc(c[1]), c[1].value[:-1], c[0], c[2])

    def ternary(self, c):
        return A.Ternary(c[0].loc, c[0], c[1], c[2])

    def logical(self, c):
        return A.Logical(self._loc(c[1]), c[1].value, c[0], c[2])

    def binop(self, c):
        return A.Binary(self._loc(c[1]), c[1].value, c[0], c[2])

    def cast(self, c):
        return A.Cast(c[0].loc, c[0], c[1])

    def unop(self, c):
        return A.Unary(self._loc(c[0]), c[0].value, c[1])

    def deref(self, c):
        return A.Deref(self._loc(c[0]), c[1])

    def addrof(self, c):
        return A.AddrOf(self._loc(c[0]), c[1])

    def preincdec(self, c):
        return A.IncDec(self._loc(c[0]), c[0].value, c[1], True)

    def postincdec(self, c):
        return A.IncDec(self._loc(c[1]), c[1].value, c[0], False)

    def sizeof_type(self, c):
        return A.SizeofType(self._loc(c[0]), c[1], c[2])

    def sizeof_expr(self, c):
        return A.SizeofExpr(self._loc(c[0]), c[1])

    def new_expr(self, c):
        return A.New(self._loc(c[0]), c[1], c[2], c[3])

    def index(self, c):
        return A.Index(c[0].loc, c[0], c[1])

    def call(self, c):
        return A.Call(c[0].loc, c[0], c[1])

    def member(self, c):
        return A.Member(self._loc(c[2]), c[0], c[2].value, c[1].type == "ARROW")

    def args(self, c):
        return list(c)

    def int_lit(self, c):
        value, _ = _int_value(c[0].value)
        return A.IntLit(self._loc(c[0]), value, c[0].value)

    def float_lit(self, c):
        text = c[0].value
        suffix = text[-1].lower() if text[-1] in "fFhH" else ""
        return A.FloatLit(self._loc(c[0]), float(text.rstrip("fFhH")), suffix)

    def char_lit(self, c):
        body = unescape(c[0].value[1:-1])
        return A.CharLit(self._loc(c[0]), ord(body[0]) if body else 0)

    def str_lit(self, c):
        return A.StrLit(self._loc(c[0]), "".join(unescape(t.value[1:-1]) for t in c))

    def bool_lit(self, c):
        return A.BoolLit(self._loc(c[0]), c[0].value == "true")

    def null_lit(self, c):
        return A.NullLit(self._loc(c[0]))

    def this_expr(self, c):
        return A.This(self._loc(c[0]))

    def name(self, c):
        return A.Name(self._loc(c[0]), c[0].value)

    def scoped(self, c):
        return A.Scoped(self._loc(c[1]), c[0].value, c[1].value)


def _int_value(text: str) -> tuple[int, str]:
    """Value and (lower-case) suffix of an integer literal."""
    body = text.rstrip("uUlL")
    suffix = text[len(body):].lower()
    if body[:2] in ("0x", "0X"):
        return int(body, 16), suffix
    if body[:2] in ("0b", "0B"):
        return int(body[2:], 2), suffix
    if len(body) > 1 and body[0] == "0":
        try:
            return int(body, 8), suffix
        except ValueError:
            return int(body, 10), suffix
    return int(body), suffix


@functools.lru_cache(maxsize=None)
def _lark() -> tuple[Lark, _Builder]:
    builder = _Builder()
    grammar = (Path(__file__).parent / "grammar.lark").read_text()
    return Lark(grammar, parser="lalr", lexer=_TokenList, transformer=builder,
                maybe_placeholders=True), builder


def _describe(tok: Token) -> str:
    if tok.type == "$END":
        return "end of input"
    return f"'{tok.value}'"


def _syntax_message(err: UnexpectedToken) -> str:
    expected = {e for e in err.expected if not e.startswith("__")}
    got = _describe(err.token)
    for term, text in (("_SEMI", "';'"), ("_RPAR", "')'"), ("_RSQB", "']'"), ("RBRACE", "'}'")):
        if term in expected:
            return f"expected {text} before {got}"
    names = sorted({SPELLING.get(e, e.lower()) for e in expected})
    if 0 < len(names) <= 5:
        return f"unexpected {got}; expected {', '.join(names[:-1]) + ' or ' if len(names) > 1 else ''}{names[-1]}"
    return f"unexpected {got}"


def parse(text: str, filename: str, diags: DiagnosticSink) -> A.Unit:
    """Parse one source file; syntax errors are reported to ``diags``."""
    diags.sources.setdefault(filename, text)
    parser, builder = _lark()
    builder.file = filename
    tokens = tokenize(text, filename, diags)
    items: list = []
    for chunk in split_top_level(tokens):
        try:
            items.extend(parser.parse(chunk))
        except UnexpectedToken as err:
            tok = err.token
            if tok.type == "$END" or tok.line is None:
                last = chunk[-1]
                loc = SourceLoc(filename, last.line, last.column + len(last.value))
            else:
                loc = SourceLoc(filename, tok.line, tok.column, len(tok.value) or 1)
            diags.error(loc, _syntax_message(err))
        except UnexpectedInput as err:  # pragma: no cover - other Lark errors
            diags.error(SourceLoc(filename, getattr(err, "line", 1) or 1, getattr(err, "column", 1) or 1),
                        "syntax error")
    return A.Unit(filename, items)
