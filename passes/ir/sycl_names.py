"""How DPC++'s IR conventions spell SYCL names, and how diagnostics show them.

A virtual-function set is named in ``"indirectly-callable"`` / ``"calls-indirectly"``
by ``__builtin_sycl_unique_stable_name`` of a type: ``_ZTSv`` for the default
set (``void``), ``_ZTS<length><name>`` for a set named ``name``.  Diagnostics
never show that spelling.

minisycl's own run-time hook: a failed ``assert``, or a call of a host-only
virtual method's stub, calls ``void @__minisycl_assert_fail(ptr message)``.
The CPU runtime provides it as a process symbol (``runtime/assertions.py``);
on an NVIDIA GPU ``lower-to-nvptx`` defines it to keep the first message's
address in the module's ``i64 @__minisycl_assert_message``, which the runtime
reads after the kernels (``runtime/cuda/queue.py``).
"""
from __future__ import annotations


__all__ = ["DEFAULT_SET", "set_symbol", "set_display", "ASSERT_FAIL", "ASSERT_MESSAGE"]

DEFAULT_SET = "_ZTSv"
ASSERT_FAIL = "__minisycl_assert_fail"
ASSERT_MESSAGE = "__minisycl_assert_message"


def set_symbol(name: str | None) -> str:
    """The IR spelling of the set called ``name`` (None: the default set)."""
    return DEFAULT_SET if name is None else f"_ZTS{len(name)}{name}"


def set_display(ir_name: str) -> str:
    """How a diagnostic names a set: "the default set", or "set 'name'"."""
    if ir_name == DEFAULT_SET:
        return "the default set"
    rest = ir_name[len("_ZTS"):].lstrip("0123456789") if ir_name.startswith("_ZTS") else ir_name
    return f"set '{rest}'"


