"""The IR toolkit every pass and the post-link step share.

llvmlite.binding parses, verifies, links and prints LLVM IR but cannot rewrite a
function; llvmlite.ir builds IR but has no parser.  This module edits a module at
the level of its top-level entities on LLVM's own canonical printing
(``docs/architecture.md``, "Passes"):

1. ``load`` hands the input (``.ll`` text or ``.bc``) to LLVM, which parses and
   verifies it and prints it canonically; a bad input is an ``IRError``.
2. ``Module.parse`` cuts that text into entities: type definitions, comdats,
   globals, functions, attribute groups, named metadata and metadata nodes.
   Facts about an entity (its references, direct calls, attributes, metadata)
   are computed from its own text the first time they are asked for.
3. Edits replace whole entities (entities are never changed in place, so
   extracted modules can share them).
4. ``Module.verify`` prints the entities and hands them back to LLVM.

``Module.extract`` builds a module from some definitions and the declarations
they need; it reads only those entities and what they reference, so its cost
is proportional to the part, not to the whole module.
"""
from __future__ import annotations

import functools
import re
from typing import Iterable

from .bridge import IRError, close_in_background, in_background, parse_and_verify, verified_bitcode
from .reparse import names_equivalents, parseable_order
from .lexer import (LexError, attribute_refs, closing, global_refs, metadata_refs, quote_name, quote_string,
                    rename_global_refs, skip_constant,
                    skip_type, split_operands, split_type, tokens, type_refs, unquote_name)

__all__ = ["Module", "Function", "Global", "quote_name", "unquote_name", "split_operands",
           "parse_attribute_group", "split_type", "DifferenceView", "USED_LISTS", "DISCARDABLE_LINKAGES", "indirect_calls", "indirect_call_types", "function_type",
           "metadata_attachments",
           "attachment_pairs", "without_attachments"]


# --- lexical helpers ---------------------------------------------------------------

_LINKAGES = frozenset("private internal available_externally linkonce weak common appending extern_weak "
                      "linkonce_odr weak_odr external".split())
DISCARDABLE_LINKAGES = frozenset("private internal available_externally linkonce linkonce_odr".split())
_CALLING_CONVS = frozenset("ccc fastcc coldcc spir_func spir_kernel amdgpu_kernel ptx_kernel ptx_device "
                           "x86_stdcallcc x86_fastcallcc swiftcc tailcc".split())
_KERNEL_CC = frozenset(("spir_kernel", "amdgpu_kernel", "ptx_kernel"))
_VARIABLE_KINDS = frozenset(("global", "constant"))
_SKIP = r'"[^"]*"|;[^\n]*'
_NAME = r'(?:"[^"]*"|[-a-zA-Z$._0-9]+)'
# The entity cutter: each top-level entity starts at the beginning of a line
# with its first token (LLVM prints one entity per line, a function body up to
# a line that is just "}"; nothing in a body starts a line with "}").  Before a
# function's name only strings can hold an "@".
# Both repetitions are possessive (``*+``): giving back a line or a string could
# never make the match succeed, and a backtracking group keeps a frame per
# iteration (a function of a million lines cost 700 MB to cut; now 120 MB).
_HEAD = r'(?:[^\n@"]|"[^"\n]*")*+'
_ENTITY = re.compile(r'^(?:(define ' + _HEAD + r'@(' + _NAME + r')\([^\n]*)\n((?:[^}\n][^\n]*\n|\n)*+\}\n)'
                     r'|(declare ' + _HEAD + r'@(' + _NAME + r')\([^\n]*)\n|([^\s;\n][^\n]*)\n)', re.M)
_LINE_NAME = re.compile(r'[@%$!](?:"[^"]*"|[-a-zA-Z$._0-9\\]+) = ')
_CALL_RX = re.compile(r'@(' + _NAME + r')\(|' + _SKIP)
_PLAIN_CALL_RX = re.compile(r'@([-a-zA-Z$._0-9]+)\(')
_MD_ATTACH = re.compile(r'!([-a-zA-Z$._][-a-zA-Z$._0-9\\]*) !([0-9]+)|' + _SKIP)


def _line_key(line: str) -> str:
    """The name token a top-level ``NAME = ...`` line starts with (``@"a = b"``, ``!0``)."""
    m = _LINE_NAME.match(line)
    if m is None:
        raise IRError(f"cannot read the name of: {line[:80]}")
    return m.group(0)[:-3]


def _after_key(line: str) -> str:
    """What follows ``NAME = `` on a top-level line."""
    return line[len(_line_key(line)) + 3:]


def attachment_pairs(text: str) -> list[tuple[str, str]]:
    """Metadata attachments ``!kind !N`` in a header or line, in order: (kind, ``!N``)."""
    if "!" not in text:
        return []
    return [(k, "!" + n) for k, n in _MD_ATTACH.findall(text) if k]


def metadata_attachments(text: str) -> dict[str, str]:
    """Metadata attachments ``!kind !N`` in a header or global line: kind → ``!N``."""
    if "!" not in text:
        return {}
    return {k: "!" + n for k, n in _MD_ATTACH.findall(text) if k}


@functools.lru_cache(maxsize=4096)
def _parse_group(text: str) -> tuple:
    return tuple(parse_attribute_group(text).items())


def parse_attribute_group(text: str) -> dict[str, str | None]:
    """``noinline "k"="v" "flag"`` → ``{"noinline": None, "k": "v", "flag": ""}``.

    Enum attributes map to ``None`` (with their arguments: ``uwtable(sync)``,
    ``alignstack=16``); string attributes to their (unescaped) value.
    """
    out: dict[str, str | None] = {}
    toks = tokens(text)
    i, n = 0, len(toks)
    while i < n:
        tok, start, _ = toks[i]
        if tok[0] == '"':
            if i + 2 < n and toks[i + 1][0] == "=" and toks[i + 2][0][0] == '"':
                out[unquote_name(tok)] = unquote_name(toks[i + 2][0])
                i += 3
            else:
                out[unquote_name(tok)] = ""
                i += 1
            continue
        j = i + 1
        if j < n and toks[j][0] == "(":
            j = closing(toks, j)
        elif j + 1 < n and toks[j][0] == "=":
            j += 2
        out[text[start:toks[j - 1][2]]] = None
        i = j
    return out


def _render_attributes(attrs: dict[str, str | None]) -> str:
    """LLVM's printing of an attribute group: enum attributes first (in the order
    given, which is LLVM's own when they came from its printing), then string
    attributes sorted by key, as ``AttributeSet`` orders them."""
    parts = []
    ordered = [k for k, v in attrs.items() if v is None] + sorted(k for k, v in attrs.items() if v is not None)
    for key in ordered:
        value = attrs[key]
        if value is None:
            parts.append(key)
        else:
            parts.append(quote_string(key) if value == "" else f"{quote_string(key)}={quote_string(value)}")
    return " ".join(parts)


def _type_end(toks, kind_at: int) -> int:
    """Index just past a global's value type (which follows its kind token), or
    ``len(toks)`` when the tokens end inside it."""
    try:
        return skip_type(toks, kind_at + 1)
    except (LexError, IndexError):
        return len(toks)


