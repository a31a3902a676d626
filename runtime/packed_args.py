"""Kernels with many parameters read them from the argument slots themselves.

A launcher (``jit._loop_ir``) normally loads each argument from its 8-byte slot
and calls the kernel with them.  LLVM's optimiser and code generator both grow
with the square of a call's argument count when the callee is defined in the
module (2,000 arguments: ~2.5 s at -O1, ~3.5 s of instruction selection for a
call that is not inlined), so a kernel of 10,000 parameters took ~20 s to
launch the first time.  For a kernel of more than ``PACK_ABOVE`` parameters
this module rewrites the kernel, in the linked module, to take ``(item, ptr
%args)``: its entry block loads each parameter, under its own name, from the
same slot the launcher would have read, so its body is unchanged and the call
has at most two arguments.  Linear in the parameter count.

Only kernels whose parameters are plainly named values without ABI attributes
(``byval``, ``sret``, ...) and that nothing else in the module calls are
rewritten; any other kernel keeps the ordinary call (``pack_kernel`` returns
``False``).
"""
from __future__ import annotations

import re

from ..passes.ir import Module, split_operands, split_type

__all__ = ["PACK_ABOVE", "ARGS", "pack_kernel"]

#: kernels with more parameters (the item excluded) take them through memory
PACK_ABOVE = 16
#: the rewritten kernel's pointer to the argument slots
ARGS = "%__minisycl_args"

_ABI = ("byval", "sret", "inalloca", "preallocated", "byref", "inreg", "swift", "nest", "returned")
_NAME = re.compile(r"%[A-Za-z$._][A-Za-z$._0-9]*\Z")
_LABEL = re.compile(r"[A-Za-z$._0-9-]+:")


def pack_kernel(module: Module, name: str, item: bool) -> bool:
    """Rewrite kernel ``name`` of ``module`` to take ``(item?, ptr %args)`` and load
    its other parameters from 8-byte slot ``i`` of ``%args``.  ``False`` (the
    module unchanged) when the kernel does not qualify (see the module docstring)."""
    fn = module.functions[name]
    if fn.is_declaration or ARGS in fn.body or module.users().get(name, set()) - {name}:
        return False
    params = fn.params
    ops = split_operands(params[1:-1])
    kept, loads = ops[:1] if item else [], []
    for i, op in enumerate(ops[1:] if item else ops):
        ty, rest = split_type(op)
        words = rest.split()
        if not words or not _NAME.match(words[-1]) or any(w.startswith(_ABI) for w in words):
            return False
        loads += [f"  %__minisycl_slot{i} = getelementptr i64, ptr {ARGS}, i64 {i}",
                  f"  {words[-1]} = load {ty}, ptr %__minisycl_slot{i}, align 8"]
    if len(loads) // 2 <= PACK_ABOVE:
        return False
    at = fn.header.find(params)
    header = fn.header[:at] + "(" + ", ".join(kept + [f"ptr {ARGS}"]) + ")" + fn.header[at + len(params):]
    body = fn.body
    first = body.lstrip("\n").split("\n", 1)[0]
    if _LABEL.match(first.strip()) and not first.strip().startswith(";"):
        cut = body.index(first) + len(first) + 1        # after the entry block's label
    else:
        cut = 0
    body = body[:cut] + "\n".join(loads) + "\n" + body[cut:]
    module.functions[name] = type(fn)(name, header, body)
    return True
