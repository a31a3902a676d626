"""The llvmlite bridge: the only code that hands modules to ``llvmlite.binding``.

LLVM parses (text or bitcode), verifies and prints; everything else about a
module is read from LLVM's printing by the reader in this package.  Work that
can run beside Python (verification: llvmlite lets go of the GIL inside LLVM)
goes to one background thread.

Untrusted bitcode never reaches LLVM in this process.  LLVM's bitcode reader
trusts its input: on some corrupt files it fails an assertion or reads out of
bounds and takes the whole process down (one random byte mutation in fifteen
to twenty did so), where its text parser reports every error.  ``read_bitcode``
therefore reads bitcode in a forked child that parses, prints and verifies it
and streams LLVM's printing back through a pipe; a child that dies becomes one
``IRError``.  Paths and their trust:

* files and standard input (``loading.load``) and bundle images and host
  modules at run time (``runtime/``): untrusted, always through ``read_bitcode``;
* bitcode this process made itself (``verify_and_serialize``'s ``as_bitcode``, the frontend's
  output, images ``postlink/native.py`` compiles to native code right after
  the build made them): trusted, LLVM's reader in process (``parse_bitcode``).
"""
from __future__ import annotations

import contextlib
import faulthandler
import functools
import os
import re
import signal
import struct
import tempfile
import threading
import warnings
from concurrent.futures import Future, ThreadPoolExecutor

try:
    import resource
except ImportError:         # not on this platform: the child then keeps the core-dump limit
    resource = None

import llvmlite.binding as llvm
import numpy as np

from ..support import knobs
from ..support.diagnostics import UserError

__all__ = ["IRError", "parse_and_verify", "complaint", "in_background", "parse_assembly", "parse_bitcode",
           "link_assembly", "verified_bitcode", "close_in_background", "first_line", "settled", "await_before_llvm", "BITCODE_MAGIC", "read_bitcode", "inline_and_simplify", "value_types"]

BITCODE_MAGIC = (b"BC\xc0\xde", b"\xde\xc0\x17\x0b")


class IRError(UserError):
    """The input is not valid LLVM IR (or cannot be read); the message is one line.

    ``located``: the message is a diagnostic of its own, ``file:line:col:
    error: ...`` (LLVM's text parser pointed at the place), which the CLI prints
    as it is, as LLVM's tools and the frontend print theirs."""

    def __init__(self, message: str, located: bool = False):
        super().__init__(message)
        self.located = located

    def render(self) -> str:
        return str(self) if self.located else super().render()


#: the deepest nesting of brackets (types, constants, metadata) one line of IR
#: text may have: LLVM's recursive-descent parser overflows its stack near
#: 20,000 levels and takes the process down (SIGSEGV), so deeper text is refused
#: before LLVM reads it; LLVM itself prints nothing near this deep
MAX_NESTING = 1000
_BRACKET_DELTA = np.zeros(256, np.int8)
_BRACKET_DELTA[list(b"([{<")] = 1
_BRACKET_DELTA[list(b")]}>")] = -1
#: bytes of one line looked at at once: a long line (a string constant of
#: megabytes) costs a chunk's running depths, not eight bytes per byte of text
_CHUNK = 1 << 20


def check_nesting(text: str) -> None:
    """``RuntimeError`` (as for any bad text) naming the line of ``text`` whose
    brackets nest deeper than ``MAX_NESTING``; linear in the text (NumPy), and
    only lines long enough to nest that deep are looked at."""
    if len(text) < MAX_NESTING:
        return
    data = np.frombuffer(text.encode("utf-8", "surrogateescape"), np.uint8)
    ends = np.append(np.flatnonzero(data == 10), len(data))
    starts = np.concatenate(([0], ends[:-1] + 1))
    for i in np.flatnonzero(ends - starts >= MAX_NESTING):
        depth = _deepest(data[starts[i]:ends[i]])
        if depth > MAX_NESTING:
            raise RuntimeError(f"<string>:{i + 1}:1: error: brackets nest {depth} levels deep (at most "
                               f"{MAX_NESTING}: LLVM's parser would overflow its stack)")


def _deepest(line: np.ndarray) -> int:
    """The deepest bracket nesting along ``line`` (its bytes): the running sum of
    opening (+1) and closing (-1) brackets at its highest, a chunk at a time."""
    depth, deepest = 0, None
    for at in range(0, len(line), _CHUNK):
        run = np.cumsum(_BRACKET_DELTA[line[at:at + _CHUNK]], dtype=np.int32)
        top = depth + int(run.max())
        deepest = top if deepest is None else max(deepest, top)
        depth += int(run[-1])
    return deepest


