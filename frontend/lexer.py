"""Tokenizer for ``.ksl`` sources, and the split into top-level declarations.

One compiled regular expression turns the whole file into tokens (much
faster than Lark's own lexer, and it lets us apply C's "typedef-name" rule: an
identifier that names a class seen so far is a ``TYPE_NAME`` token, which is
what makes ``Foo* p;`` a declaration and ``a * b;`` an expression).
The token list is then cut into top-level declarations so that the parser can
report an error in one declaration and go on with the next.
"""
from __future__ import annotations

import re

from ..passes.support.diagnostics import MAX_WARNINGS, DiagnosticSink, SourceLoc

#: Reserved words and the terminal each becomes.  Primitive type words are all ``PRIM``.
KEYWORDS = {
    "class": "CLASS", "struct": "CLASS", "public": "PUBLIC", "private": "ACCESS",
    "protected": "ACCESS", "virtual": "SPEC", "static": "SPEC", "extern": "SPEC",
    "SYCL_EXTERNAL": "SPEC", "host": "SPEC", "inline": "SPEC", "constexpr": "SPEC", "override": "OVERRIDE",
    "kernel": "KERNEL", "const": "CONST", "if": "IF", "else": "_ELSE", "for": "FOR",
    "while": "WHILE", "do": "_DO", "break": "BREAK", "continue": "CONTINUE",
    "return": "RETURN", "if_device": "IF_DEVICE", "if_host": "IF_HOST",
    "otherwise": "_OTHERWISE", "new": "NEW", "sizeof": "SIZEOF", "this": "THIS",
    "true": "BOOL", "false": "BOOL", "nullptr": "NULLPTR", "device_global": "DEVICE_GLOBAL",
    "id": "ITEM", "range": "ITEM", "nd_item": "ITEM", "reducer": "REDUCER",
    "specialization_id": "SPEC_ID", "kernel_handler": "KERNEL_HANDLER",
    "get_specialization_constant": "GET_SPEC_CONST",
}
#: ``local`` is a keyword only right before a type (``local float t[16];``,
#: ``local float* p``), so that ``local`` stays usable as a variable name.
LOCAL_WORD = "local"
_TYPE_START = frozenset(("PRIM", "TYPE_NAME", "CONST", "ITEM", "KERNEL_HANDLER"))
PRIMITIVES = ("void", "bool", "char", "short", "int", "long", "unsigned", "signed", "half",
              "float", "double", "uint", "ulong", "uchar", "ushort", "size_t")
KEYWORDS.update({p: "PRIM" for p in PRIMITIVES})
#: C++ words the kernel language does not have, each with what to write instead.
#: Each is reported here and lexes as an ``ERROR`` token, as every lexical error
#: does: the parser skips a declaration holding one, so the lexer's message is
#: the only one that declaration gets.
UNSUPPORTED = {
    "template": "templates are not supported in the kernel language",
    "typename": "templates are not supported in the kernel language",
    "enum": "enumerations are not supported in the kernel language; use 'const int' constants",
    "switch": "'switch' is not supported in the kernel language; use 'if' / 'else if'",
    "case": "'switch' is not supported in the kernel language; use 'if' / 'else if'",
    "namespace": "namespaces are not supported in the kernel language",
    "using": "namespaces and type aliases are not supported in the kernel language",
    "auto": "'auto' is not supported in the kernel language; write the type",
    "goto": "'goto' is not supported in the kernel language; use loops with 'break' and 'continue'",
    "typedef": "type aliases are not supported in the kernel language",
    "union": "unions are not supported in the kernel language",
    "operator": "operator overloading is not supported in the kernel language",
    "try": "exceptions are not supported in the kernel language",
    "catch": "exceptions are not supported in the kernel language",
    "throw": "exceptions are not supported in the kernel language",
}
KEYWORDS.update({w: "ERROR" for w in UNSUPPORTED})
#: The escapes a character or string literal may hold (C's simple escapes).
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"',
           "a": "\a", "b": "\b", "f": "\f", "v": "\v", "?": "?"}

