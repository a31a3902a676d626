"""The top-level entities of a module (``module.py``'s step 2): ``Function`` and ``Global``.

An entity is the text LLVM printed for it (a function's header and body, a
global's line); every fact about it (linkage, calling convention, references,
direct calls, comdat, attributes, metadata) is read from that text the first
time it is asked for, through the tokens of ``lexer``.  Entities are values:
an edit makes a new one (``edits.py``), so modules can share them.
"""
from __future__ import annotations

import re

from .attributes import metadata_attachments
from .bridge import IRError
from .call_sites import _type_start, indirect_calls
from .lexer import (_NAME, _SKIP, LexError, attribute_refs, closing, global_refs, quote_name, skip_constant, skip_type, tokens,
                    unquote_name)

_LINKAGES = frozenset("private internal available_externally linkonce weak common appending extern_weak "
                      "linkonce_odr weak_odr external".split())
DISCARDABLE_LINKAGES = frozenset("private internal available_externally linkonce linkonce_odr".split())
_CALLING_CONVS = frozenset("ccc fastcc coldcc spir_func spir_kernel amdgpu_kernel ptx_kernel ptx_device "
                           "x86_stdcallcc x86_fastcallcc swiftcc tailcc".split())
_KERNEL_CC = frozenset(("spir_kernel", "amdgpu_kernel", "ptx_kernel"))
_VARIABLE_KINDS = frozenset(("global", "constant"))
_LINE_NAME = re.compile(r'[@%$!](?:"[^"]*"|[-a-zA-Z$._0-9\\]+) = ')
_CALL_RX = re.compile(r'@(' + _NAME + r')\(|' + _SKIP)
_PLAIN_CALL_RX = re.compile(r'@([-a-zA-Z$._0-9]+)\(')


def _line_key(line: str) -> str:
    """The name token a top-level ``NAME = ...`` line starts with (``@"a = b"``, ``!0``)."""
    m = _LINE_NAME.match(line)
    if m is None:
        raise IRError(f"cannot read the name of: {line[:80]}")
    return m.group(0)[:-3]


def _after_key(line: str) -> str:
    """What follows ``NAME = `` on a top-level line."""
    return line[len(_line_key(line)) + 3:]


def _type_end(toks, kind_at: int) -> int:
    """Index just past a global's value type (which follows its kind token), or
    ``len(toks)`` when the tokens end inside it."""
    try:
        return skip_type(toks, kind_at + 1)
    except (LexError, IndexError):
        return len(toks)


_FIRST_GLOBAL = re.compile(r'@' + _NAME + r'|' + _SKIP)
_PARENS = re.compile(r'[()]|' + _SKIP)
_COMDAT_RX = re.compile(r'(?<![-a-zA-Z$._0-9@%!#])comdat(?![-a-zA-Z$._0-9])(?:\((\$' + _NAME + r')\))?|' + _SKIP)
#: the same for text without strings and comments: the first match is the word
_PLAIN_COMDAT_RX = re.compile(r'(?<![-a-zA-Z$._0-9@%!#])comdat(?![-a-zA-Z$._0-9])(?:\((\$' + _NAME + r')\))?')


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


#: words that are one token each, a space after each (``define internal spir_func void ``,
#: most headers up to the name): ``lexer.tokens`` would read each word as one token
_PLAIN_WORDS = re.compile(r'(?:(?:[a-z_][a-z0-9_]*|[0-9]+) )+')


def _plain_words(text: str) -> list:
    """``tokens(text)`` of a text ``_PLAIN_WORDS`` matches, without the scanner."""
    out, at = [], 0
    for word in text.split(" ")[:-1]:
        out.append((word, at, at + len(word)))
        at += len(word) + 1
    return out


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
            head = self._header[:self.name_start]
            self._prefix = _plain_words(head) if _PLAIN_WORDS.fullmatch(head) else tokens(head)
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

    def relinked(self, header: str) -> "Function":
        """This function under ``header``, which differs from its own only in
        linkage, visibility or comdat words: the facts read from its body,
        attribute groups, attachments and calling convention carry over (an
        image's internalized functions are not read again)."""
        out = Function(self.name, header, self.body)
        out._groups, out._md, out._refs, out._calls = self._groups, self._md, self._refs, self._calls
        out._icall_attrs, out._kernel, out._baddr = self._icall_attrs, self._kernel, self._baddr
        return out

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
    if '"' not in text and ";" not in text:
        m = _PLAIN_COMDAT_RX.search(text)
        return None if m is None else m.group(1) or "$" + quote_name(name)
    for m in _COMDAT_RX.finditer(text):
        if m.group(0)[0] == "c":
            return m.group(1) or "$" + quote_name(name)
    return None


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


USED_LISTS = ("llvm.used", "llvm.compiler.used")
