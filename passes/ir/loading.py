"""Reading and writing whole modules: LLVM (through the bridge) parses and
verifies, the reader cuts LLVM's printing into a ``Module``."""
from __future__ import annotations

import sys

from ...frontend.collector import gc_paused
from .bridge import BITCODE_MAGIC, IRError, complaint, first_line, in_background, parse_assembly, parse_bitcode
from .module import Module

__all__ = ["load", "parse_text", "render"]


def _verified(parse, data, name: str):
    """``parse`` (LLVM's text or bitcode reader) and verify; our view of LLVM's
    canonical printing and LLVM's module.  Bad IR raises ``IRError`` naming ``name``.
    LLVM's verifier runs on a second thread while Python cuts the printing into
    entities; nothing is returned, and no other error is raised, before it passed."""
    try:
        ref = parse(data)
    except RuntimeError as err:
        raise IRError(f"{name}: {first_line(err)}") from None
    text = str(ref)
    check = in_background(complaint, ref)
    try:
        with gc_paused():
            mod = Module.parse(text, name)
    finally:
        problem = check.result()
        if problem is not None:
            ref.close()     # not left to a collector that may dispose of its context first
            raise IRError(f"{name}: {first_line(problem)}")
    return mod, ref


def parse_text(text: str, name: str = "<input>"):
    """Parse and verify IR text with LLVM: ``(Module, llvmlite ModuleRef)``."""
    return _verified(parse_assembly, text, name)


def load(path: str) -> Module:
    """Read a ``.ll`` or ``.bc`` file (``-`` is standard input), verify it with
    LLVM and return it as a ``Module``."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as fh:
                data = fh.read()
    except OSError as err:
        raise IRError(f"{path}: {err.strerror or err}") from None
    if data[:4] in BITCODE_MAGIC:
        return _verified(parse_bitcode, data, path)[0]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise IRError(f"{path}: not LLVM IR text or bitcode") from None
    return parse_text(text, path)[0]


def render(modules: list[Module], bitcode: bool = False) -> list:
    """Verify every module with LLVM, then return its bitcode or the very text
    LLVM verified: callers write nothing unless all of them are valid."""
    texts = [m.text() for m in modules]
    refs = [m.verify(t) for m, t in zip(modules, texts)]
    return [r.as_bitcode() for r in refs] if bitcode else texts