def _type_start(toks, end: int) -> int:
    """Index of the first token of the type whose last token is ``toks[end]``."""
    t = toks[end][0]
    if t == "*":
        return _type_start(toks, end - 1)
    if t in (")", "}", "]", ">"):
        depth, k = 0, end
        while k >= 0:
            c = toks[k][0]
            if c in (")", "}", "]", ">"):
                depth += 1
            elif c in ("(", "{", "[", "<"):
                depth -= 1
                if depth == 0:
                    break
            k -= 1
        if t == ")" and k > 0:
            word = toks[k - 1][0]
            if word == "addrspace":
                return _type_start(toks, k - 2)
            if word == "target":
                return k - 1
        return k
    return end


# --- entities --------------------------------------------------------------------


_FIRST_GLOBAL = re.compile(r'@' + _NAME + r'|' + _SKIP)
_PARENS = re.compile(r'[()]|' + _SKIP)
_COMDAT_RX = re.compile(r'(?<![-a-zA-Z$._0-9@%!#])comdat(?![-a-zA-Z$._0-9])(?:\((\$' + _NAME + r')\))?|' + _SKIP)


def _closing_paren(text: str, open_at: int) -> int:
    """Index just past the parenthesis that closes the one at ``open_at``
    (strings skipped whole)."""
    close = text.find(")", open_at)
    if close > 0 and text.find("(", open_at + 1, close) < 0 and text.find('"', open_at, close) < 0:
        return close + 1                    # the common case: nothing nested, nothing quoted
    depth = 0
    for m in _PARENS.finditer(text, open_at):
        c = m.group(0)
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return m.end()
    raise IRError(f"unbalanced parentheses in: {text[:80]}")


class _Header:
    """Where a function header's parts are (see ``Function``): the name token,
    the end of the parameter list, and the tokens before the name."""

    __slots__ = ("name_start", "name_end", "params_end", "_header", "_prefix", "_ret_start")

    def __init__(self, header: str):
        at = header.find("@")
        if header.find('"', 0, at) < 0 and header.find(";", 0, at) < 0:
            end = header.find("(", at)      # a plain name ends at its parameter list
            if header[at + 1] == '"':
                end = header.index('"', at + 2) + 1
            self.name_start, self.name_end = at, end
        else:
            m = next(m for m in _FIRST_GLOBAL.finditer(header) if m.group(0)[0] == "@")
            self.name_start, self.name_end = m.start(), m.end()
        self.params_end = _closing_paren(header, self.name_end)
        self._header, self._prefix, self._ret_start = header, None, 0

    @property
    def prefix(self) -> list:
        """The tokens before the name."""
        if self._prefix is None:
            self._prefix = tokens(self._header[:self.name_start])
            self._ret_start = _type_start(self._prefix, len(self._prefix) - 1)
        return self._prefix

    @property
    def ret_start(self) -> int:
        """Index in ``prefix`` of the return type's first token."""
        self.prefix
        return self._ret_start


class Function:
    """One function definition or declaration, as LLVM printed it.

    ``header`` is the ``define ...{`` / ``declare ...`` line; ``body`` the rest
    of a definition (up to and including the closing ``}``), ``None`` for a
    declaration.  Everything else is derived from these two strings on demand,
    through the tokens of ``lexer``.
    """

    __slots__ = ("name", "header", "body", "_info", "_groups", "_md", "_refs", "_calls", "_icall_attrs", "_comdat",
                 "_kernel", "_linkage", "_baddr", "_decl")
    kind = "function"

    def __init__(self, name: str, header: str, body: str | None):
        self.name, self.header, self.body = name, header, body
        self._info = self._groups = self._md = self._refs = self._calls = self._icall_attrs = None
        self._comdat = False
        self._kernel = self._linkage = self._baddr = self._decl = None

    @property
    def is_declaration(self) -> bool:
        return self.body is None

    def text(self) -> str:
        return self.header + "\n" + (self.body or "")

    def _parsed(self) -> _Header:
        if self._info is None:
            self._info = _Header(self.header)
        return self._info

    @property
    def prefix_words(self) -> list[str]:
        """Tokens before the return type: ``define``/``declare``, linkage, calling
        convention, return attributes (and a declaration's metadata)."""
        h = self._parsed()
        return [t[0] for t in h.prefix[:h.ret_start]]

    @property
    def params(self) -> str:
        """The parameter list with its parentheses, as printed."""
        h = self._parsed()
        return self.header[h.name_end:h.params_end]

    @property
    def tail(self) -> str:
        """What follows the parameter list: attributes, comdat, metadata, ``{``."""
        return self.header[self._parsed().params_end:]

    @property
    def attribute_groups(self) -> list[int]:
        if self._groups is None:
            self._groups = attribute_refs(self.header)     # in a header, "#N" is only a group
        return self._groups

    @property
    def metadata(self) -> dict[str, str]:
        """Function metadata attachments: kind → ``!N``."""
        if self._md is None:
            self._md = metadata_attachments(self.header)
        return self._md

    @property
    def linkage(self) -> str:
        if self._linkage is None:
            h = self.header
            start = h.index(" ") + 1                   # the word after define/declare
            second = h[start:h.find(" ", start)]
            self._linkage = second if second in _LINKAGES else "external"
        return self._linkage

    @property
    def calling_conv(self) -> str:
        words = self.prefix_words
        for i, w in enumerate(words):
            if w in _CALLING_CONVS:
                return w
            if w == "cc" and i + 1 < len(words):
                return f"cc {words[i + 1]}"
        return "ccc"

    @property
    def is_kernel(self) -> bool:
        if self._kernel is None:
            self._kernel = self._is_kernel()
        return self._kernel

    def _is_kernel(self) -> bool:
        h = self.header
        at = h.find("@")
        if h.find("_kernel ", 0, at) < 0:       # every kernel calling convention ends so
            return False
        if h.find('"', 0, at) < 0:              # nothing quoted before the name: words are tokens
            return not _KERNEL_CC.isdisjoint(h[:at].split())
        return not _KERNEL_CC.isdisjoint(self.prefix_words)

    @property
    def return_type(self) -> str:
        """The return type as printed (``void``, ``i32``, ``ptr addrspace(4)``, ``%"T"``, ``{ i32, ptr }`` ...)."""
        head = self.header
        at = head.find("@")
        if head.find('"', 0, at) < 0:
            last = head[:at].rsplit(None, 1)[-1]
            if last[-1] not in ")}]>*":          # one token: i32, ptr, %T
                return last
        h = self._parsed()
        return self.header[h.prefix[h.ret_start][1]:h.prefix[-1][2]]

    def tail_parts(self) -> dict[str, tuple[int, int]]:
        """Spans (in ``header``) of the tail's clauses: ``comdat``, ``section``,
        ``partition``, ``prefix``, ``prologue``, ``personality``, ``gc``, ``align``."""
        at = self._parsed().params_end
        toks, out = tokens(self.header[at:]), {}
        i, n = 0, len(toks)
        while i < n:
            t = toks[i][0]
            j = i + 1
            if t == "comdat":
                if j < n and toks[j][0] == "(":
                    j = closing(toks, j)
            elif t in ("section", "partition", "gc", "align"):
                j = i + 2
            elif t in ("prefix", "prologue", "personality"):
                j = skip_constant(toks, skip_type(toks, i + 1))
            elif t == "addrspace":
                j = closing(toks, j)
            else:
                i = j
                continue
            out[t] = (at + toks[i][1], at + toks[j - 1][2])
            i = j
        return out

    def comdat(self) -> str | None:
        """The comdat this definition is in (``$name`` token), or None."""
        if self._comdat is False:
            self._comdat = _comdat_of(self.header, self.name)
        return self._comdat

    def refs(self) -> list[str]:
        """Names of the globals and functions this function mentions (ordered, unique):
        its body, and its personality, prefix and prologue data."""
        if self._refs is None:
            names = global_refs(self.body or "")
            if self.header.count("@") > 1:
                names = [n for n in global_refs(self.tail)] + names
            self._refs = _names(names, self.name)
        return self._refs

    def calls(self) -> list[str]:
        """Direct callees, in order of first call (a global right before ``(`` is a
        callee: constant expressions never put one there)."""
        if self._calls is None:
            body = self.body or ""
            if "@" not in body:
                found = []
            elif '"' not in body:                       # see lexer: nothing to skip
                found = _PLAIN_CALL_RX.findall(body)
            else:
                found = [unquote_name(n) if n[:1] == '"' else n for n in _CALL_RX.findall(body) if n]
            self._calls = _names(found)
        return self._calls

    def indirect_call_attribute_groups(self) -> list[int]:
        """Attribute groups on indirect call sites (how ``"virtual-call"`` is found)."""
        if self._icall_attrs is None:
            self._icall_attrs = [] if self.body is None or "#" not in self.body else \
                [g for _, groups in indirect_calls(self.body) for g in groups]
        return self._icall_attrs

    def blockaddress_targets(self) -> list[str]:
        """Functions whose blocks this function takes the address of."""
        if self._baddr is None:
            self._baddr = blockaddress_targets(self.text()) if "blockaddress" in (self.body or "") or \
                "blockaddress" in self.header else []
        return self._baddr


