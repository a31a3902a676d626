"""SYCL-aware linking of several modules into one (``minisycl link``), over the
IR layer's plain linker (``passes.ir.link``, which the front end's multi-source
compile uses as it is).

LLVM's linker resolves ``SYCL_EXTERNAL`` functions and ``SYCL_EXTERNAL extern
device_global`` declarations by name.  Before it runs, two checks give the
errors a SYCL user expects, naming the symbol and the files:

1. a symbol with a strong definition (external linkage, not ``linkonce``/``weak``
   /``common``) in two inputs is a duplicate definition;
2. after linking, a declaration that device code still reaches (from kernels,
   ``SYCL_EXTERNAL`` and ``indirectly-callable`` functions, through calls and
   references, skipping ``if_host`` helpers and host-only virtual methods
   that only vtables reach: ``host_only_virtuals.device_closure``) is an
   unresolved device-side reference.  LLVM intrinsics, SPIR-V/device-library builtins and host-only
   functions are exempt.

Named metadata that every input carries (``!sycl_aspects``) is listed once.
"""
from __future__ import annotations

import re

from ..passes.support.diagnostics import CompileError, Diagnostic
from . import ir
from .ir import Module
from .host_only_virtuals import device_closure
from .split_if_device import call_if_helpers, device_roots
from .support.ir_contract import CALL_IF_ON_HOST, HOST_ONLY

_EXEMPT = re.compile(r'llvm\.|_Z\d+__(?:spirv|sycl|esimd)_|__spirv|__devicelib_|__builtin_|__assert')


def link(modules: list[Module], name: str = "linked") -> Module:
    """One module from several; raises ``CompileError`` naming symbols and files."""
    errors = []
    owner: dict[str, str] = {}
    for m in modules:
        for sym in m.strong_definitions():
            if sym in owner:
                errors.append(Diagnostic("error", None, f"duplicate definition of '{sym}' in {owner[sym]} and {m.name}"))
            else:
                owner[sym] = m.name
    if errors:
        raise CompileError(errors)
    out = ir.link([m.text() for m in modules], [m.name for m in modules])
    linked = Module.parse(str(out), name)
    for key, line in linked.named_metadata.items():
        head, _, body = line.partition(" = ")
        refs = list(dict.fromkeys(r.strip() for r in body[2:-1].split(",") if r.strip()))
        linked.named_metadata[key] = f"{head} = !{{{', '.join(refs)}}}"
    _check_unresolved(linked, modules)
    return linked


def _check_unresolved(linked: Module, inputs: list[Module]) -> None:
    reach, _ = device_closure(linked, device_roots(linked), call_if_helpers(linked, CALL_IF_ON_HOST))
    errors = []
    for sym in reach:
        ent = linked.entity(sym)
        if not ent.is_declaration or _EXEMPT.match(sym):
            continue
        if ent.kind == "function" and HOST_ONLY in linked.function_attributes(ent):
            continue
        users = [m.name for m in inputs if sym in m.users()]
        where = f" (referenced from {', '.join(users)})" if users else ""
        errors.append(Diagnostic("error", None, f"unresolved device-side reference to '{sym}'{where}: "
                                                f"no input defines it"))
    if errors:
        raise CompileError(errors)
