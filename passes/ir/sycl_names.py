"""How DPC++'s IR conventions spell SYCL names, and how diagnostics show them.

A virtual-function set is named in ``"indirectly-callable"`` / ``"calls-indirectly"``
by ``__builtin_sycl_unique_stable_name`` of a type: ``_ZTSv`` for the default
set (``void``), ``_ZTS<length><name>`` for a set named ``name``.  Diagnostics
never show that spelling.
"""
from __future__ import annotations

__all__ = ["DEFAULT_SET", "set_symbol", "set_display"]

DEFAULT_SET = "_ZTSv"


def set_symbol(name: str | None) -> str:
    """The IR spelling of the set called ``name`` (None: the default set)."""
    return DEFAULT_SET if name is None else f"_ZTS{len(name)}{name}"


def set_display(ir_name: str) -> str:
    """How a diagnostic names a set: "the default set", or "set 'name'"."""
    if ir_name == DEFAULT_SET:
        return "the default set"
    rest = ir_name[len("_ZTS"):].lstrip("0123456789") if ir_name.startswith("_ZTS") else ir_name
    return f"set '{rest}'"