def _joined(entities) -> str:
    """The text of ``entities`` as one string, for one scan per kind of fact."""
    texts = []
    for ent in entities:
        if isinstance(ent, Global):
            texts.append(ent.line)
        else:
            texts.append(ent.header)
            if ent.body is not None:
                texts.append(ent.body)
    return "\n".join(texts)


def _comdat_of(text: str, name: str) -> str | None:
    """The comdat a header or global line puts its entity in: ``comdat($c)`` →
    ``$c``, a bare ``comdat`` → ``$<its own name>``."""
    if "comdat" not in text:
        return None
    for m in _COMDAT_RX.finditer(text):
        if m.group(0)[0] == "c":
            return m.group(1) or "$" + quote_name(name)
    return None


def indirect_calls(body: str) -> list[tuple[str, list[int]]]:
    """Indirect call and invoke sites of a body: (the instruction line, its
    function attribute groups)."""
    return [(line, groups) for line, groups, _ in _indirect_call_sites(body)]


def _type_text(text: str, toks, start: int, end: int) -> str:
    """The type spelled by ``toks[start:end]``, blanks as LLVM prints them."""
    return " ".join(text[toks[start][1]:toks[end - 1][2]].split())


def _arg_types(text: str, toks, open_at: int, close: int) -> list[str]:
    """The types of the arguments or parameters between ``toks[open_at]`` (``(``)
    and ``toks[close - 1]`` (``)``); ``...`` stays."""
    out, i = [], open_at + 1
    while i < close - 1:
        if toks[i][0] == "...":
            out.append("...")
            i += 1
        else:
            j = skip_type(toks, i)
            out.append(_type_text(text, toks, i, j))
            depth = 0
            while i < close - 1 and not (toks[i][0] == "," and depth == 0):
                t = toks[i][0]
                depth += t in ("(", "[", "{", "<")
                depth -= t in (")", "]", "}", ">")
                i += 1
        i += 1                                  # the comma
    return out


def indirect_call_types(body: str) -> set[str]:
    """The function types of a body's indirect calls and invokes, as
    ``"<ret> (<t1>, <t2>)"``: with opaque pointers a call prints its return
    type and arguments (``call i32 %f(i32 1)``), or the whole function type
    when it is varargs (``call i32 (i32, ...) %f(i32 1)``)."""
    return {t for _, _, t in _indirect_call_sites(body)}


def function_type(fn: "Function") -> str:
    """``fn``'s own type, in the form of ``indirect_call_types``."""
    toks = tokens(fn.params)
    return f"{' '.join(fn.return_type.split())} ({', '.join(_arg_types(fn.params, toks, 0, len(toks)))})"


def _indirect_call_sites(body: str) -> list[tuple[str, list[int], str]]:
    """(line, function attribute groups, function type) of each indirect call site."""
    out = []
    for line in body.split("\n"):
        if "call" not in line or "%" not in line:
            continue
        toks = tokens(line)
        words = [t[0] for t in toks]
        if "call" not in words and "invoke" not in words and "callbr" not in words:
            continue
        i = next(k for k, w in enumerate(words) if w in ("call", "invoke", "callbr")) + 1
        n = len(toks)
        while i < n - 1 and not (words[i][0] in "%@" and words[i + 1] == "("):
            i = closing(toks, i) if words[i] in ("(", "[", "{", "<") else i + 1
        if i >= n - 1 or words[i][0] != "%":
            continue
        end = closing(toks, i + 1)
        groups = []
        for k in range(end, n):
            w = words[k]
            if w[0] == "#":
                groups.append(int(w[1:]))
            elif w in ("[", ",", "to"):
                break
        start = _type_start(toks, i - 1)
        if words[i - 1] == ")" and words[start - 1:start] and words[start - 1] not in ("addrspace", "target") \
                and words[start] == "(":        # the whole function type is spelled
            ret = _type_text(line, toks, _type_start(toks, start - 1), start)
            params = _arg_types(line, toks, start, i)
        else:
            ret = _type_text(line, toks, start, i)
            params = _arg_types(line, toks, i + 1, end)
        out.append((line, groups, f"{ret} ({', '.join(params)})"))
    return out


_BLOCKADDRESS = re.compile(r'blockaddress\(@(' + _NAME + r')|' + _SKIP)


def blockaddress_targets(text: str) -> list[str]:
    """Functions named as ``blockaddress(@f, %bb)`` in ``text``."""
    return _names([unquote_name(n) for n in _BLOCKADDRESS.findall(text) if n])


def _names(tokens_: list[str], drop: str | None = None) -> list[str]:
    """Names as unique names in order of appearance, without ``drop``."""
    if len(tokens_) > 1:
        tokens_ = list(dict.fromkeys(tokens_))
    if drop is not None and drop in tokens_:
        tokens_.remove(drop)
    return tokens_


