"""The lexical grammar of LLVM's textual IR, and the readers built on it.

Everything in this package that reads a header, an initialiser or a reference
reads it through these tokens, so a name never splits at a ``" = "`` or a
``#`` inside its quotes, and a word inside a string, a label or a quoted name
is never taken for a type or a keyword.

Tokens (LLVM's ``LLLexer``):

* strings ``"..."`` and ``c"..."`` — a quote inside is always ``\\22``, so a
  string ends at the next ``"``;
* identifiers ``@g``, ``%l``, ``$c`` — plain (``[-a-zA-Z$._][-a-zA-Z$._0-9]*``),
  numbered (``@0``) or quoted (``@"a b"``);
* metadata ``!name``, ``!0``, ``!"str"`` and a bare ``!`` (before ``{``);
* attribute-group references ``#0``;
* labels and field names ``name:`` / ``"quoted":``;
* numbers (decimal, ``1.0e+00``, ``0x...`` with LLVM's ``K L M H R`` prefixes);
* keywords and types (``define``, ``i32``, ``double``, ``addrspace``) and
  punctuation.  Comments (``;`` to the end of the line) are skipped.

``tokens`` gives the whole token list of a short text (a header, a global);
the ``*_refs`` scanners read one kind of token from long texts (function
bodies): the same token grammar, skipping strings and comments the same way,
at the speed of one regular-expression scan.
"""
from __future__ import annotations

import functools
import re
import struct

__all__ = ["tokens", "quote_name", "quote_string", "escaped_bytes", "float_hex", "unquote_name", "string_bytes", "global_refs", "attribute_refs",
           "metadata_refs", "type_refs", "type_ref_matches", "has_word", "words", "word_matches", "word_positions", "split_type", "split_operands", "skip_type",
           "skip_constant", "closing", "LexError"]


class LexError(ValueError):
    """Text that is not made of LLVM IR tokens (the callers' input was verified
    by LLVM first, so this means a bug in an edit)."""


_NAME = r'(?:"[^"]*"|[-a-zA-Z$._0-9]+)'
_NUMBER = r'-?0x[0-9A-Za-z]+|[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?'
_TOKEN = re.compile(
    r'(?:\s+|;[^\n]*)*+'                                  # blanks and comments between tokens
    r'(c?"[^"]*"|[@%$]' + _NAME + r'|!(?:"[^"]*"|[-a-zA-Z$._\\0-9]*)|#[0-9]+'
    r'|(?:"[^"]*"|[-a-zA-Z$._][-a-zA-Z$._0-9]*+):'       # labels, DI field names
    r'|' + _NUMBER + r'|[-a-zA-Z$._][-a-zA-Z$._0-9]*+|\.\.\.|\S)?')     # none: trailing blanks


def tokens(text: str) -> list[tuple[str, int, int]]:
    """Every token of ``text`` as ``(token, start, end)``."""
    out = []
    for m in _TOKEN.finditer(text):
        if m.start(1) >= 0:
            out.append((m.group(1), m.start(1), m.end(1)))
    return out


# --- names ------------------------------------------------------------------------

#: the names LLVM's printer leaves bare (``printLLVMNameWithoutPrefix``): ASCII
#: letters, digits, ``-``, ``.`` and ``_``, not starting with a digit.  Its lexer
#: also reads ``$`` bare, but prints such a name quoted, and the passes compare
#: names as LLVM prints them.
_PLAIN = re.compile(r'[-a-zA-Z._][-a-zA-Z._0-9]*\Z')


