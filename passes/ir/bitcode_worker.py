"""LLVM's verification and bitcode of many small modules in a forked child:
the post-link step's images (``split_module(serialize="bitcode")``), each
handed over as soon as it is made, while Python goes on with the next.

Why a child and not the verifier thread (``bridge.in_background``): one image
costs LLVM a dozen short calls (context, parse, verify, name, bitcode, close),
and after each the thread needs Python's GIL back, which the main thread, busy
splitting, hands over only every switch interval.  Measured on 1,000 kernels:
the thread finished one image in eight while the split ran, and post-link then
waited for the rest.  A child has an interpreter of its own, so LLVM's work on
the images runs beside the split on another core.

Protocol (``bridge``'s records: kind, length, payload): the parent writes
``M`` (the length of the module's name, 4 bytes little-endian, the name, its
text) per module and ``E`` at the end; the
child answers each ``M`` in order with ``B`` (the bitcode) or ``P`` (LLVM's
complaint).  The parent never waits to write: what the pipe does not take
now waits in a queue, sent on the next ``submit`` or while the parent waits
for an answer (``poll``), so the split never waits for LLVM, and neither
side can block the other.  A
child that dies owes its missing answers as ``(None, LLVM's message)``: an
internal error, as a module that does not verify is.  The worker going away
(collected, or the process ending) kills and reaps a child still running.

The first ``FORK_AFTER`` modules go to the verifier thread: for a few images
a fork (a few milliseconds) is not worth it.  Nor is it without a free core
(``_spare_core``: the load average says the machine is busy), without
``os.fork``, or with ``MINISYCL_VERIFY_THREADS=1``: then every module goes
the thread's way (``in_background``), and ``beside()`` tells a caller so
(post-link then submits nothing: measured at 2,000 kernels on 2 busy cores,
the thread's turns cost 13% more CPU than LLVM's work on all images at the
end).  Which way a module went never changes
its bytes."""
from __future__ import annotations

import collections
import contextlib
import os
import select
import weakref

try:
    import fcntl
except ImportError:         # no fcntl (and no fork): the thread does the work
    fcntl = None

from ..support import knobs
from .bridge import _RECORD, _fatal, _forked, _send, in_background, serve_records, verified_bitcode

__all__ = ["BitcodeWorker", "FORK_AFTER"]

#: modules verified on the thread before the child is forked
FORK_AFTER = 24
#: bytes of modules sent to the child at once
BATCH = 1 << 15

#: the parent's ends of every live worker's pipes: a child forked later closes them
#: (else it would hold another child's input open)
_PARENT_FDS: set[int] = set()


