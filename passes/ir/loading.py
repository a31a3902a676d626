"""Reading and writing whole modules: LLVM (through the bridge) parses and
verifies, the reader cuts LLVM's printing into a ``Module``.

Bitcode from a file is untrusted and goes through ``bridge.read_bitcode`` (a
child process reads it: LLVM's bitcode reader can abort on corrupt input);
text goes to LLVM's text parser here, which reports every error as
``line:col``."""
from __future__ import annotations

import sys

from ...frontend.collector import gc_paused
from .bridge import BITCODE_MAGIC, IRError, complaint, first_line, in_background, parse_assembly, read_bitcode
from .module import Module

__all__ = ["load", "parse_text", "render", "read_untrusted_bitcode", "bitcode_complaint"]


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


def read_untrusted_bitcode(data: bytes, name: str, cut=None):
    """Bitcode from outside this process, read, verified and printed by LLVM in
    a child process (``bridge.read_bitcode``): ``cut(text)`` (default: the
    ``Module`` of LLVM's printing), cut while the child verifies.  Corrupt or
    invalid bitcode raises one-line ``IRError`` naming ``name``."""
    def as_module(text):
        with gc_paused():
            return Module.parse(text, name)
    result, problem = read_bitcode(data, cut or as_module)
    if problem is not None:
        raise IRError(f"{name}: {bitcode_complaint(problem)}")
    return result


def bitcode_complaint(problem: str) -> str:
    """One line from LLVM's complaint about bitcode: the reader's error without
    its banner, or the verifier's first line."""
    lines = [ln.strip() for ln in problem.splitlines() if ln.strip()]
    if lines and lines[0] == "LLVM bitcode parsing error":
        return "invalid bitcode: " + " ".join(lines[1:2])
    if lines and lines[0].startswith("LLVM's bitcode reader crashed"):
        return "invalid bitcode: " + lines[0]
    return first_line(problem)


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
        return read_untrusted_bitcode(data, path)
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
