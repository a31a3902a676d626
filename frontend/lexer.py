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


def tokenize(text: str, filename: str, diags: DiagnosticSink) -> list[Token]:
    """All tokens of ``text``; lexical errors go to ``diags`` and are skipped."""
    tokens: list[Token] = []
    append = tokens.append
    type_names: set[str] = set()
    line, line_start = 1, 0
    after_class = False
    keywords, punct = KEYWORDS, PUNCT
    start = 1 if text.startswith("\ufeff") else 0      # a UTF-8 byte-order mark
    for m in _TOKEN_RE.finditer(text, start):
        kind = m.lastindex                  # the commonest groups by number (``_NAME``...), faster than by name
        if kind == _NAME:
            value = m[_NAME]
            kind = keywords.get(value, "NAME")
            if kind == "NAME":
                if after_class or value in type_names:
                    kind = "TYPE_NAME"
                    type_names.add(value)
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
                break
            kind, after_class = "ERROR", False
        else:
            value = m.group(kind)
            after_class = False
            if (kind == "STRING" or kind == "CHAR") and "\\" in value:
                _check_escapes(value, filename, line, m.start(kind) - line_start + 1, diags)
        append((kind, value, line, m.end() - len(value) - line_start + 1))
    return tokens


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