class Global:
    """One global variable, alias or ifunc line, as LLVM printed it."""

    __slots__ = ("name", "line", "_refs", "_head", "_decl")
    kind = "global"

    def __init__(self, name: str, line: str):
        self.name, self.line, self._refs, self._head, self._decl = name, line, None, None, None

    def text(self) -> str:
        return self.line + "\n"

    def _parsed(self, whole: bool = False):
        """(words before the kind, kind token, its index in the tokens, the
        tokens after ``NAME = ``, where they start in the line).  Unless
        ``whole``, the tokens may stop a little after the value type: a big
        initialiser is not read to learn the linkage."""
        head = self._head
        if head is None or whole and not head[5]:
            rest_at = len(_line_key(self.line)) + 3
            rest = self.line[rest_at:]
            window = rest if whole or len(rest) <= 240 else rest[:240]
            toks = tokens(window)
            k = next((i for i, t in enumerate(toks) if t[0] in _VARIABLE_KINDS or t[0] in ("alias", "ifunc")), None)
            if window is not rest and (k is None or _type_end(toks, k) >= len(toks) - 1):
                toks = tokens(rest)
                window = rest
                k = next(i for i, t in enumerate(toks) if t[0] in _VARIABLE_KINDS or t[0] in ("alias", "ifunc"))
            head = self._head = ([t[0] for t in toks[:k]], toks[k][0], k, toks, rest_at, window is rest)
        return head

    @property
    def linkage(self) -> str:
        words = self._parsed()[0]
        return words[0] if words and words[0] in _LINKAGES else "external"

    @property
    def is_declaration(self) -> bool:
        words, kind, k, toks, _, _ = self._parsed()
        if kind not in _VARIABLE_KINDS:
            return False
        if not words or words[0] not in ("external", "extern_weak"):
            return False
        end = skip_type(toks, k + 1)
        return end >= len(toks) or toks[end][0] in (",", "!") or toks[end][0][0] == "#"

    @property
    def is_alias(self) -> bool:
        return self._parsed()[1] in ("alias", "ifunc")

    def _type_span(self) -> tuple[int, int]:
        _, _, k, toks, at, _ = self._parsed()
        end = skip_type(toks, k + 1)
        return at + toks[k + 1][1], at + toks[end - 1][2]

    @property
    def address_space(self) -> int:
        """The variable's address space (``addrspace(N)`` before its kind; 0 without)."""
        words = self._parsed()[0]
        at = words.index("addrspace") if "addrspace" in words else -1
        return int(words[at + 2]) if at >= 0 and len(words) > at + 2 and words[at + 2].isdigit() else 0

    @property
    def value_type(self) -> str:
        s, e = self._type_span()
        return self.line[s:e]

    def initializer(self) -> tuple[int, int] | None:
        """Span of a variable's initialiser in ``line``, or None for a declaration."""
        if self.is_alias or self.is_declaration:
            return None
        _, _, k, toks, at, _ = self._parsed(whole=True)
        start = skip_type(toks, k + 1)
        end = skip_constant(toks, start)
        return at + toks[start][1], at + toks[end - 1][2]

    def comdat(self) -> str | None:
        """The comdat this variable is in (``$name`` token), or None."""
        return _comdat_of(self.line, self.name)

    @property
    def attribute_groups(self) -> list[int]:
        return attribute_refs(self.line)

    @property
    def metadata(self) -> dict[str, str]:
        return metadata_attachments(self.line)

    def refs(self) -> list[str]:
        if self._refs is None:
            self._refs = _names(global_refs(self.line[len(_line_key(self.line)):]), self.name)
        return self._refs

    def calls(self) -> list[str]:
        return []

    def blockaddress_targets(self) -> list[str]:
        return blockaddress_targets(self.line) if "blockaddress" in self.line else []


# --- the module ------------------------------------------------------------------