#: per thread: what to wait for before making an LLVM module (``await_before_llvm``)
_awaited = threading.local()


def await_before_llvm(wait):
    """From now on, this thread calls ``wait()`` before it makes any LLVM
    module (None: no more); returns what it waited for before.
    ``speculation.InputCheck`` makes work on an unchecked input wait here for
    LLVM's verdict (``wait`` raises where the work must stop), so that no IR
    derived from it reaches LLVM before."""
    before, _awaited.wait = getattr(_awaited, "wait", None), wait
    return before


def settled() -> None:
    """The one gate every LLVM module made in this process passes first
    (``await_before_llvm``)."""
    wait = getattr(_awaited, "wait", None)
    if wait is not None:
        wait()


def parse_assembly(text: str) -> llvm.ModuleRef:
    """LLVM's text reader, in a fresh context (``RuntimeError`` on bad text,
    text nested too deeply for it included: ``check_nesting``)."""
    settled()
    return _read_text(text)


def _read_text(text: str) -> llvm.ModuleRef:
    """``parse_assembly`` without the gate (``settled``): for LLVM's reader
    and verifier only (``parse_and_verify``)."""
    check_nesting(text)
    return llvm.parse_assembly(text, context=llvm.create_context())


def parse_bitcode(data: bytes) -> llvm.ModuleRef:
    """LLVM's bitcode reader, in a fresh context (``RuntimeError`` on bad bitcode).
    Only for bitcode this process wrote: see ``read_bitcode`` for all other."""
    settled()
    return llvm.parse_bitcode(data, context=llvm.create_context())


def inline_and_simplify(text: str, functions) -> str:
    """Run LLVM's always-inliner over the module, then SROA and the
    instruction namer over ``functions`` (every value and block gets a name);
    LLVM's printing of the result.  For passes that edit function bodies
    (``work_item_loops``): values in registers, no numbered names."""
    mod = parse_assembly(text)
    pb = llvm.create_pass_builder(host_machine(), llvm.create_pipeline_tuning_options())
    mpm = llvm.create_new_module_pass_manager()
    mpm.add_always_inliner_pass()
    mpm.run(mod, pb)
    fpm = llvm.create_new_function_pass_manager()
    fpm.add_sroa_pass()
    fpm.add_instruction_namer_pass()
    for name in functions:
        fpm.run(mod.get_function(name), pb)
    return str(mod)


def value_types(text: str, function: str) -> tuple[list[str], dict[str, str]]:
    """The block names of ``function`` in order, and each named instruction
    result's LLVM type (llvmlite's ``ValueRef`` walk: plain data out)."""
    mod = parse_assembly(text)
    fn = mod.get_function(function)
    blocks, types = [], {}
    for block in fn.blocks:
        blocks.append(block.name)
        for ins in block.instructions:
            if ins.name:
                types[ins.name] = str(ins.type)
    return blocks, types


def parse_and_verify(text: str, name: str) -> tuple[llvm.ModuleRef | None, str | None]:
    """(LLVM's module, None), or (None, LLVM's complaint).  Work handed to
    another thread returns its failure as text: an exception kept there would
    tie its frames, and the modules in them, into reference cycles, and the
    collector may then dispose of an LLVM context before its module.

    It does not wait for a verdict (``settled``): LLVM's reader and verifier
    take any text (a bad one is a complaint; ``check_nesting`` keeps the
    reader's stack), so work on an input LLVM is still checking verifies what
    it made (``--verify-each``, the outputs) at once, as the verifier thread
    verifies the host half; only a module that passed may go further (its
    bitcode), and nothing of the work leaves before the verdict (``loading.load_and_run``)."""
    try:
        ref = _read_text(text)
        ref.verify()
    except RuntimeError as err:
        return None, str(err)
    # an image is named after its key, which may hold a symbol's bytes that are
    # no UTF-8 (as surrogates): LLVM's module name takes them as U+FFFD
    ref.name = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return ref, None


