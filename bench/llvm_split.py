"""LLVM's own in-memory way of cutting one device image out of a module.

Per image: clone the whole module, give every definition that is not one of
the image's entry points internal linkage (the ``llvm.*`` globals keep
theirs), and let LLVM's GlobalDCE delete whatever nothing live reaches.  This
is what ``ModuleDesc::cleanup`` in upstream ``sycl-post-link`` ends with
(``InternalizePass`` + ``GlobalDCEPass``), without its own dependency graph.

Two users: ``bench_postlink.py`` times it beside ``minisycl post-link``, and
``tests/postlink/test_differential.py`` uses it as the reference for which
functions and globals an image must define.
"""
from __future__ import annotations

import functools
import re

import llvmlite.binding as llvm

__all__ = ["keep_only", "defined_names", "used_members", "parse"]

#: linkages that are already local: nothing to internalize
_LOCAL = {llvm.Linkage.internal, llvm.Linkage.private}
#: linkages GlobalDCE deletes a definition of when nothing uses it
_DISCARDABLE = _LOCAL | {llvm.Linkage.linkonce_any, llvm.Linkage.linkonce_odr}


@functools.lru_cache(maxsize=None)
def _pass_builder():
    """A pass builder for the host target (GlobalDCE does not care which one)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    tm = llvm.Target.from_default_triple().create_target_machine()
    return llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options())


def parse(text: str) -> llvm.ModuleRef:
    """LLVM's text reader and verifier (``RuntimeError`` on invalid IR).  The
    module lives in LLVM's global context: a context of its own could be
    collected before the module when both end up in a reference cycle (a
    traceback's frames), and disposing of the module then crashes."""
    ref = llvm.parse_assembly(text)
    ref.verify()
    return ref


def keep_only(module: llvm.ModuleRef, entries, preserve=()) -> llvm.ModuleRef:
    """A clone of ``module`` in which only ``entries`` (names) and what they
    reach are defined: everything else defined is internalized, then GlobalDCE
    runs.  An entry stays whatever its linkage (a local or ``linkonce`` one is
    made external in the clone, or GlobalDCE would delete it when nothing uses it).
    ``preserve``: names Internalize leaves as they are (upstream's
    ``mustPreserveGV``), which GlobalDCE keeps only when their linkage is not
    discardable or something live uses them.  ``module`` itself is left as it was."""
    keep, preserve = set(entries), set(preserve)
    clone = module.clone()
    for value in list(clone.functions) + list(clone.global_variables):
        if value.is_declaration or value.name.startswith("llvm."):
            continue
        if value.name in preserve and value.name not in keep:
            continue
        if value.name in keep:
            if value.linkage in _DISCARDABLE:
                value.linkage = llvm.Linkage.external
        elif value.linkage not in _LOCAL:
            value.linkage = llvm.Linkage.internal
            value.visibility = llvm.Visibility.default     # a local symbol has default visibility
    pm = llvm.create_new_module_pass_manager()
    pm.add_global_dead_code_eliminate_pass()
    pm.run(clone, _pass_builder())
    return clone


def defined_names(module: llvm.ModuleRef) -> tuple[set[str], set[str]]:
    """(defined functions, defined global variables other than ``llvm.*``)."""
    functions = {f.name for f in module.functions if not f.is_declaration}
    variables = {g.name for g in module.global_variables
                 if not g.is_declaration and not g.name.startswith("llvm.")}
    return functions, variables


_NAME = re.compile(r'@("(?:[^"\\]|\\[0-9A-Fa-f]{2}|\\\\)*"|[-a-zA-Z$._0-9]+)')


def _unescape(token: str) -> str:
    if not token.startswith('"'):
        return token
    out = bytearray()
    body, i = token[1:-1].encode(), 0
    while i < len(body):
        if body[i:i + 1] == b"\\" and body[i + 1:i + 2] == b"\\":
            out += b"\\"
            i += 2
        elif body[i:i + 1] == b"\\":
            out.append(int(body[i + 1:i + 3], 16))
            i += 3
        else:
            out.append(body[i])
            i += 1
    return out.decode("utf-8", "surrogateescape")


def used_members(module: llvm.ModuleRef, name: str = "llvm.compiler.used") -> set[str]:
    """Names in ``@llvm.compiler.used`` (or another list), read from LLVM's own
    printing of that one global (llvmlite gives no access to initialisers)."""
    for g in module.global_variables:
        if g.name == name:
            return {_unescape(t) for t in _NAME.findall(str(g).split("=", 1)[1])}
    return set()