class Module:
    """A module as a list of top-level entities (see the module docstring)."""

    def __init__(self):
        self.header: list[str] = []
        self.types: dict[str, str] = {}          # "%name" token -> line
        self.comdats: dict[str, str] = {}        # "$name" token -> line
        self.globals: dict[str, Global] = {}
        self.functions: dict[str, Function] = {}
        self.attribute_groups: dict[int, str] = {}   # N -> text between the braces
        self.named_metadata: dict[str, str] = {}     # name -> line
        self.metadata: dict[int, str] = {}           # N -> line
        self.name = "<module>"
        self._new_md: dict[str, int] = {}
        self._new_attrs: dict[str, int] = {}
        self._users: dict[str, set[str]] | None = None
        self._with: dict[str, dict] = {}
        self._by_group: dict[int, list[str]] | None = None
        self._order = None
        self._early = None
        self._groups_of = None
        self._named_nodes: set[int] | None = None      # nodes the named metadata reaches
        self._md_facts: dict[int, tuple] = {}           # node -> (nodes, globals) it names

    # -- reading ------------------------------------------------------------------

    @classmethod
    def parse(cls, text: str, name: str = "<module>") -> "Module":
        """Cut LLVM's canonical printing of a module into entities (no validation:
        use ``load`` or ``parse_text`` for untrusted input)."""
        mod = cls()
        mod.name = name
        if not text.endswith("\n"):
            text += "\n"
        functions, globals_ = mod.functions, mod.globals
        for header, fname, body, decl, dname, line in _ENTITY.findall(text):
            if header:
                if fname[0] == '"':
                    fname = unquote_name(fname)
                functions[fname] = Function(fname, header, body)
                continue
            if decl:
                if dname[0] == '"':
                    dname = unquote_name(dname)
                functions[dname] = Function(dname, decl, None)
                continue
            c0 = line[0]
            if c0 == "@":
                gname = unquote_name(_line_key(line)[1:])
                globals_[gname] = Global(gname, line)
            elif c0 == "%":
                mod.types[_line_key(line)] = line
            elif c0 == "$":
                mod.comdats[_line_key(line)] = line
            elif c0 == "!":
                key = _line_key(line)
                if key[1:].isdigit():
                    mod.metadata[int(key[1:])] = line
                else:
                    mod.named_metadata[key[1:]] = line
            elif line.startswith("attributes #"):
                toks = tokens(line[:40])            # attributes #N = { ... }
                rest = line[toks[2][2]:]
                mod.attribute_groups[int(toks[1][0][1:])] = rest.strip()[1:-1].strip()
            else:
                mod.header.append(line)
        return mod

    def text(self) -> str:
        """This module's IR text: entities in LLVM's order and layout, the
        numbers of attribute groups and metadata nodes as they are (not compacted)."""
        variables = "".join(g.line + "\n" for g in self.globals.values())
        functions = "\n".join(f.text() for f in self.functions.values())
        after = ""
        if names_equivalents(variables) or names_equivalents(functions):     # LLVM's order would not parse back
            before, fns, moved = parseable_order(self.globals, self.functions)
            variables = "".join(g.line + "\n" for g in before)
            functions = "\n".join(f.text() for f in fns)
            after = "".join(g.line + "\n" for g in moved)
        sections = [
            "".join(line + "\n" for line in self.header),
            "".join(line + "\n" for line in self.types.values()),
            "\n".join(line + "\n" for line in self.comdats.values()),
            variables,
            functions,
            after,
            "".join(f"attributes #{n} = {{ {a} }}\n" for n, a in self.attribute_groups.items()),
            "".join(line + "\n" for line in self.named_metadata.values()),
            "".join(self.metadata[n] + "\n" for n in sorted(self.metadata)),
        ]
        return "\n".join(s for s in sections if s)

    __str__ = text

    def verify(self, text: str | None = None):
        """Hand the module to LLVM: parse and verify in a fresh context
        (``text``: ``self.text()``, when the caller has it already).

        A failure here means a pass produced bad IR; it is raised as
        ``RuntimeError`` with LLVM's message (an internal error, not the user's).
        """
        early, self._early = self._early, None
        text = self.text() if text is None else text
        if early is not None and early[0] == text and not early[2]:
            ref, problem = early[1].result()
        else:
            ref, problem = parse_and_verify(text, self.name)
        if problem is not None:
            raise RuntimeError(problem)
        return ref

    def bitcode(self, text: str | None = None) -> bytes:
        """``verify``, then LLVM's bitcode of the module (taken from
        ``start_verification(bitcode=True)`` when the module is unchanged)."""
        early = self._early
        text = self.text() if text is None else text
        if early is not None and early[0] == text and early[2]:
            self._early = None
            data, problem = early[1].result()
            if problem is not None:
                raise RuntimeError(problem)
            return data
        ref = self.verify(text)
        data = ref.as_bitcode()
        close_in_background(ref)
        return data

    def start_verification(self, bitcode: bool = False) -> None:
        """Start ``verify`` of the module as it is now on a second thread, where
        LLVM works (llvmlite lets go of the GIL) while Python goes on; a later
        ``verify`` of the unchanged module takes that result.  ``bitcode``:
        the thread also writes the bitcode and lets go of LLVM's module at
        once, for a later ``bitcode`` (the post-link step starts each image so
        while it goes on with the next)."""
        text = self.text()
        job = in_background(verified_bitcode, text, self.name) if bitcode else \
            in_background(parse_and_verify, text, self.name)
        self._early = (text, job, bitcode)

    def take_contents_of(self, other: "Module") -> None:
        """Become ``other``: this object takes its contents (a pass that
        rebuilds the module still edits the manager's module in place)."""
        self.__dict__.update(other.__dict__)

    def copy(self) -> "Module":
        """The same module as a new object: editing the copy leaves this one as
        it is.  Entities are values that edits replace, never change, so the
        copy shares them and only the containers are new (cost: one dict copy
        per kind of entity); the copy computes its facts afresh."""
        out = Module()
        out.name = self.name
        out.header = list(self.header)
        out.types, out.comdats = dict(self.types), dict(self.comdats)
        out.globals, out.functions = dict(self.globals), dict(self.functions)
        out.attribute_groups = dict(self.attribute_groups)
        out.named_metadata, out.metadata = dict(self.named_metadata), dict(self.metadata)
        return out

    def entity(self, name: str):
        return self.functions.get(name) or self.globals.get(name)

    def function_attributes(self, fn: Function | str) -> dict[str, str | None]:
        """All attributes of a function (from its attribute groups)."""
        fn = self.functions[fn] if isinstance(fn, str) else fn
        return self._attributes(fn.attribute_groups)

    def global_attributes(self, g: Global | str) -> dict[str, str | None]:
        g = self.globals[g] if isinstance(g, str) else g
        return self._attributes(g.attribute_groups)

    def attributes_of_group(self, n: int) -> dict[str, str | None]:
        return dict(_parse_group(self.attribute_groups.get(n, "")))

    def _attributes(self, groups: list[int]) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for n in groups:
            out.update(_parse_group(self.attribute_groups.get(n, "")))
        return out

    def attribute_index(self, key: str) -> dict[int, str | None]:
        """Attribute group number → value of attribute ``key``, for the groups that have it."""
        out = {}
        for n, text in self.attribute_groups.items():
            if key in text:
                for k, v in _parse_group(text):
                    if k == key:
                        out[n] = v
        return out

    def functions_with(self, key: str) -> dict[str, str | None]:
        """Function name → value of attribute ``key``, for the functions that have it
        (module order).  One look at each attribute group, then the functions of
        the groups that have it; remembered until the next edit."""
        out = self._with.get(key)
        if out is None:
            index = self.attribute_index(key)
            by_group = self._functions_by_group() if index else {}
            hits = [(name, value) for n, value in index.items() for name in by_group.get(n, ())]
            if len(index) > 1:
                position = self._positions()
                hits.sort(key=lambda hit: position[hit[0]])
            out = self._with[key] = dict(hits)
        return out

    def _functions_by_group(self) -> dict[int, list[str]]:
        """Attribute group number → the functions that use it, in module order."""
        out = self._by_group
        if out is None:
            out = self._by_group = {}
            for name, fn in self.functions.items():
                for n in fn.attribute_groups:
                    out.setdefault(n, []).append(name)
        return out

    def globals_with(self, key: str) -> dict[str, str | None]:
        index = self.attribute_index(key)
        if not index:
            return {}
        return {name: index[n] for name, g in self.globals.items() for n in g.attribute_groups if n in index}

    def metadata_operands(self, ref: str | int) -> list[str]:
        """Operands of metadata node ``!N`` (``ref`` is ``"!N"`` or ``N``), as printed."""
        n = int(ref[1:]) if isinstance(ref, str) else ref
        line = self.metadata.get(n)
        if line is None:
            return []
        body = _after_key(line)
        if body.startswith("distinct "):
            body = body[len("distinct "):]
        if not body.startswith("!{"):
            return [body]
        return split_operands(body[2:-1])

    def metadata_ints(self, ref: str | None) -> list[int]:
        """The integers of node ``!N``: ``i32 N`` / ``i64 N`` operands, or the last
        operand of ``!{!"name", i32 N}`` pairs (how aspects are listed)."""
        out = []
        for op in self.metadata_operands(ref) if ref else ():
            if op.startswith("!") and op[1:].isdigit():
                inner = self.metadata_operands(op)
                op = inner[-1] if inner else ""
            parts = op.split()
            if len(parts) == 2 and parts[0] in ("i8", "i16", "i32", "i64"):
                try:
                    out.append(int(parts[1]))
                except ValueError:
                    continue
        return out

    def filter_used_lists(self, keep) -> None:
        """Keep only the members of ``@llvm.used`` / ``@llvm.compiler.used`` that are
        in ``keep``; a list left empty is removed."""
        for used in USED_LISTS:
            g = self.globals.get(used)
            if g is None or all(r in keep for r in g.refs()):
                continue
            new = _filter_used(g, keep)
            if new is None:
                del self.globals[used]
            else:
                self.globals[used] = new

    def function_metadata(self, fn: Function | str, kind: str) -> list[str] | None:
        """Operands of the ``!kind`` attachment of a function, or ``None``."""
        fn = self.functions[fn] if isinstance(fn, str) else fn
        ref = fn.metadata.get(kind)
        return None if ref is None else self.metadata_operands(ref)

    def named_metadata_operands(self, name: str) -> list[list[str]]:
        """The nodes a named metadata lists, each as its operand list."""
        line = self.named_metadata.get(name)
        if line is None:
            return []
        refs = split_operands(_after_key(line)[2:-1])
        return [self.metadata_operands(r) for r in refs]

    def strong_definitions(self) -> list[str]:
        """Definitions with plain external linkage: the ones that clash when two
        modules that both have them are linked (``llvm.*`` lists excepted)."""
        return [name for name, ent in list(self.functions.items()) + list(self.globals.items())
                if not ent.is_declaration and ent.linkage == "external" and not name.startswith("llvm.")]

    def users(self) -> dict[str, set[str]]:
        """name → names of the functions and globals that mention it (whole module)."""
        if self._users is None:
            users: dict[str, set[str]] = {}
            for ent in list(self.functions.values()) + list(self.globals.values()):
                for r in ent.refs():
                    users.setdefault(r, set()).add(ent.name)
            self._users = users
        return self._users

    # -- extraction ---------------------------------------------------------------

    def closure(self, roots: Iterable[str], skip_bodies_of: Iterable[str] = ()) -> list[str]:
        """Every function and global reachable from ``roots`` through references
        (calls, constants, initialisers, personality and prefix data), not
        looking inside the bodies of the functions in ``skip_bodies_of`` (they
        are reached, what they reference is not followed).  A definition brings
        its whole comdat group, and a function whose blocks are addressed
        (``blockaddress``) is followed even when skipped: both must stay defined
        with their users, as in LLVM's GlobalDCE.  Order: discovery order
        (deterministic).  The ``llvm.used`` lists are not followed."""
        opaque = _fast_membership(skip_bodies_of)
        functions, globals_ = self.functions, self.globals
        partners = self._comdat_partners()
        seen: dict[str, None] = {}
        addressed: set[str] = set()
        expanded: set[str] = set()
        stack = [r for r in reversed(list(roots)) if r in functions or r in globals_]
        pop, push = stack.pop, stack.append
        while stack:
            name = pop()
            if name in expanded:
                continue
            seen[name] = None
            if name in opaque and name not in addressed or name in USED_LISTS:
                continue            # what a skipped body reaches is not followed
            expanded.add(name)
            ent = functions.get(name)
            if ent is None:
                ent = globals_[name]
            refs = ent.refs()
            if partners:
                more = partners.get(name)
                if more:
                    refs = refs + more
            if refs:
                for t in ent.blockaddress_targets():
                    addressed.add(t)
                    if t in seen and t not in expanded:
                        push(t)
                for r in reversed(refs):
                    if r not in expanded and (r in functions or r in globals_):
                        push(r)
        return list(seen)

    def _comdat_partners(self) -> dict[str, list[str]]:
        """Definition → the other definitions of its comdat group, for groups of
        more than one (one look at every header that mentions a comdat,
        remembered until the next edit)."""
        if self._groups_of is None:
            groups: dict[str, list[str]] = {}
            if self.comdats:
                for ent in list(self.globals.values()) + list(self.functions.values()):
                    head = ent.header if isinstance(ent, Function) else ent.line
                    if "comdat" in head and not ent.is_declaration:
                        c = ent.comdat()
                        if c is not None:
                            groups.setdefault(c, []).append(ent.name)
            self._groups_of = {n: [m for m in members if m != n]
                               for members in groups.values() if len(members) > 1 for n in members}
        return self._groups_of

    def extract(self, names: Iterable[str], *, declare: Iterable[str] = (), stub: Iterable[str] = (),
                name: str | None = None, closed: bool = False) -> "Module":
        """A new module with the definitions of ``names`` and a declaration of
        everything they reference but which is not among them.

        ``declare``: functions to keep only as declarations; ``stub``: functions
        whose body becomes ``ret void`` / ``ret <ty> undef``.  The ``llvm.used``
        lists keep only members that are defined in the result.  ``closed``:
        the caller knows that ``names`` already holds everything they reference
        (a ``closure`` whose skipped functions are stubbed).  Cost is
        proportional to the extracted entities.
        """
        out = Module()
        out.name = name or self.name
        out.header = list(self.header)
        declare, stub = _fast_membership(declare), _fast_membership(stub)
        functions, globals_ = self.functions, self.globals
        # 1. the named entities, then declarations of what they mention (one
        #    level: a declaration mentions nothing)
        chosen: dict[str, object] = {}
        for n in names:
            ent = functions.get(n)
            if ent is not None:
                if n in declare:
                    ent = _as_declaration(ent)
                elif n in stub and ent.body is not None:
                    ent = _stubbed(ent)
            else:
                ent = globals_.get(n)
                if ent is None:
                    continue
            chosen[n] = ent
        blob = _joined(chosen.values())
        # a function whose blocks a kept definition addresses keeps its body
        if "blockaddress" in blob:
            for t in blockaddress_targets(blob):
                if t in functions and (t not in chosen or chosen[t].is_declaration or t in stub):
                    chosen[t] = functions[t]
                    blob += "\n" + functions[t].body
                    closed = False
        for n, ent in list(chosen.items()) if not closed else ():
            if n in USED_LISTS:
                continue
            self._declare_missing(ent.refs(), chosen)
        # metadata the part uses, and declarations of the values it names
        nodes = self._metadata_nodes(blob)
        before = len(chosen)
        facts = self._md_facts
        self._declare_missing([r for n in nodes for r in facts[n][1]], chosen)
        if closed and len(chosen) == before:
            declared = ()
        else:
            declared = [e for e in chosen.values() if e.is_declaration]
        # 2. keep module order (sorting the part, not walking the whole module)
        order = sorted(chosen, key=self._positions().__getitem__)
        out.functions = {n: chosen[n] for n in order if n in functions}
        for n in order:
            if n in globals_:
                ent = chosen[n]
                if n in USED_LISTS:
                    ent = _filter_used(ent, {k for k, v in chosen.items() if not v.is_declaration})
                    if ent is None:
                        continue
                out.globals[n] = ent
        out.named_metadata = dict(self.named_metadata)
        out.metadata = {n: self.metadata[n] for n in sorted(nodes)}
        self._copy_support(out, blob + "\n" + _joined(declared) if declared else blob)
        return out

    def _declare_missing(self, refs: Iterable[str], chosen: dict) -> None:
        """Add to ``chosen`` a declaration of each of ``refs`` it lacks."""
        functions, globals_ = self.functions, self.globals
        for r in refs:
            if r not in chosen:
                dep = functions.get(r) or globals_.get(r)
                if dep is not None:
                    chosen[r] = _as_declaration(dep)

    def _metadata_nodes(self, blob: str) -> set[int]:
        """Numbers of the metadata nodes reachable from the entities whose text
        is ``blob`` and from the named metadata (which every part keeps)."""
        if self._named_nodes is None:
            roots = [m for line in self.named_metadata.values() for m in metadata_refs(line)]
            self._named_nodes = self._reachable_nodes(roots, set())
        return self._reachable_nodes(metadata_refs(blob), set(self._named_nodes))

    def _reachable_nodes(self, roots, nodes: set[int]) -> set[int]:
        """``nodes`` with every node reachable from ``roots`` added (existing ones only)."""
        facts, metadata = self._md_facts, self.metadata
        work = [r for r in roots if r not in nodes]
        while work:
            n = work.pop()
            if n in nodes:
                continue
            f = facts.get(n)
            if f is None:
                line = metadata.get(n)
                if line is None:
                    continue
                body = _after_key(line)
                f = facts[n] = (metadata_refs(body), global_refs(body))
            nodes.add(n)
            work.extend(m for m in f[0] if m not in nodes)
        return nodes

    def _positions(self) -> dict[str, int]:
        """Entity name → place in printing order (globals first), computed once."""
        key = (len(self.globals), len(self.functions))
        if self._order is None or self._order[0] != key:
            pos = {n: i for i, n in enumerate(self.globals)}
            base = len(pos)
            pos.update((n, base + i) for i, n in enumerate(self.functions))
            self._order = (key, pos)
        return self._order[1]

    def _copy_support(self, out: "Module", blob: str) -> None:
        """Copy the comdats, types and attribute groups that the entities of
        ``out`` use (one scan of ``blob``, their joined text, for each kind)."""
        # comdats
        if self.comdats and "comdat" in blob:
            for ent in list(out.globals.values()) + list(out.functions.values()):
                if not ent.is_declaration:
                    key = ent.comdat()
                    if key is not None and key in self.comdats:
                        out.comdats[key] = self.comdats[key]
        # attribute groups
        groups = set(attribute_refs(blob))
        out.attribute_groups = {n: self.attribute_groups[n] for n in sorted(groups) if n in self.attribute_groups}
        # types (transitively; the metadata's too: it may name typed constants)
        if self.types:
            md_text = "\n".join(out.metadata.values())
            if len(self.types) <= 16 and not any(t in blob or t in md_text for t in self.types):
                return      # a first look for the few names (scanning every "%" token of the part is the cost)
            used = set(type_refs(blob) + type_refs(md_text)) & self.types.keys()
            work = list(used)
            while work:
                for u in type_refs(_after_key(self.types[work.pop()])):
                    if u in self.types and u not in used:
                        used.add(u)
                        work.append(u)
            out.types = {k: line for k, line in self.types.items() if k in used}

    # -- edits (each replaces whole entities) -------------------------------------

    def _changed(self):
        self._users = self._groups_of = None
        self._with, self._by_group = {}, None
        self._order = None

    def make_declaration(self, name: str) -> None:
        """Delete a function's body or a global's initialiser: it becomes an
        external declaration."""
        if name in self.functions:
            self.functions[name] = _as_declaration(self.functions[name])
        else:
            self.globals[name] = _as_declaration(self.globals[name])
        self._changed()

    def set_linkage(self, name: str, linkage: str) -> None:
        """Give a function or global definition another linkage (``external`` prints none)."""
        if name in self.globals:
            g = self.globals[name]
            head = _line_key(g.line)
            words = g.line[len(head) + 3:].split(" ")
            if words[0] in _LINKAGES:
                del words[0]
            if linkage != "external":
                words.insert(0, linkage)
            self.globals[name] = Global(name, f"{head} = {' '.join(words)}")
            return
        fn = self.functions[name]
        words = fn.header.split(" ")
        if len(words) > 1 and words[1] in _LINKAGES:
            del words[1]
        if linkage != "external":
            words.insert(1, linkage)
        self.functions[name] = Function(name, " ".join(words), fn.body)

    def make_internal(self, name: str, drop_comdat: bool = False) -> None:
        """Give a function definition internal linkage and default visibility (as
        LLVM's Internalize does); ``drop_comdat`` also takes it out of its comdat."""
        self.set_linkage(name, "internal")
        fn = self.functions[name]
        h = fn._parsed()
        header = fn.header
        cut = [(s_, e_) for tok, s_, e_ in h.prefix[:h.ret_start] if tok in ("hidden", "protected")]
        if drop_comdat:
            span = fn.tail_parts().get("comdat")
            if span is not None:
                cut.append(span)
        for s_, e_ in sorted(cut, reverse=True):
            header = header[:s_].rstrip(" ") + " " + header[e_:].lstrip(" ")
        self.functions[name] = Function(name, header, fn.body)
        self._changed()

    def add_entities(self, text: str) -> list[str]:
        """Add the globals and functions of ``text`` (LLVM IR lines: definitions
        and declarations in LLVM's printing) after the module's own; returns
        their names.  An entity of the same name is replaced."""
        part = Module.parse(text, self.name)
        self.globals.update(part.globals)
        self.functions.update(part.functions)
        self._changed()
        return list(part.globals) + list(part.functions)

    def rename_refs_in_globals(self, renames: dict[str, str]) -> list[str]:
        """In the initialisers of the global variables, name ``renames[old]``
        where they name ``old`` (a vtable slot given another function); function
        bodies are left as they are.  Returns the globals changed."""
        users = self.users()
        named = {u for old in renames for u in users.get(old, ())}
        changed = [n for n in self.globals if n in named]
        for n in changed:
            self.globals[n] = Global(n, rename_global_refs(self.globals[n].line, renames))
        if changed:
            self._changed()
        return changed

    def stub_body(self, name: str) -> None:
        """Replace a function's body with ``ret void`` (or ``ret <ty> undef``)."""
        self.functions[name] = _stubbed(self.functions[name])
        self._changed()

    def drop(self, names: Iterable[str]) -> list[str]:
        """Remove functions/globals and then whatever only they kept alive
        (discardable-linkage definitions and declarations nobody mentions any
        more).  Returns every removed name."""
        users = {k: set(v) for k, v in self.users().items()}
        work = list(names)
        removed: list[str] = []
        while work:
            n = work.pop()
            ent = self.entity(n)
            if ent is None or n in removed:
                continue
            removed.append(n)
            self.functions.pop(n, None)
            self.globals.pop(n, None)
            for r in ent.refs():
                u = users.get(r)
                if u is not None:
                    u.discard(n)
                dep = self.entity(r)
                if dep is not None and not u and (dep.is_declaration or dep.linkage in DISCARDABLE_LINKAGES):
                    work.append(r)
        if removed:
            self.filter_used_lists(set(self.functions) | set(self.globals))
        self._changed()
        return removed

    def add_metadata_node(self, operands: list[str]) -> str:
        """Add ``!{ops}`` (reusing an identical uniqued node, as LLVM does) and return ``!N``."""
        body = "!{" + ", ".join(operands) + "}"
        if not self._new_md:        # index the module's own nodes once
            self._new_md = {_after_key(line): n for n, line in self.metadata.items() if " = !{" in line}
        n = self._new_md.get(body)
        if n is None:
            n = max(self.metadata, default=-1) + 1
            self.metadata[n] = f"!{n} = {body}"
            self._new_md[body] = n
        return f"!{n}"

    def set_function_metadata(self, name: str, kind: str, operands: list[str] | None) -> None:
        """Attach ``!kind !{operands}`` to a function (``None`` removes the attachment)."""
        fn = self.functions[name]
        ref = None if operands is None else self.add_metadata_node(operands)
        h = fn.header
        if fn.is_declaration:
            new = without_attachments(h, kind)
            if ref is not None:
                new = new.replace("declare ", f"declare !{kind} {ref} ", 1)
        else:
            at = fn._parsed().params_end
            tail = without_attachments(h[at:], kind)
            if ref is not None:
                tail = tail[:-2] + f" !{kind} {ref} {{"
            new = h[:at] + tail
        self.functions[name] = Function(name, new, fn.body)

    def order_function_attachments(self, name: str, rank) -> None:
        """Put a function's metadata attachments in the order of ``rank(kind)``
        (LLVM prints them sorted by metadata kind ID)."""
        fn = self.functions[name]
        h = fn.header
        region = h if fn.is_declaration else fn.tail
        pairs = attachment_pairs(region)
        ordered = sorted(pairs, key=lambda p: rank(p[0]))
        if len(pairs) < 2 or ordered == pairs:
            return
        run = "".join(f" !{k} {r}" for k, r in ordered)
        if fn.is_declaration:
            new = without_attachments(h).replace("declare", "declare" + run, 1)
        else:
            at = fn._parsed().params_end
            tail = without_attachments(h[at:])
            new = h[:at] + tail[:-2] + run + " {"
        self.functions[name] = Function(name, new, fn.body)

    def _attribute_group(self, attrs: dict[str, str | None]) -> int:
        text = _render_attributes(attrs)
        n = self._new_attrs.get(text)
        if n is None or self.attribute_groups.get(n) != text:
            n = next((k for k, t in self.attribute_groups.items() if t == text), None)
            if n is None:
                n = max(self.attribute_groups, default=-1) + 1
                self.attribute_groups[n] = text
            self._new_attrs[text] = n
        return n

    def replace_attribute_group(self, n: int, attrs: dict[str, str | None]) -> None:
        """Give attribute group ``#n`` new contents: every user of the group
        (functions and call sites) gets them."""
        self.attribute_groups[n] = _render_attributes(attrs)
        self._with = {}             # who uses #n is unchanged: _by_group stays

    def set_function_attributes(self, name: str, attrs: dict[str, str | None]) -> None:
        """Replace all function attributes of ``name`` (one attribute group)."""
        fn = self.functions[name]
        h, tail = fn.header, fn.tail
        head = h[:len(h) - len(tail)]
        tail = _ATTR_SPAN.sub(_kept, tail).replace("  ", " ")
        if attrs:
            # canonical position: after unnamed_addr/addrspace, before section/comdat/metadata
            toks, k = tokens(tail), 0
            while k < len(toks) and toks[k][0] in ("unnamed_addr", "local_unnamed_addr", "addrspace"):
                k = closing(toks, k + 1) if toks[k][0] == "addrspace" else k + 1
            place = toks[k - 1][2] if k else 0
            tail = tail[:place] + f" #{self._attribute_group(attrs)}" + tail[place:]
        self.functions[name] = Function(name, head + tail, fn.body)
        self._with, self._by_group = {}, None

    def update_function_attributes(self, name: str, add: dict[str, str | None] | None = None,
                                   remove: Iterable[str] = ()) -> None:
        """Add and remove function attributes (no-op when nothing changes)."""
        before = self.function_attributes(name)
        attrs = dict(before)
        for k in remove:
            attrs.pop(k, None)
        attrs.update(add or {})
        if attrs != before:
            self.set_function_attributes(name, attrs)