def verified_bitcode(text: str, name: str) -> tuple[bytes | None, str | None]:
    """``parse_and_verify``, then the bitcode, LLVM's module closed at once:
    ``(bitcode, None)`` or ``(None, LLVM's complaint)``."""
    ref, problem = parse_and_verify(text, name)
    if ref is None:
        return None, problem
    try:
        return ref.as_bitcode(), None
    finally:
        ref.close()         # before its context (the collector's order can crash)


def link_assembly(texts: list[str], name: str | None = None) -> tuple[llvm.ModuleRef | None, str | None]:
    """LLVM's linker: parse every text in one fresh context, link them into the
    first and verify the result.  ``(module, None)`` (named ``name`` when given;
    else LLVM's own module name stays), or ``(None, LLVM's complaint)`` (a bad
    text, a symbol defined twice, a verifier error)."""
    settled()
    ctx = llvm.create_context()
    try:
        out = llvm.parse_assembly(texts[0], context=ctx)
        for text in texts[1:]:
            out.link_in(llvm.parse_assembly(text, context=ctx))
        out.verify()
    except RuntimeError as err:
        return None, str(err)
    if name is not None:
        out.name = name
    return out, None


def complaint(ref: llvm.ModuleRef) -> str | None:
    """LLVM's verifier on ``ref``: None, or its complaint (see above)."""
    try:
        ref.verify()
    except RuntimeError as err:
        return str(err)
    return None


def close_in_background(ref: llvm.ModuleRef) -> None:
    """Let go of LLVM's module ``ref`` on the verifier thread (freeing a big
    module is LLVM work too: Python goes on meanwhile).  The caller keeps no
    other use of it."""
    in_background(ref.close)


def in_background(fn, *args) -> Future:
    """Run an LLVM call on the one verifier thread (llvmlite serialises LLVM's
    calls, so one is all that can work at a time); with
    ``MINISYCL_VERIFY_THREADS=1``, right here.  Returns a ``Future``."""
    if knobs.verify_threads() == 1:
        done = Future()
        done.set_result(fn(*args))
        return done
    return _verifier().submit(fn, *args)


@functools.lru_cache(maxsize=None)
def _verifier():
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="minisycl-verify")


def _after_fork_in_child() -> None:
    _verifier.cache_clear()
    _awaited.wait = None        # (the verdict it would wait for is the parent's to take)


if hasattr(os, "register_at_fork"):        # a forked child has no thread: it makes its own
    os.register_at_fork(after_in_child=_after_fork_in_child)


def first_line(err: Exception | str) -> str:
    """LLVM's parse errors are several lines (message, source line, caret); keep
    the ``<string>:L:C: error: ...`` line without the fake file name."""
    lines = [ln for ln in str(err).splitlines() if ln.strip()]
    for ln in lines:
        m = re.match(r'<string>:(\d+):(\d+): error: (.*)', ln)
        if m:
            return f"{m.group(1)}:{m.group(2)}: error: {m.group(3)}"
    return "invalid module: " + " ".join(lines[:2])


# -- untrusted bitcode: read in a child process ----------------------------------------

_RECORD = struct.Struct("<cQ")      # kind, payload length; kinds: T text, V verdict, E parse error
_FATAL = [getattr(signal, n) for n in ("SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT") if hasattr(signal, n)]


def read_bitcode(data: bytes, cut=None):
    """Read untrusted bitcode safely: ``(cut(text), None)`` or ``(None, complaint)``.

    A forked child parses ``data`` with LLVM, sends LLVM's printing, then
    verifies the module and sends the verdict.  The parent runs
    ``cut`` (default: keep the text) on the printing while the child verifies;
    nothing is returned, and no error of ``cut`` raised, before the verdict
    passed.  A child that dies (an assertion in LLVM's reader, a crash) gives
    the complaint ``LLVM's bitcode reader crashed on it (...)`` with LLVM's
    assertion when it printed one.  Without ``os.fork`` the bitcode is read in
    process."""
    cut = cut or (lambda text: text)
    if not hasattr(os, "fork"):
        return _read_in_process(data, cut)
    with _forked(lambda out, errors: _child(data, out, errors)) as run:
        result, pending = None, None
        kind, payload = _record(run.pipe)
        if kind == b"T":
            try:
                text = payload.decode("utf-8")
            except UnicodeDecodeError:
                text, pending = None, "LLVM's printing of it is not UTF-8"
            try:
                result = cut(text) if text is not None else None
            except Exception as err:        # noqa: BLE001 - raised below, after the verdict
                pending = err
            kind, payload = _record(run.pipe)
        status = run.wait()
        if kind is None or os.WIFSIGNALED(status) or os.waitstatus_to_exitcode(status) != 0:
            return None, _crash(status, run.stderr())
        if kind == b"E":
            return None, payload.decode("utf-8", "replace")
        if payload:
            return None, payload.decode("utf-8", "replace")
        if isinstance(pending, str):
            return None, pending
        if pending is not None:
            raise pending
        return result, None