PUNCT = {
    "<<=": "ASSIGN_OP", ">>=": "ASSIGN_OP", "->": "ARROW", "++": "INCDEC", "--": "INCDEC",
    "<<": "SHIFTOP", ">>": "SHIFTOP", "<=": "RELOP", ">=": "RELOP", "==": "EQOP", "!=": "EQOP",
    "&&": "ANDAND", "||": "OROR", "+=": "ASSIGN_OP", "-=": "ASSIGN_OP", "*=": "ASSIGN_OP",
    "/=": "ASSIGN_OP", "%=": "ASSIGN_OP", "&=": "ASSIGN_OP", "|=": "ASSIGN_OP",
    "^=": "ASSIGN_OP", "::": "_SCOPE", "+": "PLUS", "-": "MINUS", "*": "STAR", "/": "SLASH",
    "%": "PERCENT", "<": "LT", ">": "GT", "=": "_EQ", "!": "BANG", "~": "TILDE", "&": "AMP",
    "|": "PIPE", "^": "CARET", "?": "_QMARK", ":": "_COLON", ";": "_SEMI", ",": "_COMMA",
    ".": "DOT", "(": "_LPAR", ")": "_RPAR", "[": "_LSQB", "]": "_RSQB", "{": "_LBRACE",
    "}": "RBRACE",
}
SPELLING_EXTRA = {"_PROPS": "'[['"}
#: Human spelling of each terminal, for "expected ..." messages.
SPELLING = {
    "NAME": "identifier", "TYPE_NAME": "type name", "INT": "integer literal",
    "FLOAT": "floating literal", "CHAR": "character literal", "STRING": "string literal",
    "PRIM": "type", "ITEM": "'id'", "LOCAL": "'local'", "SPEC": "declaration specifier", "$END": "end of input",
}
for _text, _term in PUNCT.items():
    SPELLING.setdefault(_term, f"'{_text}'")
for _word, _term in KEYWORDS.items():
    SPELLING.setdefault(_term, f"'{_word}'")
SPELLING.update(SPELLING_EXTRA)
SPELLING.update({"ASSIGN_OP": "assignment operator", "INCDEC": "'++'", "RELOP": "comparison",
                 "EQOP": "'=='", "SHIFTOP": "shift operator"})

#: One token: ``(terminal, text, line, column)``; plain tuples, as the parser
#: driver reads thousands of them per millisecond.
Token = tuple

# Each match takes the blanks in front of a token with it, so that the loop
# below runs once per token (and once per line end), not once per gap.
# Every repetition that can run over a whole token is possessive (``*+``) or
# repeats one character class: a backtracking group (``(?:a|b)*``) keeps a
# frame per character, which made a 10 MB comment or string cost gigabytes.
# ``test_lexer_bounds`` checks time and memory on long tokens of each kind.
# The alternatives are tried in order, so the commonest come first: names, then
# the punctuators no comment or number starts with (``OP``: all but ``/`` and
# ``.``, which ``PUNCT`` takes after the comments and numbers had their turn).
_PUNCT_RE = "|".join(re.escape(p) for p in sorted(PUNCT, key=len, reverse=True))     # longest first
#: ``PUNCT`` less ``/`` and ``.``, longest first, by first character (a dozen alternatives
#: where the list of all was forty, tried in turn at every token that is no name);
#: ``test_parser.py`` checks it takes the longest punctuator at every string of them
_OP_RE = r"<<=?|>>=?|<=?|>=?|-[->=]?|\+[+=]?|&[&=]?|\|[|=]?|[=!*%^]=?|::?|[~?;,()\[\]{}]"
_TOKEN_RE = re.compile(r"""
    [ \t\r\f\v]*+
    (?:
      (?P<NAME>[A-Za-z_][A-Za-z_0-9]*)
    | (?P<OP>""" + _OP_RE + r""")
    | (?P<nl>\n)
    | (?P<lcomment>//[^\n]*)
    | (?P<bcomment>/\*(?:[^*]|\*(?!/))*+\*/)
    | (?P<ucomment>/\*)
    | (?P<FLOAT>(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?[fFhH]?|\d+[eE][+-]?\d+[fFhH]?)
    | (?P<INT>(?:0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)(?:[uU][lL]{0,2}|[lL]{1,2}[uU]?)?)
    | (?P<CHAR>'(?:\\.|[^\\'\n])')
    | (?P<STRING>"[^\\"\n]*+(?:\\.[^\\"\n]*+)*+")
    | (?P<ustring>"[^\\"\n]*+(?:\\.[^\\"\n]*+)*+)
    | (?P<uchar>'[^\\'\n]*+(?:\\.[^\\'\n]*+)*+'?)
    | (?P<PUNCT>""" + _PUNCT_RE + r""")
    | (?P<bad>.)
    | (?P<eof>$)
    )
""", re.VERBOSE)