USED_LISTS = ("llvm.used", "llvm.compiler.used")


def _fast_membership(names):
    """Names as something with fast ``in``: sets, dicts and views are used as they
    are (so a per-image filter over a big set costs nothing to pass)."""
    return names if hasattr(names, "__contains__") and not isinstance(names, (list, tuple, str)) else set(names)


class DifferenceView:
    """``base - removed`` for ``in`` tests, without copying ``base``: the names
    of ``base`` that are not in ``removed``."""

    __slots__ = ("base", "removed")

    def __init__(self, base, removed):
        self.base, self.removed = base, set(removed)

    def __contains__(self, name) -> bool:
        return name in self.base and name not in self.removed


_ATTR_SPAN = re.compile(r' #[0-9]+|' + _SKIP)
_ATTACH_SPAN = re.compile(r' !([-a-zA-Z$._][-a-zA-Z$._0-9\\]*) ![0-9]+|' + _SKIP)


def _kept(m: re.Match) -> str:
    """For a scanner's ``sub``: drop what it matched, keep the strings and comments it skipped."""
    return m.group(0) if m.group(0)[:1] in ('"', ";") else ""


def without_attachments(text: str, kind: str | None = None) -> str:
    """``text`` without its metadata attachments (of ``kind`` only, if given)."""
    if "!" not in text:
        return text
    return _ATTACH_SPAN.sub(lambda m: m.group(0) if m.group(1) is None or kind is not None and m.group(1) != kind
                            else "", text)