class _Run:
    """A forked child (``_forked``): the pipe it writes to, the file its
    standard error goes to, and its exit status once ``wait`` reaped it."""

    def __init__(self, pid: int, pipe, errors):
        self.pid, self.pipe, self.errors, self.status = pid, pipe, errors, None

    def wait(self) -> int:
        self.pipe.close()
        _, self.status = os.waitpid(self.pid, 0)
        return self.status

    def stderr(self) -> str:
        self.errors.seek(0)
        return self.errors.read().decode("utf-8", "replace")


@contextlib.contextmanager
def _forked(child):
    """A forked child that runs ``child(out, errors)`` (file descriptors: a
    pipe to the parent, a temporary file for LLVM's messages; it never
    returns).  Left without ``wait`` - an exception, Ctrl-C - the child is
    killed and reaped: none is left behind."""
    with tempfile.TemporaryFile() as errors:
        r, w = os.pipe()
        pid = _fork()
        if pid == 0:
            os.close(r)
            child(w, errors.fileno())       # never returns
        os.close(w)
        run = _Run(pid, os.fdopen(r, "rb"), errors)
        try:
            yield run
        finally:
            if run.status is None:
                run.pipe.close()
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)


def _read_in_process(data: bytes, cut):
    try:
        ref = parse_bitcode(data)
        ref.verify()
    except RuntimeError as err:
        return None, str(err)
    return cut(str(ref)), None


def _fork() -> int:
    """``os.fork`` while holding llvmlite's lock, so that no other thread is
    inside LLVM (holding one of its locks, or halfway through changing its
    state) when the child is made; the child inherits the lock from this thread
    and releases it as this frame returns.  Our own verifier thread, if it
    exists, is idle or waiting for that lock.  (Python >= 3.12 warns about
    forking with threads: the child only calls LLVM and writes to a pipe.)"""
    lock = getattr(getattr(llvm.ffi, "lib", None), "_lock", None) or contextlib.nullcontext()
    with lock, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return os.fork()


def _child(data: bytes, out: int, errors: int) -> None:
    """The child: parse, print, verify; records to ``out``; LLVM's own messages
    (an assertion before the abort) to the file ``errors``.  Only ``os._exit``
    leaves it: no cleanup of the parent's runs twice."""
    code = 70
    try:
        faulthandler.disable()          # a crash is expected here, not a Python bug,
        for sig in _FATAL:              # nor a fault for a handler of the parent (the runtime's guards)
            with contextlib.suppress(ValueError, OSError):
                signal.signal(sig, signal.SIG_DFL)
        if resource is not None:        # nor a core file
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.dup2(errors, 2)
        try:
            ref = parse_bitcode(data)
        except RuntimeError as err:
            _send(out, b"E", str(err).encode())
        else:
            _send(out, b"T", str(ref).encode("utf-8"))
            _send(out, b"V", (complaint(ref) or "").encode("utf-8"))
        code = 0
    finally:
        os._exit(code)


def _send(fd: int, kind: bytes, payload: bytes) -> None:
    view = memoryview(_RECORD.pack(kind, len(payload)) + payload)
    while view:
        view = view[os.write(fd, view):]


def _record(pipe) -> tuple[bytes | None, bytes]:
    """One record from the child, or ``(None, b"")`` where the child stopped early."""
    head = pipe.read(_RECORD.size)
    if len(head) < _RECORD.size:
        return None, b""
    kind, size = _RECORD.unpack(head)
    payload = pipe.read(size)
    return (kind, payload) if len(payload) == size else (None, b"")