@functools.lru_cache(maxsize=8192)      # the same file names, module ids and keys recur
def quote_string(text: str) -> str:
    """``"text"`` spelled byte for byte as LLVM prints it (``printEscapedString``,
    for strings, attributes and quoted names alike): printable ASCII as it is,
    ``\\`` as ``\\\\``, ``"`` and every other byte (control, non-ASCII UTF-8) as
    ``\\XX`` in upper-case hex.  ``unquote_name`` reads it back to ``text``."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return '"' + text + '"'
    out = []
    for b in text.encode("utf-8", "surrogateescape"):
        if b == 0x5C:
            out.append("\\\\")
        elif 32 <= b < 127 and b != 0x22:
            out.append(chr(b))
        else:
            out.append(f"\\{b:02X}")
    return '"' + "".join(out) + '"'


def escaped_bytes(data: bytes) -> str:
    """The body of a ``c"..."`` constant or a ``!"..."`` metadata string holding
    ``data``: printable ASCII as it is, ``"``, ``\\`` and every other byte as
    ``\\XX`` in upper-case hex (the one writer of such bodies: the front end's
    strings, the runtime's specialization-constant buffer, post-link's
    metadata)."""
    return "".join(chr(b) if 32 <= b < 127 and b not in (0x22, 0x5C) else f"\\{b:02X}" for b in data)


def float_hex(value: float) -> str:
    """A floating-point constant as LLVM spells it exactly: the bit pattern of the
    double ``value`` in upper-case hex (``0x3FF0000000000000``), whatever the
    constant's type (a ``float`` or ``half`` value is rounded to it first)."""
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]


def quote_name(name: str) -> str:
    """LLVM's spelling of a name without its sigil: ``foo`` or ``"a b"`` (the one
    function that quotes names, for the front end's writer and the passes)."""
    return name if _PLAIN.match(name) else quote_string(name)


_ESCAPE = re.compile(rb'\\([0-9A-Fa-f]{2}|\\)')


def unquote_name(token: str) -> str:
    """The name or string a token without its sigil spells: ``foo`` → ``foo``,
    ``"a\\20b"`` → ``a b``, ``"a\\\\b"`` → ``a\\b`` (both escapes LLVM reads).
    Bytes that are no UTF-8 come back as surrogates (``surrogateescape``), so
    ``quote_string`` spells them as they were: every byte round-trips."""
    if not token.startswith('"'):
        return token
    raw = token[1:-1]
    if "\\" not in raw:
        return raw
    return string_bytes(token).decode("utf-8", "surrogateescape")


def string_bytes(token: str) -> bytes:
    """The bytes a quoted string token spells (a name, or the text of a ``c"..."``
    constant without its ``c``): ``\\XX`` a byte in hexadecimal, ``\\\\`` a backslash."""
    raw = token[1:-1].encode("utf-8", "surrogateescape")
    if b"\\" not in raw:
        return raw
    return _ESCAPE.sub(lambda m: b"\\" if m.group(1) == b"\\" else bytes([int(m.group(1), 16)]), raw)


# --- scanners over long texts -------------------------------------------------------
# Each matches a string or a comment (and so skips it whole) or captures the
# one token kind it reads; findall returns "" for the skipped matches.  Text
# without a quote has no string to skip, and the only comments LLVM prints
# inside an entity ("; preds = %a, %b", "; No predecessors!") hold no "@",
# "#", "!N" or "%" that is not a local's own token: there the plain pattern
# reads the same tokens, faster.

_SKIP = r'"[^"]*"|;[^\n]*'
_GLOBAL_RX = re.compile(r'@(' + _NAME + r')|' + _SKIP)
_ATTR_RX = re.compile(r'#([0-9]+)|' + _SKIP)
_MD_RX = re.compile(r'!([0-9]+)\b|' + _SKIP)
_TYPE_RX = re.compile(r'(%' + _NAME + r')|' + _SKIP)
_PLAIN_GLOBAL_RX = re.compile(r'@([-a-zA-Z$._0-9]+)')
_PLAIN_ATTR_RX = re.compile(r'#([0-9]+)')
_PLAIN_MD_RX = re.compile(r'!([0-9]+)\b')
_WORD_RX = re.compile(r'(?<![-a-zA-Z$._0-9@%$!#\\])([a-zA-Z_][-a-zA-Z$._0-9]*+)(?!:)|' + _SKIP)


def global_refs(text: str) -> list[str]:
    """Names of the globals and functions ``text`` mentions (unquoted, in order,
    repeats kept)."""
    if "@" not in text:
        return []
    if '"' not in text:
        return _PLAIN_GLOBAL_RX.findall(text)
    return [unquote_name(n) if n[0] == '"' else n for n in _GLOBAL_RX.findall(text) if n]


