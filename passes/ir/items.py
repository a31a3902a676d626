"""The value of a kernel's work-item parameter, as launchers and lowerings build it.

A kernel's first parameter, when it has one, is an ``id<N>`` (one ``[N x i64]``
field) or an ``nd_item<N>`` (five: global id, local id, group, global range,
local range; ``frontend/data_layout.py``'s ``ND_ITEM_FIELDS``) passed by value.
The CPU launcher (``runtime/jit.py``), the work-group lowering
(``passes/work_item_loops.py``) and the NVPTX entry points
(``passes/lower_to_nvptx.py``) all build it from per-dimension ``i64`` values.
"""
from __future__ import annotations

__all__ = ["build_item"]


def build_item(item_type: str, fields: list[list[str]], prefix: str, result: str) -> list[str]:
    """IR lines that make ``%result``, a value of ``item_type``, from ``fields``
    (each field's values, dimension 0 first); temporaries are ``%<prefix>.…``."""
    arr = f"[{len(fields[0])} x i64]"
    lines, item = [], "undef"
    for k, values in enumerate(fields):
        field = "undef"
        for d, v in enumerate(values):
            lines.append(f"  %{prefix}.f{k}.{d} = insertvalue {arr} {field}, i64 {v}, {d}")
            field = f"%{prefix}.f{k}.{d}"
        name = result if k == len(fields) - 1 else f"{prefix}.i{k}"
        lines.append(f"  %{name} = insertvalue {item_type} {item}, {arr} {field}, {k}")
        item = f"%{name}"
    return lines
