"""Function types of indirect call sites, and of functions, read from IR text.

Upstream's dependency graph (``DependencyGraph`` in ``ModuleSplitter.cpp``)
adds an edge from a function that makes an indirect call to every
``"referenced-indirectly"`` function of the call's function type, so a split
image keeps the functions its function pointers may reach.  This module gives
the two facts that needs, as canonical type strings ``"<ret> (<t1>, <t2>)"``:

* ``indirect_call_types(fn)``: the types of the indirect calls in a body.  With
  opaque pointers LLVM prints one as ``call <ret> %callee(<args>)`` (calling
  convention, fast-math flags and return attributes may come before the return
  type; a varargs call spells the full type: ``call i32 (i32, ...) %f(...)``).
  The function type is the return type plus the argument types.
* ``function_type(fn)``: the same string for a function's own signature.

Lines are read as LLVM prints them (one instruction per line); this is a reader
of IR text outside the IR layer (``passes/ir/``) and belongs there eventually.
"""
from __future__ import annotations

import re

from ..passes.ir import Function, split_operands, split_type

__all__ = ["indirect_call_types", "function_type"]

# "call"/"invoke" (with an optional tail-call marker), then everything up to the
# callee, which is a local value: "%name(" or '%"quoted name"('
_CALL = re.compile(r'(?:^|[\s=])(?:(?:tail|musttail|notail) )?(?:call|invoke) (?P<pre>[^\n@]*?)'
                   r'(?P<callee>%(?:"[^"]*"|[-\w$.]+))\(')


def _param_types(params: str) -> list[str]:
    """The types of a parenthesised parameter or argument list (names, values
    and attributes dropped); ``...`` stays as it is."""
    inner = params.strip()[1:-1]
    out = []
    for item in split_operands(inner):
        out.append("..." if item == "..." else split_type(item)[0])
    return out


def _canonical(ret: str, params: list[str]) -> str:
    return f"{' '.join(ret.split())} ({', '.join(' '.join(p.split()) for p in params)})"


def _args_end(line: str, open_at: int) -> int:
    """Index of the parenthesis closing the argument list that opens at ``open_at``."""
    depth, in_str = 0, False
    for i in range(open_at, len(line)):
        ch = line[i]
        if ch == '"':
            in_str = not in_str
        elif in_str:
            continue
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
            if depth == 0:
                return i
    return len(line) - 1


def _return_type(pre: str) -> tuple[str, list[str] | None]:
    """The return type written before the callee (and the parameter types, when
    the call spells a full function type)."""
    pre = pre.strip()
    if pre.endswith(")"):                       # "<ret> (<params>)": a full function type
        depth = 0
        for i in range(len(pre) - 1, -1, -1):
            if pre[i] == ")":
                depth += 1
            elif pre[i] == "(":
                depth -= 1
                if depth == 0:
                    if pre[:i].endswith("addrspace"):   # "ptr addrspace(N)", not a function type
                        break
                    ret, _ = _return_type(pre[:i])
                    return ret, _param_types(pre[i:])
    if pre.endswith(("}", "]", ">")):           # a literal struct, array or vector type
        closer = pre[-1]
        opener = {"}": "{", "]": "[", ">": "<"}[closer]
        depth = 0
        for i in range(len(pre) - 1, -1, -1):
            if pre[i] == closer:
                depth += 1
            elif pre[i] == opener:
                depth -= 1
                if depth == 0:
                    start = i - 1 if closer == "}" and i > 0 and pre[i - 1] == "<" else i   # packed struct
                    return pre[start:], None
    words = pre.split()
    # "ptr addrspace(4)" is one type: keep the address space with its "ptr"
    if len(words) >= 2 and words[-1].startswith("addrspace(") and words[-2] == "ptr":
        return " ".join(words[-2:]), None
    return (words[-1] if words else ""), None


def indirect_call_types(fn: Function) -> set[str]:
    """The function types of the indirect calls (and invokes) in ``fn``'s body."""
    body = fn.body or ""
    if "%" not in body or ("call " not in body and "invoke " not in body):
        return set()
    out = set()
    for line in body.splitlines():
        m = _CALL.search(line)
        if m is None:
            continue
        ret, params = _return_type(m.group("pre"))
        if params is None:
            open_at = m.end() - 1
            params = _param_types(line[open_at:_args_end(line, open_at) + 1])
        out.add(_canonical(ret, params))
    return out


def function_type(fn: Function) -> str:
    """``fn``'s own type in the form ``indirect_call_types`` gives."""
    return _canonical(fn.return_type, _param_types(fn.params))