class BitcodeWorker:
    """``submit(text, name)`` → a handle whose ``result()`` is ``verified_bitcode(text, name)``:
    ``(bitcode, None)`` or ``(None, LLVM's complaint)``.  ``finish()`` when no
    more modules come (the child then ends after its last answer)."""

    def __init__(self, fork_after: int | None = None):
        self._fork_after = FORK_AFTER if fork_after is None else fork_after
        self._forks: bool | None = None if fork_after is None else self._can_fork()    # decided once
        self._submitted = 0                 # all modules, the thread's included
        self._run = None
        self._child: _Child | None = None
        self._to_child = self._from_child = -1
        self._answers: dict[int, tuple] = {}
        self._sent = self._received = 0
        self._buffer = bytearray()           # answers read, not yet parsed
        self._batch: list[bytes] = []      # records not sent yet, and their size
        self._batched = 0
        self._pending: collections.deque = collections.deque()     # what the pipe did not take yet
        self._ended: str | None = None      # why the child gave no more answers
        self._finished = False

    def submit(self, text: str, name: str):
        self._submitted += 1
        if self._run is None and self._submitted <= self._fork_after:
            return in_background(verified_bitcode, text, name)
        if self._forks is None:
            self._forks = self._can_fork() and _spare_core()
        if not self._forks:
            return in_background(verified_bitcode, text, name)
        if self._run is None:
            self._start()
        index = self._sent
        self._sent += 1
        if self._ended is None:
            raw_name = name.encode("utf-8", "surrogateescape")      # (a name may hold any character, NUL too)
            payload = len(raw_name).to_bytes(4, "little") + raw_name + text.encode("utf-8", "surrogateescape")
            self._queue(_RECORD.pack(b"M", len(payload)) + payload)
        if self._ended is not None and index not in self._answers:
            self._answers[index] = (None, self._ended)
        return _Answer(self, index)

    def beside(self) -> bool:
        """Whether LLVM's work on the modules submitted runs beside the caller,
        in a child on a core of its own (decided once, as for ``submit``).
        Where not (a busy machine, no ``fork``, ``MINISYCL_VERIFY_THREADS=1``)
        the thread takes turns with the caller for one core, and handing it
        each module costs more than LLVM's work saves: a caller that can wait
        does better to let ``Module.bitcode`` make them all when it needs them."""
        if self._forks is None:
            self._forks = self._can_fork() and _spare_core()
        return self._forks

    def finish(self) -> None:
        """No more modules: the child ends after its last answer."""
        if self._run is not None and not self._finished and self._ended is None:
            self._queue(_RECORD.pack(b"E", 0))
            self._send_batch()
        self._finished = True

    # -- the parent's side ----------------------------------------------------------

    def _can_fork(self) -> bool:
        return hasattr(os, "fork") and knobs.verify_threads() != 1

    def _start(self) -> None:
        to_child_r, to_child_w = os.pipe()
        inherited = set(_PARENT_FDS)

        def serve(out: int, errors: int) -> None:
            for fd in inherited | {to_child_w}:
                with contextlib.suppress(OSError):
                    os.close(fd)
            _serve(to_child_r, out, errors)

        stack = contextlib.ExitStack()
        try:
            self._run = stack.enter_context(_forked(serve))
        except BaseException:
            os.close(to_child_w)
            raise
        finally:
            os.close(to_child_r)
        self._child = _Child(stack, self._run, to_child_w)
        self._to_child, self._from_child = to_child_w, self._run.pipe.fileno()
        for fd in (self._to_child, self._from_child):
            os.set_blocking(fd, False)
            if hasattr(fcntl, "F_SETPIPE_SZ"):      # Linux: fewer, larger transfers
                with contextlib.suppress(OSError):
                    fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, 1 << 20)
        weakref.finalize(self, self._child.close)

    def _queue(self, record: bytes) -> None:
        """Send ``record`` with the next batch (``BATCH`` bytes: one write, not
        one per module), as far as the pipe takes it now; the rest waits in
        ``_pending`` (the split never waits for the child)."""
        self._batch.append(record)
        self._batched += len(record)
        if self._batched >= BATCH:
            self._send_batch()

    def _send_batch(self) -> None:
        if self._batch:
            self._pending.append(memoryview(b"".join(self._batch)))
            self._batch, self._batched = [], 0
        self._flush()

    def _flush(self) -> None:
        pending = self._pending
        while pending and self._ended is None:
            try:
                sent = os.write(self._to_child, pending[0])
            except BlockingIOError:
                return
            except BrokenPipeError:
                self._end()
                return
            if sent == len(pending[0]):
                pending.popleft()
            else:
                pending[0] = pending[0][sent:]

    def _wait(self) -> None:
        """Until the child answers (its input written meanwhile)."""
        self._send_batch()
        poll = select.poll()
        poll.register(self._from_child, select.POLLIN)
        if self._pending:
            poll.register(self._to_child, select.POLLOUT)
        for fd, _ in poll.poll():
            if fd == self._from_child:
                self._read()
            else:
                self._flush()

    def _read(self) -> None:
        """Take the answers that are there (the pipe is non-blocking)."""
        while self._ended is None:
            try:
                chunk = os.read(self._from_child, 1 << 20)
            except BlockingIOError:
                return
            if not chunk:
                self._end()
                return
            self._buffer += chunk
            self._parse()

    def _parse(self) -> None:
        buf, at, size = self._buffer, 0, _RECORD.size
        while len(buf) - at >= size:
            kind, length = _RECORD.unpack_from(buf, at)
            if len(buf) - at - size < length:
                break
            payload = bytes(buf[at + size:at + size + length])
            at += size + length
            index = self._received
            self._received += 1
            self._answers[index] = (payload, None) if kind == b"B" else \
                (None, payload.decode("utf-8", "replace"))
        del buf[:at]

    def _end(self) -> None:
        """The child stopped before its last answer: reap it, and owe every
        missing answer LLVM's message."""
        run = self._run
        status = run.wait() if run.status is None else run.status
        clean = os.WIFEXITED(status) and os.waitstatus_to_exitcode(status) == 0
        self._ended = "LLVM's worker ended before its last answer" if clean else _fatal(status, run.stderr())
        for index in range(self._received, self._sent):
            self._answers[index] = (None, self._ended)
        self._child.close()

    def _answer(self, index: int) -> tuple:
        while index not in self._answers:
            if self._ended is not None:
                return None, self._ended
            self._wait()
        answer = self._answers.pop(index)
        if self._finished and self._received == self._sent and self._ended is None:
            self._flush()                   # ``E`` (the pipe has room: every module was read)
            self._ended = "LLVM's worker has ended"
            self._child.close_input()
            self._run.wait()                # it ends on ``E``, or on the end of its input
            self._child.close()
        return answer


