"""Several processes: collectives and send/receive as queue commands, over MPI and NCCL.

One process per device, started with ``mpiexec -n N``; ranks and size come from
mpi4py (``MPI.COMM_WORLD``, duplicated so that the program's own MPI traffic
never mixes with ours)::

    from minisycl import runtime as sycl
    q = sycl.queue(sycl.distributed.local_device())
    comm = sycl.distributed.communicator(q)
    comm.all_reduce(x, y, op=sycl.plus).wait()         # also broadcast, all_gather,
                                                       # reduce_scatter, send, recv, sendrecv

Each operation is one command of the communicator's queue, ordered by events
like any other (``depends_on=``), and a ``native_command`` node in a command
graph (``handler=h`` records it into a command group: ``g.add(lambda h:
comm.all_reduce(x, handler=h))``, or record the queue).  Memory is USM or any
object ``from_dlpack`` takes (torch, CuPy, NumPy).

* On an NVIDIA GPU the data moves through NCCL (``cuda/nccl.py``) on the queue's
  stream, so it is ordered with the queue's kernels without waiting on the host
  (in a CUDA graph it is captured).  The NCCL communicator is made at the first
  GPU operation: rank 0's ``ncclGetUniqueId`` broadcast over MPI, then
  ``ncclCommInitRank`` on the queue's device.  NVLink multicast stays off
  (``NCCL_NVLS_ENABLE=0`` unless set).
* On a device of this CPU the data moves through MPI (non-blocking calls) on the
  USM memory itself, when the command runs.

Bad input never hangs.  Before each operation the ranks exchange what they are
about to do (kind, element count, element type, root or peer, operator) in a
small MPI message: a rank that called something else, with another size or
element type, makes every rank involved raise ``errc::runtime`` naming it.
Every MPI wait polls against a deadline, ``MINISYCL_COLLECTIVE_TIMEOUT``
seconds (default 60): a rank that died or never came makes the others raise
``errc::runtime`` when it passes.  After a timeout the communicator is broken
(MPI cannot cancel a collective half done): later operations raise at once,
and the process ends with ``MPI_Abort`` at exit rather than wait in
``MPI_Finalize``.  (On a GPU, the check comes before NCCL is called: a rank that
dies after its peers' NCCL kernels started leaves them to NCCL's own timeouts.)
"""
from __future__ import annotations

import atexit
import time

import numpy as np

from ..passes.support import knobs
from .errors import errc, exception
from .interop import NativeCommand, adopt
from .memory import usm_allocation
from .reductions import _Operator
from .validate import require_queue

__all__ = ["communicator", "local_device", "world"]

#: operation kind -> its code in the agreement message
_KINDS = {"all_reduce": 1, "broadcast": 2, "all_gather": 3, "reduce_scatter": 4, "send": 5, "recv": 6,
          "sendrecv": 7, "barrier": 8}
_KIND_NAMES = {v: k for k, v in _KINDS.items()}
_OPS = ("plus", "multiplies", "minimum", "maximum")
_TAG_META, _TAG_VERDICT, _TAG_DATA = 31001, 31002, 31003
#: a wait polls its MPI requests back to back this long (seconds: MPI moves data only inside
#: the polls, as MPI_Wait does), then sleeps between polls, at most ``_NAP_MAX``
_SPIN_S = 1.0
_NAP_MAX = 1e-3


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError:
        raise exception(errc.feature_not_supported, "runtime.distributed needs mpi4py and an MPI library: "
                                                    "pip install 'minisycl[mpi]' (mpi4py, mpich)") from None
    return MPI


def world() -> tuple[int, int]:
    """(rank, size) of ``MPI.COMM_WORLD``."""
    c = _mpi().COMM_WORLD
    return c.Get_rank(), c.Get_size()


def local_device():
    """The device this rank should use: the default device when ``MINISYCL_DEVICE``
    names one, else its node-local rank's GPU (round robin over the NVIDIA GPUs) when
    there are GPUs, else the default device."""
    from .device import default_device, get_devices
    gpus = [d for d in get_devices() if d.backend == "cuda"]
    if not gpus or knobs.default_device():
        return default_device()
    MPI = _mpi()
    local = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return gpus[local.Get_rank() % len(gpus)]
    finally:
        local.Free()