def _as_declaration(ent):
    """The declaration of a definition (itself for a declaration); made once per
    entity (entities never change), as every image that declares it asks."""
    if ent.is_declaration:
        return ent
    if ent._decl is None:
        ent._decl = _declaration_of(ent)
    return ent._decl


def _declaration_of(ent):
    if isinstance(ent, Global):
        if ent.is_alias:
            raise IRError(f"cannot turn alias @{ent.name} into a declaration")
        words, kind, k, toks, at, _ = ent._parsed(whole=True)
        line = ent.line
        pre = line[at:at + toks[k][1]].split()
        if pre and pre[0] in _LINKAGES:
            del pre[0]
        ty_end = skip_type(toks, k + 1)
        init_end = skip_constant(toks, ty_end)
        head = line[:at] + " ".join(["external"] + pre + [kind]) + " " + line[at + toks[k + 1][1]:at + toks[ty_end - 1][2]]
        tail = []
        for part in split_operands(line[at + toks[init_end][1] + 1:]) if init_end < len(toks) and \
                toks[init_end][0] == "," else []:
            if part.startswith(("align ", "section ", "partition ", "addrspace")):
                tail.append(part.split(" #")[0] if not part.startswith(("section", "partition")) else part)
        groups = attribute_refs(line[at + toks[init_end - 1][2]:])
        text = head + "".join(f", {p}" for p in tail) + "".join(f" #{g}" for g in groups)
        return Global(ent.name, text)
    h = ent._parsed()
    header = ent.header
    toks = h.prefix
    first = 2 if len(toks) > 2 and toks[1][0] in _LINKAGES and toks[1][0] != "extern_weak" else 1
    pre = header[toks[first][1]:toks[h.ret_start][1]] if first < h.ret_start else ""
    tail = header[h.params_end:]
    parts = ent.tail_parts()
    for key in ("comdat", "prefix", "prologue", "personality"):    # what only a body may have
        if key in parts:
            s_, e_ = parts[key]
            tail = tail.replace(header[s_:e_], "", 1)
    tail = without_attachments(tail)           # like Function::deleteBody, which clears metadata
    tail = tail[:-1] if tail.endswith("{") else tail
    tail = " ".join(tail.split())
    ret_to_name = header[toks[h.ret_start][1]:h.name_end]
    text = "declare " + pre + ret_to_name + _unnamed(ent.params) + (" " + tail if tail else "")
    return Function(ent.name, text, None)