def _spare_core() -> bool:
    """Whether a core is free for the child: the cores this process may use
    exceed the machine's load average by one.  On a machine already busy (CI's
    two shared cores) a child only adds its cost (the fork, copying the pages
    the parent writes while the child lives, the pipes: about 5% more CPU)
    and runs no sooner than the thread would."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return cores > 1
    return load + 1 <= cores


class _Answer:
    """One module's place in the worker's answers (what ``Module.bitcode``
    takes; as a ``Future``'s, its ``result()`` is the same each time)."""

    __slots__ = ("worker", "index", "value")

    def __init__(self, worker: BitcodeWorker, index: int):
        self.worker, self.index, self.value = worker, index, None

    def result(self) -> tuple:
        if self.value is None:
            self.value = self.worker._answer(self.index)
            self.worker = None
        return self.value


class _Child:
    """What a worker holds of its child: closed once, by the worker or, when the
    worker goes away first, by its finalizer (which kills a child still running)."""

    def __init__(self, stack: contextlib.ExitStack, run, to_child: int):
        self.stack, self.to_child, self.fds = stack, to_child, (to_child, run.pipe.fileno())
        _PARENT_FDS.update(self.fds)

    def close_input(self) -> None:
        if self.to_child >= 0:
            _PARENT_FDS.discard(self.to_child)
            with contextlib.suppress(OSError):
                os.close(self.to_child)
            self.to_child = -1

    def close(self) -> None:
        if self.stack is None:
            return
        _PARENT_FDS.difference_update(self.fds)
        self.close_input()
        stack, self.stack = self.stack, None
        stack.close()                       # ``_forked``: kills and reaps it if not reaped yet


def _serve(inp: int, out: int, errors: int) -> None:
    """The child: answer every ``M`` record of ``inp`` until ``E`` or the end of
    the input.  Only ``os._exit`` leaves it."""
    def answer(kind: bytes, payload: bytes) -> bool:
        if kind != b"M":
            return False
        size = int.from_bytes(payload[:4], "little")
        name, text = payload[4:4 + size], payload[4 + size:]
        data, problem = verified_bitcode(text.decode("utf-8", "surrogateescape"),
                                         name.decode("utf-8", "surrogateescape"))
        if problem is None:
            _send(out, b"B", data)
        else:
            _send(out, b"P", problem.encode("utf-8", "replace"))
        return True
    serve_records(inp, errors, answer)
