"""LLVM's spelling of string attributes (``"key"="value"``) and quoted names.

DPC++ marks special IR with string attributes (``"sycl-module-id"``,
``"indirectly-callable"``, ``"sycl-unique-id"``, ``"virtual-call"``, ...).  LLVM's
parser accepts them inline after a function header, a call, or a global's
initialiser, and its printer folds them into ``attributes #N`` groups.
"""
from __future__ import annotations

from ..passes.ir.lexer import quote_string as quote      # the IR layer's one spelling of strings


def render(key: str, value: str | None = None) -> str:
    """LLVM spelling of one string attribute; ``value=None`` gives a bare ``"key"``."""
    return quote(key) if value is None else f"{quote(key)}={quote(value)}"