def _crash(status: int, stderr: str) -> str:
    """The complaint for a child that died: the signal and LLVM's assertion."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            how = signal.Signals(sig).name
        except ValueError:
            how = f"signal {sig}"
    else:
        how = f"exit status {os.waitstatus_to_exitcode(status)}"
    m = re.search(r"Assertion `(.*)' failed", stderr)
    said = f"assertion '{m.group(1)}'" if m else " ".join(stderr.split())[:200]
    return f"LLVM's bitcode reader crashed on it ({how}{': ' + said if said else ''})"


# -- LLVM's own modules for the JIT (``runtime/engine.py``, ``runtime/jit.py``) ------------
# The runtime makes target machines and execution engines; every call on a
# module goes through here.

__all__ += ["new_context", "parse_and_link", "retarget", "run_sroa", "run_optimizer", "module_text", "host_machine"]

_native_ready = False


def host_machine(**options):
    """A target machine for this process's triple (LLVM's native target and
    assembly printer initialised once): the one place that makes one for the
    host, whether for a pass pipeline (no options), the JIT's engines (this CPU,
    ``runtime/engine.py``) or post-link's objects (``postlink/native.py``).
    ``options``: ``create_target_machine``'s (cpu, features, opt, reloc,
    codemodel)."""
    global _native_ready
    if not _native_ready:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        _native_ready = True
    return llvm.Target.from_triple(llvm.get_process_triple()).create_target_machine(**options)


def new_context():
    """A fresh LLVM context; whoever holds modules in it keeps it alive as long as they live."""
    return llvm.create_context()


def parse_and_link(texts: list[str], context) -> llvm.ModuleRef:
    """LLVM's module of ``texts[0]`` with the modules of the other texts linked
    in, all in ``context`` (``RuntimeError`` on bad text or a link conflict).
    Only for text this process made or LLVM printed (``read_bitcode``)."""
    settled()
    main = llvm.parse_assembly(texts[0], context=context)
    for text in texts[1:]:
        main.link_in(llvm.parse_assembly(text, context=context))
    return main


def retarget(ref: llvm.ModuleRef, machine) -> None:
    """Give ``ref`` the triple and data layout of the target machine ``machine``."""
    ref.triple = machine.triple
    ref.data_layout = str(machine.target_data)


def run_sroa(ref: llvm.ModuleRef, machine) -> None:
    """LLVM's SROA on ``ref`` (allocas split into the values they hold)."""
    mpm = llvm.create_new_module_pass_manager()
    mpm.add_sroa_pass()
    mpm.run(ref, llvm.create_pass_builder(machine, llvm.create_pipeline_tuning_options()))


def run_optimizer(ref: llvm.ModuleRef, machine, speed_level: int) -> None:
    """LLVM's default module pipeline at ``-O<speed_level>`` for ``machine``."""
    pb = llvm.create_pass_builder(machine, llvm.create_pipeline_tuning_options(speed_level=speed_level))
    pb.getModulePassManager().run(ref, pb)


def module_text(ref: llvm.ModuleRef) -> str:
    """LLVM's printing of ``ref``."""
    return str(ref)


__all__ += ["emit_ptx"]
_nvptx_ready = False


def emit_ptx(texts: list[str], cpu: str, features: str, keep=()) -> str:
    """PTX for NVPTX IR ``texts`` (linked; the first is the program, the others
    libraries such as libdevice): every function but those named in ``keep``
    (the kernels) made internal, LLVM's -O3 pipeline for the NVPTX machine of
    ``cpu`` (``sm_90``) and ``features`` (``+ptx80``), then its assembly.
    Only for text this process made (``lower-to-nvptx``'s output): the NVPTX
    back end aborts the process on what it cannot select, which that pass refuses
    first."""
    global _nvptx_ready
    if not _nvptx_ready:
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()
        _nvptx_ready = True
    if not re.fullmatch(r"sm_\d+a?", cpu):
        raise IRError(f"'{cpu}' is not an NVIDIA architecture (sm_90, sm_80 ...)")
    context = llvm.create_context()
    mod = parse_and_link(texts, context)
    if not mod.triple.startswith("nvptx"):
        mod.close()             # before its context (the garbage collector's order can crash)
        raise IRError(f"PTX needs an NVPTX module (triple '{mod.triple}'): run lower-to-nvptx first")
    keep = set(keep)
    for fn in mod.functions:
        if not fn.is_declaration and fn.name not in keep:
            fn.linkage = llvm.Linkage.internal
    machine = llvm.Target.from_triple(mod.triple).create_target_machine(cpu=cpu, features=features, opt=3)
    mod.data_layout = str(machine.target_data)
    problem = complaint(mod)
    if problem is not None:
        mod.close()
        raise IRError(f"NVPTX module does not verify: {first_line(problem)}")
    run_optimizer(mod, machine, 3)
    try:
        return machine.emit_assembly(mod)
    finally:
        mod.close()             # before its context


