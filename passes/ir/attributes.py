"""Attribute groups and metadata attachments, as text (``module.py``'s step 2 reads them, step 3 writes them).

* ``parse_attribute_group`` reads the contents of ``attributes #N = { ... }``;
  ``_render_attributes`` prints a set of attributes as LLVM does.
* ``attachment_pairs`` / ``metadata_attachments`` read the ``!kind !N``
  attachments of a header or a global line; ``without_attachments`` drops them.
"""
from __future__ import annotations

import functools
import re

from .lexer import _SKIP, closing, quote_string, tokens, unquote_name

_MD_ATTACH = re.compile(r'!([-a-zA-Z$._][-a-zA-Z$._0-9\\]*) !([0-9]+)|' + _SKIP)


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