def rename_global_refs(text: str, renames: dict[str, str]) -> str:
    """``text`` with each mention ``@old`` of a key of ``renames`` spelled
    ``@new`` (quoted as LLVM needs; strings and comments left alone)."""
    if "@" not in text:
        return text

    def one(m):
        tok = m.group(1)
        if not tok:
            return m.group(0)
        new = renames.get(unquote_name(tok) if tok[0] == '"' else tok)
        return m.group(0) if new is None else "@" + quote_name(new)
    return _GLOBAL_RX.sub(one, text)


def attribute_refs(text: str) -> list[int]:
    """Attribute-group numbers ``#N`` in ``text`` (never a ``#`` inside quotes)."""
    if "#" not in text:
        return []
    return [int(n) for n in (_outside_strings(text, _PLAIN_ATTR_RX) if '"' in text else
                             _PLAIN_ATTR_RX.findall(text))]


def metadata_refs(text: str) -> list[int]:
    """Metadata node numbers ``!N`` in ``text``."""
    if "!" not in text:
        return []
    return [int(n) for n in (_outside_strings(text, _PLAIN_MD_RX) if '"' in text else
                             _PLAIN_MD_RX.findall(text))]


def _outside_strings(text: str, plain: re.Pattern) -> list[str]:
    """``plain``'s matches outside strings and comments: the non-empty results
    of ``findall`` with ``plain | _SKIP`` (``_ATTR_RX``, ``_MD_RX``: tokens that
    hold no quote), found as that scan finds them (a string runs to the next
    quote, and a quote without one is a character; a comment runs to the end
    of its line), but with the plain pattern between them: a long text (the
    blob of a part being extracted) with one string in it no longer costs an
    alternation tried at every character."""
    out: list[str] = []
    find, n = text.find, len(text)
    pos, quote, semi = 0, find('"'), find(";")
    while True:
        if 0 <= quote < pos:
            quote = find('"', pos)
        if 0 <= semi < pos:
            semi = find(";", pos)
        if quote < 0 and semi < 0:
            out += plain.findall(text, pos)
            return out
        at = quote if semi < 0 or 0 <= quote < semi else semi
        if at > pos:
            out += plain.findall(text, pos, at)
        if at == semi:
            end = find("\n", at)
            pos = n if end < 0 else end
        else:
            close = find('"', at + 1)
            pos = at + 1 if close < 0 else close + 1


def type_refs(text: str) -> list[str]:
    """``%`` tokens (named types and locals) in ``text``, as spelled."""
    if "%" not in text:
        return []
    return [t for t in _TYPE_RX.findall(text) if t]


def words(text: str) -> list[str]:
    """The keyword and type tokens of ``text`` (not labels, names or strings)."""
    return [w for w in _WORD_RX.findall(text) if w]


def word_matches(text: str) -> list[tuple[str, int]]:
    """(keyword or type token, where it starts) for each in ``text``."""
    return [(m.group(1), m.start(1)) for m in _WORD_RX.finditer(text) if m.group(1)]


@functools.lru_cache(maxsize=16)
def _one_word_rx(word: str) -> re.Pattern:
    """``_WORD_RX`` for one word: the same boundaries (a word token is a run of
    word characters not after a name sigil, not a label), strings and comments
    skipped the same way, so its matches are ``word_matches``'s of ``word``.
    Unrolled: a run of characters none of the three can start at is skipped
    in one step (an alternation tried at every character took a third of
    ``propagate-aspects``' look at a body), then the word, a string, a
    comment, or the one character none of them matched at."""
    one = r'(?<![-a-zA-Z$._0-9@%$!#\\])(' + re.escape(word) + r')(?![-a-zA-Z$._0-9:])'
    first = word[:1]
    if not (first.isascii() and (first.isalnum() or first == "_")):
        return re.compile(one + "|" + _SKIP)
    return re.compile(r'[^' + first + r'";]*+(?:' + one + r'|"[^"]*+"|;[^\n]*+|[' + first + r'"])?')


def word_positions(text: str, word: str) -> list[int]:
    """Where keyword or type token ``word`` starts in ``text``: ``word_matches``
    for one word, without building a match for every other word."""
    if word not in text:
        return []
    return [m.start(1) for m in _one_word_rx(word).finditer(text) if m.group(1)]