# -- work that LLVM may abort on: run in a child process ---------------------------------
# LLVM's back ends do not report what they cannot do: inline assembly without an
# assembly parser, an intrinsic no instruction selects, running out of memory
# all end in ``report_fatal_error`` or ``abort`` and take the process with them.
# Code generation of modules whose contents came from a user (the runtime's JIT)
# runs in a forked child that returns the object bytes; a child that dies is
# one ``IRError`` with LLVM's message.

__all__ += ["in_child", "serve_records"]


def in_child(work, what: str) -> bytes:
    """``work()`` (which returns bytes: an object file, PTX) run in a forked
    child, its bytes back through a pipe.  LLVM's fatal errors and crashes in
    the child raise ``IRError`` naming ``what`` with LLVM's message (``LLVM
    ERROR: ...``); a Python exception in ``work`` raises ``IRError`` with its
    message.  Without ``os.fork`` ``work`` runs here."""
    if not hasattr(os, "fork"):
        return work()
    with _forked(lambda out, errors: _work_child(work, out, errors)) as run:
        kind, payload = _record(run.pipe)
        status = run.wait()
        if kind == b"O" and os.WIFEXITED(status) and os.waitstatus_to_exitcode(status) == 0:
            return payload
        if kind == b"E":
            raise IRError(f"{what}: {payload.decode('utf-8', 'replace')}")
        raise IRError(f"{what}: {_fatal(status, run.stderr())}")


def _work_child(work, out: int, errors: int) -> None:
    """The child of ``in_child``: ``work()``'s bytes (``O``) or its exception's
    message (``E``) to ``out``; LLVM's messages to the file ``errors``.  Only
    ``os._exit`` leaves it."""
    code = 70
    try:
        child_setup(errors)
        try:
            data = work()
        except Exception as err:        # noqa: BLE001 - reported to the parent as text
            _send(out, b"E", (first_line(err) if isinstance(err, RuntimeError) else str(err)).encode("utf-8"))
        else:
            _send(out, b"O", bytes(data))
        code = 0
    finally:
        os._exit(code)


def serve_records(inp: int, errors: int, answer) -> None:
    """A worker child's life (``bitcode_worker``, ``speculation``'s checker):
    ``child_setup``, then ``answer(kind, payload)`` for each record of the
    pipe ``inp`` until its end or an ``answer`` that returns False.  Only
    ``os._exit`` leaves it."""
    code = 70
    try:
        child_setup(errors)
        with os.fdopen(inp, "rb") as reader:
            while True:
                head = reader.read(_RECORD.size)
                if len(head) < _RECORD.size:
                    break
                kind, length = _RECORD.unpack(head)
                if answer(kind, reader.read(length)) is False:
                    break
        code = 0
    finally:
        os._exit(code)


def child_setup(errors: int) -> None:
    """A worker child's first steps: a crash in LLVM is expected, not a Python
    bug (no fault handler, default fatal signals, no core file); Ctrl-C is the
    parent's to act on; LLVM's messages go to the file ``errors``."""
    faulthandler.disable()
    for sig in _FATAL:
        with contextlib.suppress(ValueError, OSError):
            signal.signal(sig, signal.SIG_DFL)
    with contextlib.suppress(ValueError, OSError):
        signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C is the parent's to act on
    if resource is not None:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.dup2(errors, 2)


def _fatal(status: int, stderr: str) -> str:
    """LLVM's message for a child that died: its ``LLVM ERROR`` line, assertion or
    last words, and how it ended."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            how = f"killed by {signal.Signals(sig).name}"
        except ValueError:
            how = f"killed by signal {sig}"
        if sig == signal.SIGKILL:
            how += " (out of memory?)"
    else:
        how = f"exit status {os.waitstatus_to_exitcode(status)}"
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    said = next((ln for ln in lines if ln.startswith("LLVM ERROR:")), None)
    if said is None:
        m = re.search(r"Assertion `(.*)' failed", stderr)
        said = f"assertion '{m.group(1)}'" if m else " ".join(" ".join(lines[-3:]).split())[:300]
    if "bad_alloc" in stderr:
        said = "out of memory" + (f" ({said})" if said else "")
    return f"LLVM stopped ({how}){': ' + said if said else ''}"
