"""Reading and writing whole modules: LLVM (through the bridge) parses and
verifies, the reader cuts LLVM's printing into a ``Module``.

Bitcode from a file is untrusted and goes through ``bridge.read_bitcode`` (a
child process reads it: LLVM's bitcode reader can abort on corrupt input);
text goes to LLVM's text parser here, which reports every error as
``file:line:col: error: ...``.

Which IR loads: text and bitcode from LLVM 15 on (opaque pointers, ``ptr``).
Older IR with typed pointers (``i32*``, ``i8 addrspace(1)*``): bitcode of any
LLVM release loads (LLVM's bitcode reader upgrades it to opaque pointers, and
old intrinsic names such as ``llvm.memset.p1i8.i64`` with it); text loads where
LLVM's text parser still takes each ``T*`` as ``ptr``, and fails where the
syntax itself changed (``load i32* %p`` of LLVM < 3.7, typed pointers inside
metadata such as ``!{void (i32*)* @k}``, ``byval`` without a type): that error
says the file uses typed pointers from LLVM < 15 and where
(``tests/passes/test_typed_pointers.py``)."""
from __future__ import annotations

import re
import sys

from ..support.gc_pause import gc_paused
from ..support.inputs import read_input
from .bridge import (BITCODE_MAGIC, IRError, close_in_background, complaint, first_line, in_background, link_assembly,
                     parse_and_verify, parse_assembly, read_bitcode)
from .module import Module
from .speculation import Abandoned, InputCheck, speculating, worth_speculating

__all__ = ["load", "load_and_run", "parse_text", "verify_and_serialize", "link", "verify_generated", "InternalCompilerError", "read_untrusted_bitcode", "bitcode_complaint", "text_error",
           "first_typed_pointer"]


def _verified(parse, data, name: str):
    """``parse`` (LLVM's text or bitcode reader) and verify; our view of LLVM's
    canonical printing and LLVM's module.  Bad IR raises ``IRError`` naming ``name``.
    LLVM's verifier runs on a second thread while Python cuts the printing into
    entities; nothing is returned, and no other error is raised, before it passed."""
    try:
        ref = parse(data)
    except RuntimeError as err:
        raise text_error(name, str(err), data if isinstance(data, str) else None) from None
    text = str(ref)
    check = in_background(complaint, ref)
    try:
        with gc_paused():
            mod = Module.parse(text, name)
    finally:
        problem = check.result()
        if problem is not None:
            ref.close()     # not left to a collector that may dispose of its context first
            raise verifier_error(name, problem, data if isinstance(data, str) else None)
    return mod, ref


_LLVM_AT = re.compile(r"<string>:(\d+):(\d+): error: (.*)")


def text_error(name: str, problem: str, text: str | None = None) -> IRError:
    """The ``IRError`` for LLVM's text parser's complaint: ``name:line:col:
    error: message``, and, where ``text`` has typed pointers, that this is IR
    from before LLVM 15."""
    m = _LLVM_AT.search(problem)
    if m is None:
        return IRError(f"{name}: {first_line(problem)}")
    message = m.group(3)
    typed = first_typed_pointer(text) if text is not None else None
    if typed is not None:
        line, col, spelling = typed
        message += (f" (the file uses typed pointers, as LLVM < 15 wrote IR: '{spelling}' at {line}:{col}; "
                    f"minisycl needs LLVM 15+ IR with opaque pointers, 'ptr')")
    return IRError(f"{name}:{m.group(1)}:{m.group(2)}: error: {message}", located=True)


def verifier_error(name: str, problem: str, text: str | None = None) -> IRError:
    """The ``IRError`` for LLVM's verifier's complaint (its first lines).  The
    verifier names no place, but prints the offending instruction or global:
    where ``text`` has that line exactly once, the error points at it."""
    lines = [ln.strip() for ln in problem.splitlines() if ln.strip()]
    message = "invalid module: " + " ".join(lines[:2])
    if text is not None:
        for printed in lines[1:3]:
            found = [(i, ln.index(printed)) for i, ln in enumerate(text.splitlines(), 1)
                     if ln.split(";", 1)[0].strip() == printed]
            if len(found) == 1:
                (line, col), = found
                return IRError(f"{name}:{line}:{col + 1}: error: {message}", located=True)
    return IRError(f"{name}: {message}")


_TYPED_SPELLING = re.compile(r'(?:%"[^"]*"|[\w.%$-]+|\))(?:\s*addrspace\s*\(\s*\d+\s*\))?\s*\*$')


def first_typed_pointer(text: str) -> tuple[int, int, str] | None:
    """Where ``text`` first uses a typed pointer (``i32*``, ``i8 addrspace(1)*``,
    ``void (i32)*``): ``(line, column, spelling)``, or None.  In LLVM 15+ IR a
    ``*`` outside strings and comments appears nowhere else."""
    for lineno, line in enumerate(text.splitlines(), 1):
        if "*" not in line:
            continue
        quoted = False
        for col, ch in enumerate(line):
            if ch == '"':
                quoted = not quoted
            elif not quoted and ch == ";":
                break
            elif not quoted and ch == "*":
                m = _TYPED_SPELLING.search(line[:col + 1])
                return lineno, col + 1, m.group(0) if m else "*"
    return None


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