def _unnamed(params: str) -> str:
    """A parameter list without parameter names, as LLVM prints a declaration's."""
    if "%" not in params:
        return params
    out = []
    for p in split_operands(params[1:-1]):
        toks = tokens(p)
        if len(toks) > 1 and toks[-1][0][0] == "%":
            p = p[:toks[-1][1]].rstrip()
        out.append(p)
    return "(" + ", ".join(out) + ")"


def _stubbed(fn: Function) -> Function:
    """``ret void`` / ``ret <ty> undef`` as the whole body; like upstream's
    deleteBody + new block, the function's metadata goes with the old body."""
    ret = fn.return_type
    body = "entry:\n  ret void\n}\n" if ret == "void" else f"entry:\n  ret {ret} undef\n}}\n"
    h = fn.header
    at = fn._parsed().params_end
    return Function(fn.name, h[:at] + without_attachments(h[at:]).replace("  ", " "), body)


def _filter_used(g: Global, keep) -> Global | None:
    """``@llvm.used`` / ``@llvm.compiler.used`` with only the members whose
    globals are all in ``keep``, edited element by element (any element type,
    ``addrspacecast`` members and the rest of the line as they were); None if
    no member is left."""
    span = g.initializer()
    if span is None:
        return g
    s, e = span
    line = g.line
    members = split_operands(line[s + 1:e - 1])
    kept = [m for m in members if all(r in keep for r in global_refs(m))]
    if not kept:
        return None
    if len(kept) == len(members):
        return g
    ts, te = g._type_span()
    ty = line[ts:te]
    toks = tokens(ty)                           # [N x T]
    new_ty = ty[:toks[1][1]] + str(len(kept)) + ty[toks[1][2]:]
    return Global(g.name, line[:ts] + new_ty + line[te:s] + "[" + ", ".join(kept) + "]" + line[e:])