_NAME, _OP, _NL, _PUNCT = (_TOKEN_RE.groupindex[g] for g in ("NAME", "OP", "nl", "PUNCT"))


def tokenize(text: str, filename: str, diags: DiagnosticSink, bodies: list | None = None) -> list[Token]:
    """All tokens of ``text``; lexical errors go to ``diags`` and are skipped.

    With ``bodies`` (``scan_bodies``: the spans of top-level ``{...}``), the
    inside of each span that follows a function's header (``_BEFORE_BODY``) is
    one ``BODY`` token between its ``{`` and ``}`` tokens, which ``body_tokens``
    turns into the tokens this function would have made there (the front end's
    workers each tokenize their own share of the bodies).  The rest of the text is tokenized as without ``bodies``: a span
    holds no ``class`` or ``struct`` word, so the typedef-name state (the only
    state that crosses a token) is the same after it as before it."""
    tokens: list[Token] = []
    state = _Lexed(text, filename)
    pos = 1 if text.startswith("\ufeff") else 0      # a UTF-8 byte-order mark
    line, line_start = 1, 0
    for open_at, close_at in bodies or ():
        line, line_start, stopped = _lex(state, pos, open_at + 1, line, line_start, diags, tokens)
        if stopped:
            return tokens
        pos = open_at + 1
        if len(tokens) < 2 or tokens[-2][0] not in _BEFORE_BODY:
            continue                        # no function's body (a class's, an initializer's): tokenized here
        tokens.append((BODY, "", line, open_at - line_start + 1, state, open_at, close_at, line_start,
                       len(state.names)))
        n = text.count("\n", open_at, close_at)
        if n:
            line += n
            line_start = text.rfind("\n", open_at, close_at) + 1
        pos = close_at
    _lex(state, pos, len(text), line, line_start, diags, tokens)
    return tokens


#: the kind of ``tokenize``'s stand-in for a top-level body's inside
BODY = "$BODY"
#: the tokens a function's body follows (its parameters' ``)``, its properties' ``]]``, ``override``)
_BEFORE_BODY = frozenset(("_RPAR", "_RSQB", "OVERRIDE"))


class _Lexed:
    """What tokenizing one text carries from token to token: the text, and the
    class names seen so far (a ``set`` to look up, and in the order they were met,
    so that ``body_tokens`` knows those a body saw)."""

    __slots__ = ("text", "filename", "type_names", "names", "_at", "_seen")

    def __init__(self, text: str, filename: str):
        self.text, self.filename = text, filename
        self.type_names: set[str] = set()
        self.names: list[str] = []
        self._at, self._seen = 0, set()

    def names_at(self, count: int) -> set[str]:
        """The class names seen before the ``count``-th: grown from the last call's
        (bodies are asked for in source order), so a run of bodies costs the names once."""
        if count < self._at:
            self._at, self._seen = 0, set()
        self._seen.update(self.names[self._at:count])
        self._at = count
        return self._seen


def body_tokens(marker: Token, diags: DiagnosticSink) -> list[Token]:
    """The tokens of the ``{...}`` span a ``BODY`` token (``tokenize``) stands
    for, braces included, with the lines, columns and kinds ``tokenize`` gives
    them without ``bodies``; its lexical diagnostics go to ``diags``."""
    _, _, line, _, state, open_at, close_at, line_start, count = marker
    tokens: list[Token] = []
    body = _Lexed(state.text, state.filename)
    body.type_names = state.names_at(count)         # not added to: a body holds no class word
    _lex(body, open_at, close_at + 1, line, line_start, diags, tokens)
    if state.text.find(LOCAL_WORD, open_at, close_at) != -1:
        mark_local(tokens)
    return tokens


