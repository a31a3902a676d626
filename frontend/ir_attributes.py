"""LLVM's spelling of string attributes (``"key"="value"``) and quoted names.

DPC++ marks special IR with string attributes (``"sycl-module-id"``,
``"indirectly-callable"``, ``"sycl-unique-id"``, ``"virtual-call"``, ...).  LLVM's
parser accepts them inline after a function header, a call, or a global's
initialiser, and its printer folds them into ``attributes #N`` groups.
"""
from __future__ import annotations

import functools


@functools.lru_cache(maxsize=4096)      # the same file names and module ids recur
def quote(text: str) -> str:
    """``"text"`` with LLVM's ``\\XX`` escapes (for names, strings and attributes)."""
    out = []
    for ch in text:
        if ch == '"' or ch == "\\" or not (32 <= ord(ch) < 127):
            out.extend(f"\\{b:02X}" for b in ch.encode())
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def render(key: str, value: str | None = None) -> str:
    """LLVM spelling of one string attribute; ``value=None`` gives a bare ``"key"``."""
    return quote(key) if value is None else f"{quote(key)}={quote(value)}"
