"""Compile LLVM IR for this CPU and keep the engines that hold the code.

* ``shared_machine()``: the target machine that gives triple, data layout and
  the optimisation pipeline; ``new_machine()`` one for each execution engine.
* ``compile_ir``: verify, optimise at -O3 and compile IR text with MCJIT, with
  an object cache on disk (``<cache dir>/objects/<key>.o``) keyed by the IR,
  the CPU and the options, so a new process skips LLVM's code generation.
* ``keep_context`` / ``close_engine``: the order in which an engine and its
  LLVM context go away (see ``keep_context``).

Module work (parse, verify, optimise, print) goes through the IR layer's
bridge (``minisycl.passes.ir``); machines and engines are made here.
"""
from __future__ import annotations

import atexit
import hashlib
import os
import threading

import llvmlite.binding as llvm

from ..passes.ir import complaint, new_context, parse_and_link, retarget, run_optimizer
from ..passes.support import knobs
from .errors import errc, exception

__all__ = ["shared_machine", "new_machine", "compile_ir", "jit_module", "keep_context", "close_engine", "EXITING"]

_OPT_LEVEL = 3
_init = threading.Lock()
_initialised = False
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
    global _initialised
    if not _initialised:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        _initialised = True
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(),
                                        opt=_OPT_LEVEL, reloc="default", codemodel="jitdefault")


def compile_ir(text: str, what: str):
    """Verify, optimise and compile IR ``text`` for this CPU, reusing the disk
    cache's object when it has one.  Returns ``(engine, context, key, from_disk)``;
    the caller keeps the context alive (``keep_context``)."""
    machine = shared_machine()
    key = hashlib.sha256("\n".join([text, machine.triple, llvm.get_host_cpu_name(),
                                    llvm.get_host_cpu_features().flatten(), str(_OPT_LEVEL),
                                    "minisycl-jit-1"]).encode()).hexdigest()
    context = new_context()
    try:
        mod = parse_and_link([text], context)
    except RuntimeError as err:
        raise exception(errc.build, f"{what} failed to build: {str(err).strip()}") from None
    retarget(mod, machine)
    problem = complaint(mod)
    if problem is not None:
        mod.close()             # before its context (the garbage collector's order can crash)
        raise exception(errc.build, f"{what} failed to build: {problem.strip()}")
    cache = _DiskCache(key)
    from_disk = cache.has()
    if not from_disk:
        run_optimizer(mod, machine, _OPT_LEVEL)
    engine = llvm.create_mcjit_compiler(mod, new_machine())
    engine.set_object_cache(cache.notify, cache.get)
    engine.finalize_object()
    return engine, context, key, from_disk


def jit_module(text: str):
    """An engine for IR ``text`` that LLVM printed (verified already), compiled
    as it is: ``(engine, context)``; the caller keeps the context alive."""
    context = new_context()
    mod = parse_and_link([text], context)
    retarget(mod, shared_machine())
    engine = llvm.create_mcjit_compiler(mod, new_machine())
    engine.finalize_object()
    return engine, context


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


class _DiskCache:
    """MCJIT object cache: ``<cache dir>/objects/<key>.o``."""

    def __init__(self, key: str):
        d = knobs.cache_dir()
        self.path = os.path.join(d, "objects", key + ".o") if d else None

    def has(self) -> bool:
        return self.path is not None and os.path.isfile(self.path)

    def get(self, module):
        if self.has():
            with open(self.path, "rb") as fh:
                return fh.read()
        return None

    def notify(self, module, data: bytes):
        if self.path is None:
            return
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            tmp = f"{self.path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, self.path)
        except OSError:
            pass            # a read-only or full cache directory only costs speed