def _lex(state: _Lexed, pos: int, end: int, line: int, line_start: int, diags: DiagnosticSink,
         tokens: list[Token]) -> tuple[int, int, bool]:
    """Tokenize ``state.text[pos:end]`` (starting at ``line``, whose first
    character is at ``line_start``) onto ``tokens``: ``(line, line_start, stopped)``
    after it, ``stopped`` where an unterminated comment ended the text."""
    append = tokens.append
    text, filename = state.text, state.filename
    type_names, names = state.type_names, state.names
    after_class = False
    keywords, punct = KEYWORDS, PUNCT
    for m in _TOKEN_RE.finditer(text, pos, end):
        kind = m.lastindex                  # the commonest groups by number (``_NAME``...), faster than by name
        if kind == _NAME:
            value = m[_NAME]
            kind = keywords.get(value, "NAME")
            if kind == "NAME":
                if value in type_names:
                    kind = "TYPE_NAME"
                    after_class = False
                elif after_class:
                    kind = "TYPE_NAME"
                    type_names.add(value)
                    names.append(value)
                    after_class = False
            elif kind == "CLASS":
                after_class = True
            else:
                after_class = False
                if kind == "ERROR":
                    diags.error(SourceLoc(filename, line, m.start("NAME") - line_start + 1, len(value)),
                                UNSUPPORTED[value])
        elif kind == _OP or kind == _PUNCT:
            value = m[kind]
            kind = punct[value]
            after_class = False
            # `[[` opens a property list (never valid in an expression)
            if kind == "_LSQB" and _bracket_before(tokens, line, m.end() - line_start):
                tokens[-1] = ("_PROPS",) + tokens[-1][1:]
        elif kind == _NL:
            line += 1
            line_start = m.end()
            continue
        elif (kind := m.lastgroup) == "lcomment" or kind == "eof":
            continue
        elif kind == "bcomment":
            value = m.group(kind)
            n = value.count("\n")
            if n:
                line += n
                line_start = m.start(kind) + value.rfind("\n") + 1
            continue
        elif kind in _LEXICAL_ERRORS:
            value = m.group(kind)
            _lexical_error(kind, value, SourceLoc(filename, line, m.start(kind) - line_start + 1), diags)
            if kind == "ucomment":
                return line, line_start, True
            kind, after_class = "ERROR", False
        else:
            value = m.group(kind)
            after_class = False
            if (kind == "STRING" or kind == "CHAR") and "\\" in value:
                _check_escapes(value, filename, line, m.start(kind) - line_start + 1, diags)
        append((kind, value, line, m.end() - len(value) - line_start + 1))
    return line, line_start, False


def mark_local(tokens: list[Token]) -> None:
    """``local`` right before a type is the ``LOCAL`` keyword (in place)."""
    for i in range(len(tokens) - 1):
        tok = tokens[i]
        if tok[1] == LOCAL_WORD and tok[0] == "NAME" and tokens[i + 1][0] in _TYPE_START:
            tokens[i] = ("LOCAL",) + tok[1:]


_LEXICAL_ERRORS = {
    "ucomment": "unterminated /* comment",
    "ustring": "missing terminating '\"' character",
    "uchar": "",
    "bad": "unexpected character {value!r}",
}


def _bracket_before(tokens: list[Token], line: int, col: int) -> bool:
    """Whether the last token is a ``[`` right before column ``col`` of ``line``."""
    return bool(tokens) and tokens[-1][0] == "_LSQB" and tokens[-1][2] == line and tokens[-1][3] == col - 1


def _lexical_error(kind: str, value: str, at: SourceLoc, diags: DiagnosticSink) -> None:
    """Report the lexical error ``kind`` (a key of ``_LEXICAL_ERRORS``) of ``value`` at ``at``."""
    if kind == "uchar":
        diags.error(at._replace(length=len(value)), _char_error(value))
    else:
        diags.error(at, _LEXICAL_ERRORS[kind].format(value=value))


def _char_error(text: str) -> str:
    if len(text) < 2 or not text.endswith("'"):
        return "missing terminating ' character"
    return "empty character constant" if text == "''" else "character constant holds more than one character"


def _check_escapes(literal: str, filename: str, line: int, col: int, diags: DiagnosticSink) -> None:
    """An unknown escape such as ``'\\q'`` is a warning, as in clang: the character stands for itself."""
    i = literal.find("\\")
    while i != -1 and i + 1 < len(literal):
        if literal[i + 1] not in ESCAPES:
            if diags.warning_count > MAX_WARNINGS:
                return          # no more are shown: don't walk the rest
            diags.warning(SourceLoc(filename, line, col + i, 2), f"unknown escape sequence '\\{literal[i + 1]}'")
        i = literal.find("\\", i + 2)