def _op_name(op) -> str:
    name = op.name if isinstance(op, _Operator) else op
    if not isinstance(name, str) or name not in _OPS:
        raise exception(errc.invalid, f"unsupported reduction operator {op!r:.60}: sycl.plus, sycl.multiplies, "
                                      f"sycl.minimum or sycl.maximum")
    return name


def _code(dtype: np.dtype) -> int:
    """An element type as a number the ranks compare (kind and size)."""
    return dtype.num * 1000 + dtype.itemsize


#: the element types reductions take (NCCL and MPI alike; float16 on a GPU only)
_REDUCIBLE = tuple(np.dtype(t) for t in (np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64, np.float32,
                                         np.float64))
_TYPE_NAMES = {_code(np.dtype(t)): str(np.dtype(t)) for t in (np.bool_, np.int8, np.uint8, np.int16, np.uint16,
                                                               np.int32, np.uint32, np.int64, np.uint64, np.float16,
                                                               np.float32, np.float64, np.complex64, np.complex128)}


class communicator:  # noqa: N801 - SYCL-style name
    """The ranks of ``MPI.COMM_WORLD`` (or ``comm``) working through queue ``q``'s device."""

    def __init__(self, q, comm=None, *, timeout: float | None = None):
        from .queue import queue as Queue
        self.queue = require_queue(q, "communicator queue")
        if not isinstance(self.queue, Queue):
            raise exception(errc.invalid, f"communicator expects a queue, got {type(q).__name__}")
        MPI = self._MPI = _mpi()
        base = MPI.COMM_WORLD if comm is None else comm
        if not isinstance(base, MPI.Intracomm):
            raise exception(errc.invalid, f"communicator expects an mpi4py Intracomm, got {type(base).__name__}")
        self.timeout = knobs.collective_timeout() if timeout is None else float(timeout)
        if not self.timeout > 0:
            raise exception(errc.invalid, f"communicator timeout must be a positive number of seconds, got {timeout!r}")
        self.broken: str | None = None
        self._seq = 0
        self.rank, self.size = base.Get_rank(), base.Get_size()
        self._comm, request = base.Idup()
        self._wait([request], "creating the communicator")
        self.gpu = not self.queue.device.impl.runs_on_host
        self._nccl = None
        if self.gpu:                    # now, not inside a stream capture (a command graph)
            self._communicator()

    def __repr__(self):
        return f"<communicator rank {self.rank} of {self.size} on {self.queue.device.name}>"

    # -- waiting without hanging ---------------------------------------------------------

    def _wait(self, requests, what: str) -> None:
        MPI = self._MPI
        if MPI.Request.Testall(requests):
            return
        now = time.monotonic()
        deadline, spin = now + self.timeout, now + _SPIN_S
        nap = 20e-6
        while not MPI.Request.Testall(requests):        # (MPI progresses inside the test: poll it)
            now = time.monotonic()
            if now > deadline:
                self._break(f"{what}: rank {self.rank} waited {self.timeout:g} s for the other ranks "
                            f"(MINISYCL_COLLECTIVE_TIMEOUT): a rank died, or the ranks called different operations")
            if now > spin:                              # a long wait: stop burning the core
                time.sleep(nap)
                nap = min(nap * 2, _NAP_MAX)

    def _break(self, message: str):
        if self.broken is None:
            self.broken = message
            atexit.register(_abort, self._MPI)
        raise exception(errc.runtime, message)

    def _check_usable(self, what: str) -> None:
        if self.broken is not None:
            raise exception(errc.runtime, f"{what}: the communicator is broken since an earlier failure "
                                          f"({self.broken})")

    # -- agreement: what each rank is about to do ----------------------------------------

    def _agree(self, kind: str, count: int, dtype: np.dtype, root: int = -1, op: str = "") -> None:
        """Every rank is doing the same collective on the same count and type (all raise otherwise)."""
        self._seq += 1
        mine = np.array([_KINDS[kind], count, _code(dtype), root, _OPS.index(op) if op else -1, self._seq],
                        dtype=np.int64)
        every = np.empty((self.size, mine.size), dtype=np.int64)
        self._wait([self._comm.Iallgather(mine, every)], f"{kind} (agreeing on it)")
        differ = [r for r in range(self.size) if not np.array_equal(every[r][:5], mine[:5])]
        if differ:
            r = differ[0]
            raise exception(errc.runtime, f"{kind} on rank {self.rank}: the ranks disagree: rank {r} called "
                                          f"{self._describe(every[r])}, rank {self.rank} "
                                          f"{self._describe(mine)}")

    @staticmethod
    def _describe(row) -> str:
        kind, count, code, root, op = (int(v) for v in row[:5])
        text = f"{_KIND_NAMES.get(kind, kind)} of {count} elements of {_TYPE_NAMES.get(code, f'{code % 1000}-byte')}"
        if root >= 0:
            text += f" (root or peer {root})"
        if op >= 0:
            text += f" with {_OPS[op]}"
        return text

    def _agree_pair(self, kind: str, dest: int | None, send: tuple | None, source: int | None,
                    recv: tuple | None) -> None:
        """A send to ``dest`` of ``send`` = (count, dtype) and/or a receive from ``source``
        into ``recv``: each receiver checks the sender's header and answers; every side
        involved raises on a mismatch."""
        requests, header = [], np.empty(2, dtype=np.int64)
        mine = np.array([send[0], _code(send[1])], dtype=np.int64) if send is not None else None
        if dest is not None:
            requests.append(self._comm.Isend(mine, dest, _TAG_META))
        if source is not None:
            requests.append(self._comm.Irecv(header, source, _TAG_META))
        self._wait(requests, f"{kind} (exchanging sizes)")
        verdict_out = np.zeros(1, dtype=np.int64)
        if source is not None and (header[0] != recv[0] or header[1] != _code(recv[1])):
            verdict_out[0] = 1
        verdict_in = np.zeros(1, dtype=np.int64)
        requests = []
        if source is not None:
            requests.append(self._comm.Isend(verdict_out, source, _TAG_VERDICT))
        if dest is not None:
            requests.append(self._comm.Irecv(verdict_in, dest, _TAG_VERDICT))
        self._wait(requests, f"{kind} (exchanging sizes)")
        if verdict_out[0]:
            raise exception(errc.runtime, f"{kind} on rank {self.rank}: rank {source} sends {int(header[0])} "
                                          f"elements of code {int(header[1])}, this rank receives {recv[0]} "
                                          f"elements of {recv[1]}: the sizes or element types differ")
        if verdict_in[0]:
            raise exception(errc.runtime, f"{kind} on rank {self.rank}: rank {dest} expects another size or "
                                          f"element type than the {send[0]} elements of {send[1]} sent")

    # -- commands ---------------------------------------------------------------------

    def _memory(self, x, what: str) -> usm_allocation:
        if isinstance(x, usm_allocation):
            x.check(what)
            return x
        return adopt(x, self.queue, what)

    def _submit(self, kind: str, run, uses, handler, depends_on):
        """``run(ih)`` as a native command: recorded into ``handler``, else submitted."""
        def fn(ih):
            self._check_usable(kind)
            run(ih)
        fn.__name__ = kind
        cmd = NativeCommand(fn, kind, tuple(uses))
        if handler is not None:
            handler._record(cmd)
            return None
        return self.queue.submit(lambda h: h._record(cmd), depends_on)

    def _peer(self, rank, what: str) -> int:
        if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or not 0 <= int(rank) < self.size:
            raise exception(errc.invalid, f"{what} must be a rank from 0 to {self.size - 1}, got {rank!r:.40}")
        return int(rank)

    def all_reduce(self, send, recv=None, op="plus", *, depends_on=None, handler=None):
        """``recv`` (``send`` itself when ``None``: in place) = ``op`` over the ranks' ``send``."""
        op = _op_name(op)
        s = self._memory(send, "all_reduce send buffer")
        r = s if recv is None else self._memory(recv, "all_reduce receive buffer")
        self._same(s, r, "all_reduce", s.count)
        n, dtype = s.count, s.dtype
        self._reducible(dtype, "all_reduce")

        def run(ih):
            self._agree("all_reduce", n, dtype, op=op)
            if self.gpu:
                self._nccl_call("ncclAllReduce", ih, s.ptr, r.ptr, n, self._nccl_type(dtype, "all_reduce"),
                                _nccl_op(op))
            else:
                MPI = self._MPI
                src = MPI.IN_PLACE if s is r else s.array
                self._wait([self._comm.Iallreduce(src, r.array, _mpi_op(MPI, op))], "all_reduce")
        return self._submit("all_reduce", run, (s, r), handler, depends_on)

    def broadcast(self, buf, root: int = 0, *, depends_on=None, handler=None):
        """``buf`` on every rank = ``buf`` of rank ``root``."""
        root = self._peer(root, "broadcast root")
        b = self._memory(buf, "broadcast buffer")
        n, dtype = b.count, b.dtype

        def run(ih):
            self._agree("broadcast", n, dtype, root)
            if self.gpu:
                self._nccl_call("ncclBroadcast", ih, b.ptr, b.ptr, b.nbytes, 1, root)
            else:
                self._wait([self._comm.Ibcast(_bytes(b), root)], "broadcast")
        return self._submit("broadcast", run, (b,), handler, depends_on)

    def all_gather(self, send, recv, *, depends_on=None, handler=None):
        """``recv`` = every rank's ``send`` in rank order (``recv`` holds size x ``send``)."""
        s = self._memory(send, "all_gather send buffer")
        r = self._memory(recv, "all_gather receive buffer")
        self._same(s, r, "all_gather", s.count * self.size)
        n, dtype = s.count, s.dtype

        def run(ih):
            self._agree("all_gather", n, dtype)
            if self.gpu:
                self._nccl_call("ncclAllGather", ih, s.ptr, r.ptr, s.nbytes, 1)
            else:
                self._wait([self._comm.Iallgather(_bytes(s), _bytes(r, s.nbytes * self.size))], "all_gather")
        return self._submit("all_gather", run, (s, r), handler, depends_on)

    def reduce_scatter(self, send, recv, op="plus", *, depends_on=None, handler=None):
        """``recv`` = this rank's block of ``op`` over the ranks' ``send`` (``send`` holds size x ``recv``)."""
        op = _op_name(op)
        s = self._memory(send, "reduce_scatter send buffer")
        r = self._memory(recv, "reduce_scatter receive buffer")
        if s.dtype != r.dtype or s.count < r.count * self.size:
            raise exception(errc.invalid, f"reduce_scatter: the send buffer must hold {self.size} x the receive "
                                          f"buffer's {r.count} elements of {r.dtype}, got {s.count} of {s.dtype}")
        n, dtype = r.count, r.dtype
        self._reducible(dtype, "reduce_scatter")

        def run(ih):
            self._agree("reduce_scatter", n, dtype, op=op)
            if self.gpu:
                self._nccl_call("ncclReduceScatter", ih, s.ptr, r.ptr, n, self._nccl_type(dtype, "reduce_scatter"),
                                _nccl_op(op))
            else:
                MPI = self._MPI
                self._wait([self._comm.Ireduce_scatter_block(s.array[:n * self.size], r.array[:n],
                                                             _mpi_op(MPI, op))], "reduce_scatter")
        return self._submit("reduce_scatter", run, (s, r), handler, depends_on)

    def send(self, buf, dest: int, *, depends_on=None, handler=None):
        """Send ``buf`` to rank ``dest`` (which receives it with ``recv``)."""
        return self._p2p("send", buf, dest, None, None, depends_on, handler)

    def recv(self, buf, source: int, *, depends_on=None, handler=None):
        """Receive into ``buf`` what rank ``source`` sends."""
        return self._p2p("recv", None, None, buf, source, depends_on, handler)

    def sendrecv(self, send, dest: int, recv, source: int, *, depends_on=None, handler=None):
        """Send ``send`` to ``dest`` and receive ``recv`` from ``source`` at once (a halo
        exchange: no rank waits for another to receive first)."""
        return self._p2p("sendrecv", send, dest, recv, source, depends_on, handler)

    def _p2p(self, kind, send, dest, recv, source, depends_on, handler):
        s = self._memory(send, f"{kind} send buffer") if send is not None else None
        r = self._memory(recv, f"{kind} receive buffer") if recv is not None else None
        dest = self._peer(dest, f"{kind} destination") if s is not None else None
        source = self._peer(source, f"{kind} source") if r is not None else None

        def run(ih):
            self._agree_pair(kind, dest, (s.count, s.dtype) if s is not None else None, source,
                             (r.count, r.dtype) if r is not None else None)
            if self.gpu:
                nccl = self._communicator()
                from .cuda import nccl as lib
                stream = ih.get_native_queue()
                lib.call("ncclGroupStart", what=kind)
                try:
                    if s is not None:
                        lib.call("ncclSend", s.ptr, s.nbytes, 1, dest, nccl, stream, what=kind)
                    if r is not None:
                        lib.call("ncclRecv", r.ptr, r.nbytes, 1, source, nccl, stream, what=kind)
                finally:
                    lib.call("ncclGroupEnd", what=kind)
                return
            requests = []
            if s is not None:
                requests.append(self._comm.Isend(_bytes(s), dest, _TAG_DATA))
            if r is not None:
                requests.append(self._comm.Irecv(_bytes(r), source, _TAG_DATA))
            self._wait(requests, kind)
        return self._submit(kind, run, tuple(m for m in (s, r) if m is not None), handler, depends_on)

    def barrier(self, *, depends_on=None, handler=None):
        """Every rank has reached this command (host-side: on a GPU it does not wait for the stream)."""
        return self._submit("barrier", lambda ih: self._agree("barrier", 0, np.dtype(np.uint8)), (), handler,
                            depends_on)

    @staticmethod
    def _same(s: usm_allocation, r: usm_allocation, kind: str, need: int) -> None:
        if s.dtype != r.dtype:
            raise exception(errc.invalid, f"{kind}: the send buffer holds {s.dtype}, the receive buffer {r.dtype}")
        if r.count < need:
            raise exception(errc.invalid, f"{kind}: the receive buffer holds {r.count} elements, {need} are needed")

    # -- NCCL ---------------------------------------------------------------------------

    def _reducible(self, dtype: np.dtype, kind: str) -> None:
        if dtype not in _REDUCIBLE and not (self.gpu and dtype == np.float16):
            raise exception(errc.invalid, f"{kind} of {dtype} elements: reductions take 8-, 32- and 64-bit "
                                          f"integers and 32- and 64-bit floating point (16-bit on a GPU too)")

    @staticmethod
    def _nccl_type(dtype: np.dtype, kind: str) -> int:
        from .cuda.nccl import DATATYPES
        return DATATYPES[dtype.str.lstrip("<=|")]

    def _communicator(self):
        """The NCCL communicator of this queue's device (made at first use, see the docstring)."""
        if self._nccl is None:
            from .cuda import nccl
            if nccl.load() is None:
                raise exception(errc.runtime, f"collectives on {self.queue.device.name}: {nccl.why_unavailable()}")
            uid = nccl.UniqueId()
            if self.rank == 0:
                nccl.call("ncclGetUniqueId", uid, what="ncclGetUniqueId")
            raw = np.frombuffer(bytearray(uid), dtype=np.uint8).copy()
            self._wait([self._comm.Ibcast(raw, 0)], "setting up NCCL (its unique id)")
            ctypes_id = nccl.UniqueId.from_buffer_copy(raw.tobytes())
            self.queue.device.activate()
            import ctypes
            comm = ctypes.c_void_p()
            nccl.call("ncclCommInitRank", ctypes.byref(comm), self.size, ctypes_id, self.rank,
                      what=f"ncclCommInitRank (rank {self.rank} of {self.size})")
            self._nccl = comm
        return self._nccl

    def _nccl_call(self, name: str, ih, *args) -> None:
        from .cuda import nccl
        comm = self._communicator()
        nccl.call(name, *args, comm, ih.get_native_queue(), what=f"{name} on rank {self.rank}")

    def free(self) -> None:
        """Release the NCCL communicator and the MPI one (collectively, like MPI_Comm_free)."""
        if self._nccl is not None:
            from .cuda import nccl
            nccl.call("ncclCommDestroy", self._nccl, what="ncclCommDestroy")
            self._nccl = None
        if self.broken is None and self._comm is not None:
            self._comm.Free()
            self._comm = None


def _nccl_op(op: str) -> int:
    from .cuda.nccl import OPS
    return OPS[op]


def _mpi_op(MPI, op: str):
    return {"plus": MPI.SUM, "multiplies": MPI.PROD, "minimum": MPI.MIN, "maximum": MPI.MAX}[op]


def _bytes(m: usm_allocation, nbytes: int | None = None) -> np.ndarray:
    """``m``'s bytes as a NumPy array (host memory) for MPI."""
    return m.array.view(np.uint8)[:m.nbytes if nbytes is None else nbytes]


def _abort(MPI) -> None:
    """At exit after a timeout: MPI_Finalize would wait for the collective that never ended."""
    try:
        MPI.COMM_WORLD.Abort(1)
    except Exception:  # noqa: BLE001
        pass