def _read(path: str) -> tuple[str, bytes | str]:
    """``(name, contents)`` of a ``.ll`` or ``.bc`` file (``-``: standard
    input): bitcode as bytes, text as a str (UTF-8, checked)."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            data = read_input(path, what="IR file")
    except OSError as err:
        raise IRError(f"{path}: {err.strerror or err}") from None
    name = "<stdin>" if path == "-" else path
    if not data.strip():
        raise IRError(f"{name}: empty file: expected LLVM IR text or bitcode")
    if data[:4] in BITCODE_MAGIC:
        return name, data
    try:
        return name, data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        col = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise IRError(f"{name}:{line}:{col}: error: not LLVM IR text or bitcode "
                      f"(byte 0x{data[err.start]:02x} is not UTF-8)", located=True) from None


def _module_of(name: str, data: bytes | str) -> Module:
    if isinstance(data, bytes):
        return read_untrusted_bitcode(data, name)
    mod, ref = parse_text(data, name)
    close_in_background(ref)
    return mod


def load(path: str) -> Module:
    """Read a ``.ll`` or ``.bc`` file (``-`` is standard input), verify it with
    LLVM and return it as a ``Module``."""
    return _module_of(*_read(path))


def load_and_run(path: str, work, speculate: bool = True):
    """``work(load(path))``, where ``work`` may start before LLVM's verdict on
    the input (``speculation.py``): text that LLVM printed itself is cut as it
    is while LLVM parses, prints and verifies it beside ``work``.  The result
    is the same in every way: an invalid input raises its ``IRError`` (whatever
    ``work`` did or raised meanwhile), ``work``'s errors are raised only for a
    valid input, and where LLVM's printing turns out to differ from the text
    ``work`` runs again on it.  So ``work`` must have no effect but its result
    and its errors (no output, no printing: ``speculate=False`` for such work)."""
    name, data = _read(path)
    if isinstance(data, bytes) or not speculate or not worth_speculating(data):
        return work(_module_of(name, data))
    check = InputCheck(data)
    try:
        done, result = _speculate(check, name, work)
    finally:
        check.close()           # (after the work's own LLVM calls: freeing delays none of them)
    if done:
        return result
    verdict = check.result()
    if verdict.stopped is not None:
        raise IRError(f"{name}: {verdict.stopped}")
    if verdict.parse_error is not None:
        raise text_error(name, verdict.parse_error, data)
    if verdict.verify_problem is not None:
        raise verifier_error(name, verdict.verify_problem, data)
    with gc_paused():
        mod = Module.parse(verdict.printing, name)
    return work(mod)


def _speculate(check: InputCheck, name: str, work) -> tuple[bool, object]:
    """``work`` on ``check``'s text as given: ``(True, its result)`` where
    LLVM's verdict confirms it (its error raised, where it raised one), else
    ``(False, None)``."""
    try:
        with gc_paused():
            mod = Module.parse(check.text, name)
        with speculating(check):
            result = work(mod)
    except Abandoned:
        return False, None
    except Exception:       # noqa: BLE001 - the work's error stands only for a valid input
        if check.result().confirms:
            raise
        return False, None
    return check.result().confirms, result


def verify_and_serialize(modules: list[Module], bitcode: bool = False) -> list:
    """Verify every module with LLVM, then return its bitcode or the very text
    LLVM verified: callers write nothing unless all of them are valid."""
    if bitcode:
        return [m.bitcode() for m in modules]
    texts = [m.text() for m in modules]
    refs = []
    try:
        for m, t in zip(modules, texts):
            refs.append(m.verify(t))
    finally:
        for ref in refs:        # after all: freeing one module delays no other's verification
            close_in_background(ref)
    return texts


def link(texts: list[str], inputs: list[str], name: str | None = None):
    """LLVM's plain linker over IR texts (``inputs``: their names, for the
    error): LLVM's verified module, named ``name`` when given.  A failure
    (a symbol defined twice, types that do not match) raises one-line
    ``IRError`` naming the inputs.  The SYCL-aware ``minisycl link`` (its own
    duplicate and unresolved-reference errors) is ``passes/link.py``, over this."""
    ref, problem = link_assembly(texts, name)
    if problem is not None:
        raise IRError(f"cannot link {', '.join(inputs)}: {problem.strip().splitlines()[0]}")
    return ref


class InternalCompilerError(Exception):
    """A tool of ours produced IR that LLVM rejects: a bug in minisycl, not in the input."""


def verify_generated(text: str, name: str):
    """LLVM's verified module of IR text this process generated (the front end's
    output), named ``name``; LLVM rejecting it raises ``InternalCompilerError``."""
    ref, problem = parse_and_verify(text, name)
    if problem is not None:
        raise InternalCompilerError(f"{name}: LLVM rejected the generated IR: {problem}")
    return ref