#: ``scan_bodies``'s step: all up to the next brace (or an unterminated comment,
#: or the end), stepping over each of ``_TOKEN_RE``'s tokens that may hold a brace
#: (comments, strings and character literals, terminated or not, each taken as
#: that expression takes it, its alternatives in its order)
_SCAN_RE = re.compile(r"""
    (?: [^{}/"']++
      | //[^\n]*
      | /\*(?:[^*]|\*(?!/))*+\*/
      | "[^\\"\n]*+(?:\\.[^\\"\n]*+)*+"?
      | '(?:\\.|[^\\'\n])'
      | '[^\\'\n]*+(?:\\.[^\\'\n]*+)*+'?
      | /(?!\*)
    )*+
    (?: (\{) | (\}) | (/\*) | \Z )
""", re.VERBOSE)
_OPEN, _CLOSE = 1, 2
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def scan_bodies(text: str) -> list[tuple[int, int]]:
    """The spans ``(i, j)`` of ``text[i:j + 1]``, each a ``{...}`` outside every
    other (the top-level braces: a function's body, a class's, an initializer's)
    holding no ``class`` or ``struct`` word (one would change the tokens after
    it), for ``tokenize(bodies=...)``.  A C-speed scan: a token that may hold a
    brace starts where ``_TOKEN_RE`` starts one (no other token holds a quote,
    a ``/`` or a brace after its first character), so the braces found are the
    brace tokens; the scan stops at an unterminated comment, as tokenizing does."""
    spans: list[tuple[int, int]] = []
    depth = open_at = 0
    for m in _SCAN_RE.finditer(text, 1 if text.startswith("\ufeff") else 0):
        kind = m.lastindex
        if kind == _OPEN:
            if not depth:
                open_at = m.end() - 1
            depth += 1
        elif kind == _CLOSE:
            if depth:
                depth -= 1
                if not depth:
                    spans.append((open_at, m.end() - 1))
        elif kind is not None:              # an unterminated comment ends the tokens
            break
    return _without_class_words(text, spans)


def _without_class_words(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` less those holding ``class`` or ``struct`` as a word (anywhere:
    in a comment too, which only costs that body its deferral)."""
    words = []
    for word in ("class", "struct"):
        at = text.find(word)
        while at != -1:
            end = at + len(word)
            if (at == 0 or text[at - 1] not in _NAME_CHARS) and (end == len(text) or text[end] not in _NAME_CHARS):
                words.append(at)
            at = text.find(word, end)
    if not words:
        return spans
    words.sort()
    kept, w = [], 0
    for span in spans:
        while w < len(words) and words[w] < span[0]:
            w += 1
        if w == len(words) or words[w] > span[1]:
            kept.append(span)
    return kept


#: the tokens ``split_top_level`` looks at
_SPLIT_KINDS = frozenset(("_LBRACE", "RBRACE", "_LPAR", "_RPAR", "_SEMI"))


def split_top_level(tokens: list[Token]) -> list[list[Token]]:
    """Cut the token list into top-level declarations (error-recovery units).

    A declaration ends at a ``;`` outside braces, or at the ``}`` that closes its
    outermost brace (taking a ``;`` that directly follows, as after a class).
    """
    chunks: list[list[Token]] = []
    depth = 0
    parens = 0              # open parentheses outside braces
    in_parens = False       # the outermost brace opened inside parentheses: ``T x(1, {2, 3});``
    start = 0
    n = len(tokens)
    i = 0
    while i < n:
        t = tokens[i][0]
        if t not in _SPLIT_KINDS:           # most tokens: one set lookup
            i += 1
            continue
        if t == "_LBRACE":
            if depth == 0:
                in_parens = parens > 0
            depth += 1
        elif depth == 0 and t == "_LPAR":
            parens += 1
        elif depth == 0 and t == "_RPAR":
            parens = max(parens - 1, 0)
        elif t == "RBRACE":
            depth -= 1
            if depth <= 0 and in_parens and i + 1 < n and tokens[i + 1][0] in ("_COMMA", "_RPAR"):
                depth = 0       # an argument's braces: ``T x(1, {2})`` goes on
            elif depth <= 0:
                parens = 0
                depth = 0
                # `= {...};` initialisers and `class X {...};` keep their semicolon.
                if i + 1 < n and tokens[i + 1][0] == "_SEMI":
                    i += 1
                chunks.append(tokens[start:i + 1])
                start = i + 1
        elif t == "_SEMI" and depth == 0:
            chunks.append(tokens[start:i + 1])
            start = i + 1
            parens = 0
        i += 1
    if start < n:
        chunks.append(tokens[start:])
    return chunks