def type_ref_matches(text: str) -> list[tuple[str, int]]:
    """(``%`` token, where it starts) for each in ``text``."""
    return [(m.group(1), m.start(1)) for m in _TYPE_RX.finditer(text) if m.group(1)]


def has_word(text: str, word: str) -> bool:
    """Whether ``word`` is a keyword or type token of ``text`` (``double`` as a
    type, not inside ``%"double"``, ``double:`` or ``c"double"``)."""
    return word in text and word in words(text)


# --- grammar on token lists ---------------------------------------------------------

_OPEN = {"(": ")", "[": "]", "{": "}", "<": ">"}


def closing(toks, i: int) -> int:
    """Index just past the bracket group opening at ``toks[i]``."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j][0]
        if t in _OPEN:
            depth += 1
        elif t in (")", "]", "}", ">"):
            depth -= 1
            if depth == 0:
                return j + 1
    raise LexError("unbalanced brackets in: " + " ".join(t[0] for t in toks[i:i + 12]))


def skip_type(toks, i: int) -> int:
    """Index just past the type starting at ``toks[i]``: ``i32``, ``ptr addrspace(1)``,
    ``%T``, ``{ ... }``, ``<{ ... }>``, ``[N x T]``, ``<N x T>``, ``target(...)``,
    and typed pointers ``T*``."""
    t = toks[i][0]
    if t in _OPEN:
        j = closing(toks, i)
    elif t == "target" and i + 1 < len(toks) and toks[i + 1][0] == "(":
        j = closing(toks, i + 1)
    else:
        j = i + 1
    n = len(toks)
    while j < n:
        t = toks[j][0]
        if t == "addrspace" and j + 1 < n and toks[j + 1][0] == "(":
            j = closing(toks, j + 1)
        elif t == "*":
            j += 1                              # a typed pointer (older LLVM)
        else:
            break
    return j


_EXPR_WORDS = frozenset(
    "getelementptr bitcast addrspacecast ptrtoint ptrtoaddr inttoptr trunc zext sext fptrunc fpext fptoui fptosi "
    "uitofp sitofp add sub mul shl lshr ashr and or xor icmp fcmp extractelement insertelement shufflevector "
    "select blockaddress dso_local_equivalent no_cfi ptrauth extractvalue insertvalue".split())


def skip_constant(toks, i: int) -> int:
    """Index just past the constant starting at ``toks[i]`` (a literal, a global,
    an aggregate, or a constant expression such as ``getelementptr (...)``,
    ``blockaddress(@f, %bb)``, ``dso_local_equivalent @f``)."""
    t = toks[i][0]
    if t in _OPEN:
        return closing(toks, i)
    if t in _EXPR_WORDS:
        j = i + 1
        n = len(toks)
        while j < n and toks[j][0][:1].isalpha() and toks[j][0] not in _EXPR_WORDS or \
                j < n and toks[j][0] in ("dso_local_equivalent", "no_cfi"):
            j += 1
        if j < n and toks[j][0] == "(":
            return closing(toks, j)
        return skip_constant(toks, j) if j < n else j
    return i + 1


@functools.lru_cache(maxsize=4096)
def split_type(text: str) -> tuple[str, str]:
    """Split one type off the front of ``text``: ``("{ i32, ptr }", " zeroinitializer, align 8")``."""
    toks = tokens(text)
    if not toks:
        raise LexError(f"no type in: {text[:60]}")
    end = toks[skip_type(toks, 0) - 1][2]
    return text[:end], text[end:]


def split_operands(text: str) -> list[str]:
    """Split ``a, {b, c}, d`` at top-level commas (brackets and strings respected)."""
    if '"' not in text and "(" not in text and "{" not in text and "[" not in text and "<" not in text:
        return [p.strip() for p in text.split(",") if p.strip()]      # nothing nested
    out, depth, start = [], 0, 0
    for tok, s, e in tokens(text):
        if tok in _OPEN:
            depth += 1
        elif tok in (")", "]", "}", ">"):
            depth -= 1
        elif tok == "," and depth == 0:
            out.append(text[start:s].strip())
            start = e
    last = text[start:].strip()
    if last:
        out.append(last)
    return out
