"""Indirect call sites of a function body, and function types in their spelling.

How ``"virtual-call"`` attribute groups are found (``Function.indirect_call_attribute_groups``)
and how post-link matches an indirect call's type with the functions an image
must keep (``indirect_call_types`` against ``function_type``).  ``_type_start``
reads a type backwards from its last token (a call prints its return type
before the callee).
"""
from __future__ import annotations

from .lexer import closing, skip_type, tokens


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


def function_type(fn) -> str:
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
