"""Compile LLVM IR for this CPU and keep the engines that hold the code.

* ``shared_machine()``: the target machine that gives triple, data layout and
  the optimisation pipeline; ``new_machine()`` one for each execution engine.
* ``compile_ir``: verify, optimise at -O3 and compile IR text with MCJIT, code
  generation in a child process (an abort of LLVM's cannot end this one), with
  an object cache on disk (``<cache dir>/objects/<key>.o``, entries checked
  before use: ``disk_cache.py``) keyed by the IR, the CPU and the options, so
  a new process skips LLVM's code generation.
* ``keep_context`` / ``close_engine``: the order in which an engine and its
  LLVM context go away (see ``keep_context``).

Module work (parse, verify, optimise, print) goes through the IR layer's
bridge (``minisycl.passes.ir``); machines and engines are made here.
"""
from __future__ import annotations

import atexit
import functools
import hashlib
import os
import threading

import llvmlite.binding as llvm

from ..passes.ir import IRError, complaint, host_machine, in_child, new_context, parse_and_link, retarget, run_optimizer
from ..passes.support import knobs
from .disk_cache import read_entry, write_entry
from .errors import errc, exception

__all__ = ["shared_machine", "new_machine", "compile_ir", "jit_module", "keep_context", "close_engine", "EXITING",
           "with_stack_probes"]

_OPT_LEVEL = 3
_init = threading.Lock()
_machine = None


def shared_machine():
    """The shared machine that gives triple, data layout and the pass pipeline
    (never handed to an engine)."""
    global _machine
    with _init:
        if _machine is None:
            _machine = new_machine()
    return _machine


def new_machine():
    """A target machine for one execution engine: MCJIT takes ownership of the
    machine it is given and destroys it with the engine, so engines never share one."""
    return host_machine(cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(),
                        opt=_OPT_LEVEL, reloc="default", codemodel="jitdefault")


def compile_ir(text: str, what: str, *, optimize: bool = True, trusted: bool = False):
    """Verify, optimise (``optimize``: at -O3) and compile IR ``text`` for this
    CPU, reusing the disk cache's object when it has a whole one.  Returns
    ``(engine, context, key, from_disk)``; the caller keeps the context alive
    (``keep_context``).

    Code generation runs in a forked child (``passes.ir.in_child``) that
    returns the object: LLVM aborts on what its back end cannot do (inline
    assembly, an intrinsic nothing selects, no memory left), and that ends the
    child, which becomes ``errc::build`` with LLVM's message.  ``trusted`` (the
    runtime's own code) compiles here.  The engine loads the object, from the
    child or the disk cache, as it is: no Python callback runs inside LLVM
    (one interrupted by Ctrl-C would lose the interrupt, or the object)."""
    machine = shared_machine()
    key = hashlib.sha256("\n".join([text, machine.triple, llvm.get_host_cpu_name(),
                                    llvm.get_host_cpu_features().flatten(), str(_OPT_LEVEL if optimize else 0),
                                    "minisycl-jit-2"]).encode()).hexdigest()
    path = _cache_path(key)
    obj = read_entry(path)              # checked: a damaged entry is a miss (disk_cache.py)
    from_disk = obj is not None
    if obj is None:
        obj = _generate(text, what, optimize, trusted)
        write_entry(path, obj)
    context = new_context()
    empty = parse_and_link([""], context)
    retarget(empty, machine)
    engine = llvm.create_mcjit_compiler(empty, new_machine())
    engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
    engine.finalize_object()
    return engine, context, key, from_disk


def _generate(text: str, what: str, optimize: bool, trusted: bool) -> bytes:
    """The object code of IR ``text`` (verified first): see ``compile_ir``."""
    machine = shared_machine()
    context = new_context()
    try:
        mod = parse_and_link([text], context)
    except RuntimeError as err:
        raise exception(errc.build, f"{what} failed to build: {str(err).strip()}") from None
    try:
        retarget(mod, machine)
        problem = complaint(mod)
        if problem is not None:
            raise exception(errc.build, f"{what} failed to build: {problem.strip()}")
        work = functools.partial(_object_code, mod, optimize)
        try:
            return work() if trusted else in_child(work, what)
        except IRError as err:
            raise exception(errc.build, f"{err} (while compiling it for this CPU)") from None
    finally:
        mod.close()             # before its context (the garbage collector's order can crash)


def _object_code(mod, optimize: bool) -> bytes:
    """Optimise ``mod`` and emit its object code for the JIT's machine."""
    machine = shared_machine()
    if optimize:
        run_optimizer(mod, machine, _OPT_LEVEL)
    return machine.emit_object(mod)


#: the function attribute that makes a frame larger than a page touch each page
#: as it grows (clang's -fstack-clash-protection): a kernel's huge local array
#: then faults on the stack's guard page, never writes past it into whatever is
#: mapped below (another thread's stack, USM); the fault guard reports it
STACK_PROBES = {"probe-stack": "inline-asm"}


def with_stack_probes(module) -> None:
    """Give every function ``module`` (the IR layer's ``Module``) defines
    ``STACK_PROBES``; LLVM's inliner gives them to the callers it inlines into."""
    for name, fn in module.functions.items():
        if not fn.is_declaration:
            module.update_function_attributes(name, STACK_PROBES)


def jit_module(text: str):
    """An engine for IR ``text`` that LLVM printed, compiled as it is (no
    optimisation; ``compile_ir``'s child and disk cache): ``(engine, context)``;
    the caller keeps the context alive."""
    engine, context, _, _ = compile_ir(text, "host module", optimize=False)
    return engine, context


def _cache_path(key: str) -> str | None:
    folder = knobs.cache_dir()
    return os.path.join(folder, "objects", key + ".o") if folder else None


#: id(owner) -> the LLVM context of its engine's module
_CONTEXTS: dict[int, object] = {}


def keep_context(owner, context) -> None:
    """Keep ``context`` alive until ``owner`` has closed its engine.

    Disposing a context deletes its modules; if Python's cycle collector
    finalised the context before the engine, the engine would delete its module
    a second time.  Held here, a context is released only by ``close_engine``,
    after the engine is gone, whatever order the collector picks."""
    _CONTEXTS[id(owner)] = context


class _Exiting:
    """Set when the interpreter starts to exit: from then on engines are left to
    the process's end (its module globals are going away, and the code of a kept
    program must stay until the last thread is gone)."""
    now = False


EXITING = _Exiting
atexit.register(setattr, _Exiting, "now", True)


def close_engine(owner) -> None:
    engine = getattr(owner, "engine", None)
    if engine is not None and not engine.closed:
        engine.close()
    owner.engine = None
    _CONTEXTS.pop(id(owner), None)
