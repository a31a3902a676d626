"""Queues on an NVIDIA GPU: one CUDA stream per queue.

Commands are enqueued on the queue's stream as they are submitted and run in
submission order there: a valid schedule for in-order and out-of-order queues
alike (an out-of-order queue may run commands in any order that respects
dependencies; submission order does).  A dependency on an event of another
queue is ``cuStreamWaitEvent``.  Events stand for a point of the stream: each
command has a sequence number, and a CUDA event is recorded only when one is
needed — at once with ``enable_profiling`` (start and end, whose
``command_start``/``command_end`` come from ``cuEventElapsedTime`` from a
reference event recorded when the queue was made, added to the host clock at
that moment), otherwise when the event is waited on or depended on while later
commands are on the stream (recorded then, it covers this command and those
after it: waiting for more is still a valid wait).  Waiting on the latest
command waits for the stream, any other for a CUDA event, polling with
``cuStreamQuery``/``cuEventQuery`` so that Ctrl-C can stop a wait (``_await``:
one query when the command is done, one per poll while it is not); an event
whose command is known to be finished (a synchronisation since) costs no
driver call.  Host tasks
run on the submitting thread once everything before them on the stream has
finished.  Kernels launch with ``cuLaunchKernelEx`` (``cuLaunchKernel`` before
CUDA 12: ``driver.launcher``): ``id`` kernels over a grid
rounded up to whole blocks (the kernel checks the range), ``nd_item`` kernels
with one block per work-group.  Each kernel keeps its parameter memory on the
queue (``_Launch``: the range values, the argument slots and the pointer
array the driver reads, built once, and the launch call's arguments per launch
shape, handles passed by value: ``driver.by_value``), so a launch writes the
new values and makes one driver call.  ``single_task``/``parallel_for`` without
dependencies on a queue that neither records nor profiles take a fast path:
the same checks (arguments, range, memory of another device) without a
handler, a command object or an event record.

A kernel that faults (an illegal address) is reported when the queue or one
of its events is next synchronised: ``errc::runtime`` naming the kernels
launched since the last synchronisation and saying that the CUDA context is
lost (the driver refuses every later command; the device then says so).
"""
from __future__ import annotations

import ctypes
import time

import numpy as np

from ...passes.ir import ASSERT_MESSAGE
from ..backend import (UNPROFILED_GRAPH, DynamicValue, KernelCommand, allocation_starting_at, check_command_group,
                       check_graph_submission, check_local_memory, check_local_size, checked_memory, copy_details,
                       device_global_copy, errc, event, exception, failure, fill_details, foreign, handler,
                       kernel as Kernel, launch_geometry, pack_slots, PLAIN, queue, reduction, storage_address,
                       usm_allocation)
from . import driver
from .commands import CopyCommand, FillCommand, peer_devices
from .memory import cuda_allocation

__all__ = ["cuda_queue", "cuda_event", "cuda_handler"]

_NON_BLOCKING = 1
#: launch calls kept per kernel and queue (``cuda_queue._call``)
_CALLS = 32
#: the context each thread has current (``device.activate``): a launch calls ``activate`` only to change it
_current = driver.current
_DISABLE_TIMING = 2
_NOT_READY = 600
_SHARED_ALIGN = 16
#: CUDA's local memory per thread (512 KiB on every architecture since compute capability 2.0)
_PRIVATE_PER_THREAD = 512 * 1024


#: a wait polls back to back this long (seconds), as CUDA's own synchronize spins by default,
#: reading the clock once per _SPIN_BATCH polls (the poll after the kernel's end comes as soon as it can)
_SPIN_S = 5e-3
_SPIN_BATCH = range(32)
#: then it sleeps between polls, each sleep this share of the time waited so far (at most _NAP_MAX):
#: a wait ends at most that share late, and a long one costs no core
_NAP_SHARE = 1 / 64
_NAP_MAX = 1e-3


def _await(fn, handle, synchronize: str, sync_handle) -> None:
    """Wait for a stream or event whose first query (``fn``: the unchecked
    ``cuStreamQuery`` or ``cuEventQuery``, ``handle`` as it takes it) answered
    other than ``CUDA_SUCCESS``, in a way Ctrl-C can stop: the driver's
    synchronize call cannot be interrupted, so this polls, first back to back
    for ``_SPIN_S`` (kernels of microseconds to milliseconds: no sleep's
    latency, and a clock read only every ``_SPIN_BATCH`` polls), then with
    sleeps of ``_NAP_SHARE`` of the time waited so far, at most ``_NAP_MAX``:
    a wait ends at most that share late (sleeps that doubled up to a
    millisecond ended a 2.4 ms wait up to a millisecond late, and batches of
    memory-bound kernels measured 20% slower than CUDA's own).  Python runs its
    signal handlers between polls, so SIGINT raises ``KeyboardInterrupt``
    here; the queue stays usable (the work goes on on the GPU, as after a wait
    that returned early).  A failed command's error comes from
    ``synchronize`` (``sync_handle``: the handle as its declared argument type
    takes it)."""
    clock = time.perf_counter
    start = clock()
    deadline = start + _SPIN_S
    rc = _NOT_READY
    while rc == _NOT_READY:
        for _ in _SPIN_BATCH:
            rc = fn(handle)
            if rc != _NOT_READY:
                break
        if clock() >= deadline:
            break
    while rc == _NOT_READY:
        time.sleep(min((clock() - start) * _NAP_SHARE, _NAP_MAX))
        rc = fn(handle)
    if rc != 0:
        driver.call(synchronize, sync_handle)     # the failure, named as the synchronize call names it


class _Pooled:
    """The CUDA events an event holds, back in its queue's pool when the event is
    gone (the finalizer is here, not on ``cuda_event``: most events never get one,
    and a finalizer on every event would cost each launch its call)."""

    __slots__ = ("q", "events")

    def __init__(self, q: "cuda_queue", *events):
        self.q, self.events = q, events

    def __del__(self):
        try:
            for ev in self.events:
                self.q._recycle(ev)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class cuda_event(event):  # noqa: N801
    """A command's completion on the GPU: its place on the queue's stream
    (``seq``) and, once needed, a CUDA event (see the module docstring).  Made
    with the queue, the place and the command's name only (a launch's event);
    ``_profiled`` adds the times and CUDA events of a profiling queue."""

    _profiling = False      # (no times: ``get_profiling_info`` refuses before reading them)
    _start = _end = None    # CUDA events: the command's start (profiling) and a point after its end
    _pooled = None          # ... and what gives them back (``_Pooled``)

    def __init__(self, q: "cuda_queue", seq: int, label: str):
        self._q, self._seq, self._label = q, seq, label

    def _profiled(self, submit_ns: int, start, end) -> "cuda_event":
        """This event with a profiling queue's submission time and CUDA events."""
        event.__init__(self, submit_ns, submit_ns, submit_ns, True)
        self._start, self._end = start, end
        self._pooled = _Pooled(self._q, *((start,) if start is end else (start, end)))
        return self

    def _finished(self) -> bool:
        """Known to be finished: a synchronisation covered it."""
        return self._q._done >= self._seq

    def _cuda_end(self):
        """A CUDA event that completes no earlier than this command, or ``None``
        when the command is known to be finished."""
        if self._end is None:
            if self._finished():
                return None
            self._end = self._q._record_now()
            self._pooled = _Pooled(self._q, self._end)
        return self._end

    def wait(self) -> None:
        # (never an event of a command recorded into a graph: recording gives the host's
        # events, ``graph/recording.py``; so no ``_node`` test, and no class attribute
        # read, an instance's look-up of which is the slow kind)
        q = self._q
        seq = self._seq
        if q._done >= seq:                  # known finished: no driver call
            return
        if q._seq == seq:                   # the latest command: one stream synchronisation
            q._synchronize(None, self._label)
            return
        q._synchronize(self._cuda_end(), self._label)

    wait_and_throw = wait

    @property
    def status(self) -> str:
        self._recorded("get_info")
        if self._end is None and self._finished():
            return "complete"
        q = self._q
        if self._end is None and q._seq == self._seq:
            seq = q._seq
            if driver.query("cuStreamQuery", q._stream) == _NOT_READY:
                return "running"
            q._done = max(q._done, seq)
            return "complete"
        rc = driver.query("cuEventQuery", self._cuda_end())
        return "running" if rc == _NOT_READY else "complete"

    def get_profiling_info(self, what: str) -> int:
        self._recorded("get_profiling_info")
        super().get_profiling_info(what)            # the profiling and name checks
        if what == "command_submit":
            return self._times[what]
        self.wait()
        return self._q._gpu_ns(self._start if what == "command_start" else self._end)


def _device_string(address: int, limit: int = 4096) -> str:
    """The NUL-terminated string at a device address (a message constant of a
    kernel's module), read a byte at a time past a failing chunk read."""
    out = bytearray()
    while len(out) < limit:
        chunk = (ctypes.c_char * 64)()
        if driver.query("cuMemcpy", ctypes.addressof(chunk), address + len(out), 64) == 0:
            raw = bytes(chunk)
        else:                           # near the end of the module's memory
            one = (ctypes.c_char * 1)()
            if driver.query("cuMemcpy", ctypes.addressof(one), address + len(out), 1):
                break
            raw = bytes(one)
        end = raw.find(b"\0")
        out += raw if end < 0 else raw[:end]
        if end >= 0:
            break
    return out.decode("utf-8", "replace")


class _Launch:
    """What every launch of one kernel on a queue reuses: its ``CUfunction``, the
    parameter memory (the three range values an ``id``/``nd_item`` kernel takes
    first, then the 8-byte argument slots), the array of pointers to each
    parameter that ``cuLaunchKernel`` reads (the driver copies the values at the
    call, so the memory is rewritten by the next launch), and the (grid, block)
    of each range seen.

    For the fast path (``cuda_queue._fast``), what its previous fast launch left: ``last`` (the range and
    arguments as given; ``None`` once anything else rewrote the memory),
    ``allocations`` (those of its arguments), ``call`` (the whole argument list
    of its launch call, ``None`` for an empty range)."""

    __slots__ = ("kernel", "fn", "fn_arg", "linked", "flag", "n", "total", "dims", "slots", "params", "byref",
                 "pointers", "scalars", "local", "shapes", "calls", "last", "call", "allocations")

    def __init__(self, fn, k, linked):
        self.kernel, self.fn, self.linked = k, fn, linked
        self.fn_arg = driver.by_value(fn)           # (the function as the launch call takes it cheapest)
        self.flag = linked.global_address(ASSERT_MESSAGE)     # the assert hook's flag, 0 when the code has none
        self.n = len(k.params)
        # (a struct by value: its bytes in slots after the parameters', which its pointer names)
        self.total = k.signature.slot_count
        self.slots = (ctypes.c_uint64 * max(self.total, 1))()
        self.dims = (ctypes.c_int64 * 3)() if k.item is not None else None
        ptrs = [ctypes.addressof(self.dims) + 8 * d for d in range(3)] if self.dims is not None else []
        ptrs += [ctypes.addressof(self.slots) + 8 * at for at in k.signature.value_slots()]
        self.params = (ctypes.c_void_p * max(len(ptrs), 1))(*ptrs)
        self.byref = ctypes.byref(self.params)      # (what ctypes passes for it without a conversion per call)
        self.pointers = tuple(i for i, ty in enumerate(k.params) if ty.endswith("*") and not ty.startswith("local "))
        self.scalars = tuple(i for i in range(self.n) if i not in self.pointers)
        self.local = any(ty.startswith("local ") for ty in k.params)     # work-group memory sized at launch
        self.shapes: dict = {}
        self.calls: dict = {}       # (grid, block, shared memory) -> the launch call's arguments (``_call``)
        self.last, self.call, self.allocations = None, None, ()


class _NoLaunch:
    """What a queue's ``_hot`` is before its first fast launch: the plan of no kernel
    (``kernel`` is no object a caller can pass, ``None`` included; no last launch)."""
    kernel = object()
    last = None


_new = object.__new__

#: argument types whose objects never change value (a fast launch may reuse their slots)
_STABLE = PLAIN - {usm_allocation}
#: argument types that are never another library's memory, a dynamic value or a reduction
_PLAIN = PLAIN | {cuda_allocation}


class cuda_handler(handler):  # noqa: N801
    """The command-group handler of a GPU queue: the same checks as the CPU's
    (``handler.py``); bytes move on the queue's stream instead of by the host."""

    def _copy_bytes(self, d, s, n: int, label: str) -> None:
        """A copy on the stream (two GPUs' device memory: a peer copy, ``cuda/commands.py``)."""
        self._record(CopyCommand(d.address, s.address, n, label, peer_devices(d.allocation, s.allocation),
                                 uses=(d.allocation, s.allocation), details=copy_details(s.address, d.address, n)))

    def _fill_bytes(self, kind: str, m, element: bytes, count: int, label: str) -> None:
        self._record(FillCommand(kind, m.address, element, count, label, uses=(m.allocation,),
                                 details=fill_details(kind, m.address, element, count)))

    def _device_global_copy(self, dg, other, direction: str, offset: int, nbytes: int) -> None:
        dg.check_access(direction)
        dg.check_bounds(direction, offset, nbytes)
        if isinstance(other, np.ndarray) and not other.flags["C_CONTIGUOUS"]:
            raise exception(errc.invalid, f"copy {direction} device_global '{dg.name}' needs a contiguous array")
        m = checked_memory(other, f"copy {direction} device_global '{dg.name}'", nbytes, writes=direction == "from")
        host, q = m.address, self.queue
        # (another GPU's device memory: a peer copy with the storage on this one)
        other_gpu = m.allocation.device if m.allocation is not None and not m.allocation.host_accessible \
            and m.allocation.device is not q.device else None

        def run():
            where = storage_address(dg, q.device, q.context) + offset
            if direction == "to":
                q._copy(where, host, nbytes, peer=(q.device, other_gpu) if other_gpu else None)
            else:
                q._copy(host, where, nbytes, peer=(other_gpu, q.device) if other_gpu else None)
        self._record(device_global_copy(run, dg, direction, host, offset, nbytes))



class cuda_queue(queue):  # noqa: N801
    """A queue of an NVIDIA GPU (see the module docstring)."""

    backend = "cuda"
    _handler_class = cuda_handler
    _graphs_directly = False        # graphs go through submit: stream order, cuda_event
    _hot = _NoLaunch                # the ``_Launch`` of the kernel of the last fast launch

    def __init__(self, dev=None, *, in_order: bool = False, enable_profiling: bool = False, device_selector=None,
                 context=None):
        super().__init__(dev, in_order=in_order, enable_profiling=enable_profiling, device_selector=device_selector,
                         context=context)
        self.device.activate()
        self._stream = ctypes.c_void_p()
        driver.call("cuStreamCreate", ctypes.byref(self._stream), _NON_BLOCKING, what=f"a stream on {self.device.name}")
        self._pending: dict = {}               # kernel name -> the place of its latest launch on the stream
        self._synced = 0                       # ... those after this place: launched since the last synchronisation
        self._ref = None
        self._pool = {True: [], False: []}       # free events, by whether they record time
        self._timing: dict[int, bool] = {}
        self._launches: dict = {}      # id(kernel) -> _Launch (the kernels kept in _keep)
        self._keep: list = []
        self._seq = 0                  # commands submitted (each command's place on the stream)
        self._done = 0                 # ... of which these are known to have finished
        self._async_errors: list = []  # exceptions of host tasks run by CUDA graphs (cuda/graph.py)
        self._asserts: dict = {}       # assert flags of the kernels launched since the last wait -> a kernel
        self._held: list = []          # other libraries' memory used by commands not known finished (interop)
        # (without declared argument types: ctypes converts those in Python at each call)
        self._cu_launch, self._launch_ex = driver.launcher()
        self._stream_query = driver.unchecked("cuStreamQuery")
        self._event_query = driver.unchecked("cuEventQuery")
        self._stream_arg = driver.by_value(self._stream)      # (the stream as those take it cheapest)
        if enable_profiling:
            self._ref = self._new_event(timing=True)
            driver.call("cuEventRecord", self._ref, self._stream)
            driver.call("cuEventSynchronize", self._ref)
            self._ref_ns = time.perf_counter_ns()

    def __del__(self):
        try:
            if self.device.lost or not (self._pool[True] or self._pool[False] or getattr(self, "_stream", None)):
                return
            with self.device.borrowed() as live:    # (its own GPU's context, whichever thread collects it)
                if live:
                    for ev in self._pool[True] + self._pool[False]:
                        driver.query("cuEventDestroy_v2", ev)
                    if getattr(self, "_stream", None):
                        driver.query("cuStreamDestroy_v2", self._stream)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    # -- building blocks ----------------------------------------------------------------

    def _new_event(self, timing: bool):
        pool = self._pool[timing]
        if pool:
            return pool.pop()
        ev = ctypes.c_void_p()
        driver.call("cuEventCreate", ctypes.byref(ev), 0 if timing else _DISABLE_TIMING)
        self._timing[ev.value] = timing
        return ev

    def _recycle(self, ev) -> None:
        """An event no one can wait on any more goes back to the pool (no create/destroy per command)."""
        if ev is not self._ref:
            self._pool[self._timing.get(ev.value, True)].append(ev)

    def _record_now(self):
        """A CUDA event recorded now on the stream (after every command submitted so far);
        made in this queue's context (another GPU's queue may be asking: a dependency)."""
        self.device.activate()
        ev = self._new_event(timing=False)
        driver.call("cuEventRecord", ev, self._stream)
        return ev

    def hold_until_done(self, obj) -> None:
        """Keep ``obj`` (another library's memory a command uses: ``interop.adopt``) until
        a synchronisation covers the commands submitted from now on."""
        self._held.append((self._seq + 1, obj))

    def _gpu_ns(self, ev) -> int:
        ms = ctypes.c_float()
        driver.call("cuEventElapsedTime", ctypes.byref(ms), self._ref, ev)
        return self._ref_ns + int(ms.value * 1e6)

    def _copy(self, dst: int, src: int, n: int, peer=None) -> None:
        """``n`` bytes on the stream: ``cuMemcpyAsync`` (one address space: host, managed and
        this or another GPU's memory), or ``cuMemcpyPeerAsync`` between the device memory
        of two GPUs (``peer``: (destination GPU, source GPU))."""
        if not n:
            return
        if peer is None:
            driver.call("cuMemcpyAsync", dst, src, n, self._stream, what=f"a copy of {n} bytes on {self.device.name}")
        else:
            to, frm = peer
            driver.call("cuMemcpyPeerAsync", dst, to.primary_context(), src, frm.primary_context(), n, self._stream,
                        what=f"a copy of {n} bytes from {frm.name} to {to.name}")

    def _memset(self, ptr: int, value: int, width: int, count: int) -> None:
        if count:
            fn = {1: "cuMemsetD8Async", 2: "cuMemsetD16Async", 4: "cuMemsetD32Async"}[width]
            driver.call(fn, ptr, value, count, self._stream, what=f"a fill on {self.device.name}")

    def _failed(self, err: driver.DriverError, what: str):
        names = ", ".join(f"'{k}'" for k, at in self._pending.items() if at > self._synced) or "none"
        self._synced = self._seq
        message = f"{what} on {self.device.name} failed: {err.name} (kernels launched since the last wait: {names})"
        if err.result in driver.CONTEXT_LOST:
            message += ("; the device's CUDA context is lost: every later command on this device fails "
                        "(restart the process to use it again)")
            self.device.lost = message
        return exception(errc.runtime, message)

    def _synchronize(self, ev=None, label: str = "") -> None:
        dev = self.device
        if dev.lost is not None or _current.context is not dev._context:
            dev.activate()
        seq = self._seq                 # (counted once launched: these are all on the stream)
        try:
            if ev is None:
                if self._stream_query(self._stream_arg):     # (not finished, or failed: ``_await`` polls and says)
                    _await(self._stream_query, self._stream_arg, "cuStreamSynchronize", self._stream)
            elif self._event_query(ev):
                _await(self._event_query, ev, "cuEventSynchronize", ev)
        except driver.DriverError as err:
            raise self._failed(err, f"command '{label}'" if label else "the queue") from None
        if ev is None:
            self._synced = seq
            if seq > self._done:
                self._done = seq
            if self._held:
                self._held = [h for h in self._held if h[0] > seq]
        if self._asserts:
            self._check_asserts(finished=ev is None)
        if self._async_errors:          # a host task of a CUDA graph raised (it ran on the driver's thread)
            err = self._async_errors[0]
            self._async_errors.clear()
            raise err

    def _check_asserts(self, finished: bool) -> None:
        """A failed ``assert`` (or a host-only virtual method's stub) in a kernel
        launched since the last wait: its module's flag holds the message's
        address (``lower-to-nvptx`` step 6); raised as ``errc::runtime``, the
        flag cleared.  ``finished``: every launch is done, stop watching them."""
        watched = self._asserts
        for flag, kernel in list(watched.items()):
            word = ctypes.c_uint64()
            driver.call("cuMemcpy", ctypes.addressof(word), flag, 8, what="reading a kernel's assert flag")
            if word.value:
                message = _device_string(word.value)
                word.value = 0
                driver.copy_now(flag, ctypes.addressof(word), 8, what="clearing a kernel's assert flag")
                watched.clear()
                raise failure(message, kernel)
        if finished:
            watched.clear()

    def _plan(self, k) -> _Launch:
        """The ``_Launch`` of kernel ``k`` on this queue (built on first use; kept
        by the kernel object's id, the kernel kept alive with it so that the id
        names no other object)."""
        plan = self._launches.get(id(k))
        if plan is None:            # the program keeps its built module for this device and context
            linked, _ = k.program.linked_for(k.name, self.device, self.context)
            plan = self._launches[id(k)] = _Launch(linked.function(k.name), k, linked)
            self._keep.append(k)
        return plan

    def _check_pointers(self, k, plan: _Launch, slots) -> None:
        for i in plan.pointers:
            if slots[i]:
                owner = allocation_starting_at(int(slots[i]))      # the allocation the address starts, if any
                if owner is None:
                    continue
                if not isinstance(owner, cuda_allocation):
                    raise exception(errc.invalid, f"argument {i + 1} of kernel '{k.name}' is host USM of another "
                                                  f"device: allocate it with this queue")
                if owner.device is not self.device and owner.kind == "device" and \
                        not self.device.impl.peer_enabled(owner.device):
                    raise exception(errc.invalid, f"argument {i + 1} of kernel '{k.name}' is device memory of "
                                                  f"{owner.device.name}, which {self.device.name} cannot access: "
                                                  f"enable peer access (device.ext_oneapi_enable_peer_access) or "
                                                  f"copy it")

    def _shape(self, k, plan: _Launch, geometry) -> tuple:
        """(grid, block) of a launch over ``geometry``, and the range values written."""
        key = tuple(geometry)
        shape = plan.shapes.get(key)
        if shape is None:
            shape = plan.shapes[key] = self.launch_shape(k, geometry)
        dims = plan.dims
        if dims is not None:
            dims[0], dims[1], dims[2] = max(key[0], 1), max(key[1], 1), max(key[2], 1)
        return shape

    def _call(self, plan: _Launch, grid, block, shared: int = 0) -> tuple:
        """The arguments of the launch call (``driver.launcher``) for a launch with the
        plan's parameters: ``cuLaunchKernelEx``'s configuration (kept alive by its
        ``byref``), the function, the parameters and no extra options, or
        ``cuLaunchKernel``'s eleven (pointers as ctypes objects, the rest 32-bit:
        ``driver.unchecked``).  Kept per launch shape (a few per kernel; at most
        ``_CALLS``, the oldest dropped)."""
        key = (grid, block, shared)
        call = plan.calls.get(key)
        if call is not None:
            return call
        if self._launch_ex:
            config = driver.LaunchConfig(grid[0], grid[1], grid[2], block[0], block[1], block[2], shared,
                                         self._stream, None, 0)
            call = ctypes.byref(config), plan.fn_arg, plan.byref, None
        else:
            call = (plan.fn_arg, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, self._stream_arg,
                    plan.byref, None)
        if len(plan.calls) >= _CALLS:
            del plan.calls[next(iter(plan.calls))]
        plan.calls[key] = call
        return call

    def _fire(self, k, plan: _Launch, call: tuple) -> None:
        """The launch call with arguments ``call`` (``_call``; the caller holds the queue's lock)."""
        rc = self._cu_launch(*call)
        if rc:
            self._launch_failed(k, plan, rc, call)
        self._pending[k.name] = self._seq + 1
        if plan.flag:
            self._asserts[plan.flag] = k.name

    def _launch_failed(self, k, plan: _Launch, rc: int, call: tuple):
        """Raise for a launch the driver refused (``call``: the launch call's arguments, ``_call``).
        A kernel whose stack frame reaches CUDA's local memory per thread is
        ``errc::runtime`` naming both (what the same kernel's stack overflow is on
        the CPU); a launch beyond the GPU otherwise ``errc::nd_range`` (``_launch_refused``)."""
        if rc not in driver.CONTEXT_LOST:
            private = plan.linked.private_bytes(k.name)
            if private >= _PRIVATE_PER_THREAD:
                raise exception(errc.runtime, f"kernel '{k.name}' cannot launch on {self.device.name}: it needs "
                                              f"{private} bytes of private memory per work-item (its stack frame, "
                                              f"CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES), and CUDA gives a thread less "
                                              f"than {_PRIVATE_PER_THREAD} bytes of local memory "
                                              f"({driver.error_name(rc)})")
        if rc in (driver.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, driver.CUDA_ERROR_INVALID_VALUE):
            if self._launch_ex:
                c = call[0]._obj
                grid, block = (c.gridDimX, c.gridDimY, c.gridDimZ), (c.blockDimX, c.blockDimY, c.blockDimZ)
                raise self._launch_refused(k, plan, rc, grid, block, c.sharedMemBytes)
            raise self._launch_refused(k, plan, rc, call[1:4], call[4:7], call[7])
        try:
            driver.raise_for(rc, f"launching kernel '{k.name}'")
        except driver.DriverError as err:
            if err.result in driver.CONTEXT_LOST:
                raise self._failed(err, f"launching kernel '{k.name}'") from None
            raise

    def _launch_refused(self, k, plan: _Launch, rc: int, grid, block, shared: int) -> exception:
        """``errc::nd_range`` for a launch the driver refused as beyond the GPU
        (``CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES``: the block's threads need more
        registers than a multiprocessor has; ``CUDA_ERROR_INVALID_VALUE``: a
        dimension or the shared memory beyond the device), naming the limits.
        The checks before the launch (``launch_shape``, ``_shared_memory``) refuse
        what they can tell; this names what only the driver saw."""
        static, max_threads = plan.linked.limits(k.name)
        a = self.device.attrs
        return exception(errc.nd_range, f"kernel '{k.name}' cannot launch on {self.device.name} with blocks of "
                                        f"{block[0]}x{block[1]}x{block[2]} threads, a grid of "
                                        f"{grid[0]}x{grid[1]}x{grid[2]} and {static + shared} bytes of shared memory: "
                                        f"{driver.error_name(rc)}; its compiled code runs at most {max_threads} "
                                        f"threads per block (its registers: CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK), "
                                        f"the device at most {a['max_threads_per_block']} "
                                        f"({a['max_block_x']}, {a['max_block_y']}, {a['max_block_z']} along x, y, z) "
                                        f"and {self.device.local_mem_size} bytes of shared memory per block")

    def _launch(self, k, slots, total: int, geometry) -> None:
        plan = self._plan(k)
        plan.last = None                 # the memory is rewritten: the next fast launch packs again
        self._check_pointers(k, plan, slots)
        grid, block = self._shape(k, plan, geometry)
        slots, shared = self.work_group_checks(k, plan, slots, geometry, block)
        if plan.n:
            ctypes.memmove(plan.slots, slots, 8 * plan.total)
        self._fire(k, plan, self._call(plan, grid, block, shared))

    def work_group_checks(self, k, plan: _Launch, slots, geometry, block):
        """(the slots to launch with, bytes of dynamic shared memory) of an
        nd_range launch or one with ``local T*`` arguments, after checking
        ``reqd_work_group_size`` and the GPU's limits (``_shared_memory``)."""
        nd = k.item is not None and k.item.startswith("nd_item")
        if not nd and not plan.local:
            return slots, 0
        if nd:
            check_local_size(k, geometry, self.device)      # reqd_work_group_size (work_groups.py)
        return self._shared_memory(k, plan.linked, slots, block if nd else None)

    def _shared_memory(self, k, linked, slots, block):
        """(the slots to launch with, bytes of dynamic shared memory): each ``local T*``
        argument (its slot holds its size, ``work_groups.pack_local``) becomes its
        offset in the kernel's ``extern .shared`` array, 16-byte aligned.  Checked
        first: static and dynamic shared memory together against the GPU's limit per
        block, and (``block``: an nd_range launch) the work-group size against what the
        compiled kernel can run (``errc::nd_range``)."""
        local = [i for i, ty in enumerate(k.params) if ty.startswith("local ")]
        if not local and block is None:
            return slots, 0
        static, max_threads = linked.limits(k.name)
        if block is not None:
            threads = block[0] * block[1] * block[2]
            if threads > max_threads:
                raise exception(errc.nd_range, f"kernel '{k.name}': a work-group of {threads} work-items exceeds the "
                                               f"{max_threads} threads per block its compiled code can run on "
                                               f"{self.device.name} (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)")
        if not local:
            return slots, 0
        out = (ctypes.c_uint64 * max(len(slots), 1))(*slots)     # (with the bytes of any struct argument)
        offset = 0
        for i in local:
            offset = (offset + _SHARED_ALIGN - 1) // _SHARED_ALIGN * _SHARED_ALIGN
            size = int(slots[i])
            out[i] = offset
            offset += size
        check_local_memory(k, self.device, static, offset, self.device.local_mem_size)
        linked.allow_dynamic_shared(k.name, offset)
        return out, offset

    def native_stream(self) -> int:
        """The queue's ``CUstream`` as an integer (interop: order other libraries' work on it)."""
        return int(self._stream.value or 0)

    def prepare_reductions(self, args) -> None:
        """``initialize_to_identity``: the identity written into the result on this
        stream before the kernel (memsets: captured into a CUDA graph as well)."""
        for a in args:
            if isinstance(a, reduction) and a.initialize_to_identity:
                raw = np.array(a.op.identity(a.ptr.dtype), dtype=a.ptr.dtype).tobytes()
                p = a.ptr.ptr
                if len(raw) in (1, 2, 4):
                    self._memset(p, int.from_bytes(raw, "little"), len(raw), 1)
                else:                      # 8 bytes: two 32-bit words
                    self._memset(p, int.from_bytes(raw[:4], "little"), 4, 1)
                    self._memset(p + 4, int.from_bytes(raw[4:], "little"), 4, 1)

    def launch_shape(self, k, geometry) -> tuple[tuple, tuple]:
        """(grid, block) in CUDA's x, y, z order for a launch of ``k``."""
        n = k.dims
        a = self.device.attrs
        if k.item is None:
            return (1, 1, 1), (1, 1, 1)
        glob = [int(geometry[d]) for d in range(n)]
        if k.item.startswith("nd_item"):
            loc = [int(geometry[3 + d]) for d in range(n)]
            threads = int(np.prod(loc))
            limit = a["max_threads_per_block"]
            if threads > limit:
                raise exception(errc.nd_range, f"kernel '{k.name}': a work-group of {threads} work-items exceeds "
                                               f"{self.device.name}'s limit of {limit} threads per block")
            block = list(reversed(loc))
            grid = [g // max(l, 1) for g, l in zip(reversed(glob), block)]
        else:
            shape = {1: [256], 2: [32, 8], 3: [32, 4, 2]}[n]
            block = shape
            grid = [-(-g // b) for g, b in zip(reversed(glob), block)]
        block += [1] * (3 - len(block))
        grid += [1] * (3 - len(grid))
        for axis, (b, key) in enumerate(zip(block, ("max_block_x", "max_block_y", "max_block_z"))):
            if b > a[key]:
                raise exception(errc.nd_range, f"kernel '{k.name}': a work-group of {b} work-items along dimension "
                                               f"{n - 1 - axis} (CUDA axis {'xyz'[axis]}) exceeds "
                                               f"{self.device.name}'s limit of {a[key]} along that axis")
        for axis, (g, key) in enumerate(zip(grid, ("max_grid_x", "max_grid_y", "max_grid_z"))):
            if g > a[key]:
                raise exception(errc.nd_range, f"kernel '{k.name}': the range needs {g} blocks along CUDA axis "
                                               f"{'xyz'[axis]}, more than {self.device.name}'s {a[key]}")
        return tuple(grid), tuple(block)

    # -- the queue --------------------------------------------------------------------

    def single_task(self, k, *args, depends_on=None) -> event:
        if depends_on is None and not self.profiling and self._recording_ref is None:
            return self._fast(k, None, args)
        return super().single_task(k, *args, depends_on=depends_on)

    def parallel_for(self, k, r, *args, depends_on=None) -> event:
        if depends_on is None and not self.profiling and self._recording_ref is None:
            return self._fast(k, r, args)
        return super().parallel_for(k, r, *args, depends_on=depends_on)

    def _fast(self, k, r, args) -> event:
        """A launch without a handler or a command: the checks of ``KernelCommand``
        and ``kernel.pack`` in the same order with the same errors, the values
        written into the kernel's ``_Launch`` memory, one launch call.

        A launch with the very objects of the kernel's previous fast launch (the
        same range, the same argument objects: values that cannot change, and
        allocations whose address, type and reach cannot) reuses that launch's
        checked slots and launch call; only a freed allocation is looked for
        again.  One that differs from it only in scalar arguments checks and
        packs those (``_rescalar``).  (Written for the fewest Python operations:
        the host's cost of a launch is counted in instructions.)"""
        plan = self._hot                    # (the plan of the kernel launched last, looked up without a hash)
        if plan.kernel is not k:
            plan = self._launches.get(id(k))
            if plan is None:
                return self._checked_fast(k, r, args)
        last = plan.last
        if last is None or last[0] is not r and not (type(r) is int and r == last[0]):
            return self._checked_fast(k, r, args)
        old = last[1]
        if len(args) != len(old):
            return self._checked_fast(k, r, args)
        i = 0
        for a in args:                      # (a loop: cheaper than any(map(is_not, ...)) for a few arguments)
            if a is not old[i]:
                return self._rescalar(k, r, args, plan, last)
            i += 1
        for a in plan.allocations:
            if a.freed:
                return self._checked_fast(k, r, args)
        lock = self._lock
        lock.acquire()          # (not ``with``: half the cost)
        try:
            dev = self.device
            if dev.lost is not None or _current.context is not dev._context:
                dev.activate()
            if plan.last is not last:           # (another thread's launch rewrote the memory)
                return self._checked_fast(k, r, args)
            seq = self._seq + 1
            call = plan.call
            if call is not None:
                rc = self._cu_launch(*call)
                if rc:
                    self._launch_failed(k, plan, rc, call)
                self._pending[k.name] = seq
                if plan.flag:
                    self._asserts[plan.flag] = k.name
            self._seq = seq                     # (after the launch: a wait counts only what is on the stream)
        finally:
            lock.release()
        self._hot = plan
        e = _new(cuda_event)                    # (cuda_event(self, seq, k.name) without a call of __init__)
        e._q, e._seq, e._label = self, seq, k.name
        return e

    def _rescalar(self, k, r, args, plan: _Launch, last) -> event:
        """A fast launch like the previous one (``last``) but for new objects as
        scalar arguments: those are checked and packed (``pack_slots``, the same
        errors), the range's shape and the pointers' checks kept."""
        old = last[1]
        for i in plan.pointers:
            if args[i] is not old[i]:
                return self._checked_fast(k, r, args)
        changed = [i for i in plan.scalars if args[i] is not old[i]]
        for i in changed:
            if type(args[i]) not in _STABLE:        # (a struct's bytes, a reduction, ...: the whole path)
                return self._checked_fast(k, r, args)
        lock = self._lock
        lock.acquire()
        try:
            dev = self.device
            if dev.lost is not None or _current.context is not dev._context:
                dev.activate()
            if plan.last is not last:
                return self._checked_fast(k, r, args)
            plan.last = None                    # (until the new values are all in)
            pack_slots(k.params, args, plan.slots, k._where, only=changed)
            if plan.call is not None:
                self._fire(k, plan, plan.call)
            seq = self._seq = self._seq + 1
            plan.last = (r, args)
        finally:
            lock.release()
        self._hot = plan
        return cuda_event(self, seq, k.name)

    @staticmethod
    def _direct(k, args) -> bool:
        """Whether a launch of ``k`` with ``args`` may skip the command group: a kernel
        without an ``nd_item``, work-group memory or a ``kernel_handler``'s slot, and
        no argument that is a dynamic value, a reduction or another library's memory."""
        if not isinstance(k, Kernel) or k.handler or k.item is not None and k.item.startswith("nd_item") \
                or any(t.startswith("local ") for t in k.params):
            return False
        return all(type(a) in _PLAIN or not (isinstance(a, (DynamicValue, reduction)) or foreign(a)) for a in args)

    def _checked_fast(self, k, r, args) -> event:
        if not self._direct(k, args):
            return self.submit(lambda h: h.parallel_for(k, r, *args))
        _, geometry = launch_geometry(k, r)
        if len(args) != len(k.params):
            k.pack(args)                             # raises its errc::invalid
        with self._lock:
            dev = self.device
            if dev.lost is not None or _current.context is not dev._context:
                dev.activate()
            plan = self._plan(k)
            plan.last = None
            slots = plan.slots
            pack_slots(k.params, args, slots, k._where)
            self._check_pointers(k, plan, slots)
            call = None
            if k.item is None or all(geometry[d] for d in range(k.dims)):     # an empty range launches nothing
                call = self._call(plan, *self._shape(k, plan, geometry))
                self._fire(k, plan, call)
            seq = self._seq = self._seq + 1
            if (r is None or type(r) is int) and all(
                    self._reaches(a) if ty.endswith("*") else type(a) in _STABLE for ty, a in zip(k.params, args)):
                plan.call = call
                plan.allocations = tuple(a for a in args if isinstance(a, usm_allocation))
                plan.last = (r, args)
                self._hot = plan
            return cuda_event(self, seq, k.name)

    def _reaches(self, a) -> bool:
        """Whether a pointer argument's check (``_check_pointers``) holds for as long
        as the object lives (a fast launch may then skip it): a null pointer, or an
        allocation this GPU reaches without peer access (its own memory, pinned
        host or managed memory).  Another GPU's device memory is checked at each
        launch: peer access may be disabled in between.  (An integer address is
        checked each time.)"""
        return a is None or isinstance(a, cuda_allocation) and (a.device is self.device or a.kind != "device")

    def ext_oneapi_graph(self, graph, depends_on=None) -> event:
        """A replay without dependencies on a queue that neither records nor
        profiles, of a graph that is one CUDA graph: ``check_graph_submission``'s
        checks, the replay on this stream under the queue's lock and its event,
        without a handler or a command (as ``_fast`` launches a kernel); anything
        else goes through ``submit``."""
        if depends_on is not None or self._recording_ref is not None or self.profiling:
            return super().ext_oneapi_graph(graph, depends_on)
        check_graph_submission(self, graph)
        if graph._device_graph is None:
            return super().ext_oneapi_graph(graph, depends_on)
        lock = self._lock
        lock.acquire()                      # (not ``with``: a replay's hot path, and half the cost)
        try:
            graph._execute(self)            # (the replay makes the device's context current)
            self._seq += 1
            e = cuda_event(self, self._seq, "graph")
        finally:
            lock.release()
        if not graph.profiling:
            e._unprofiled = UNPROFILED_GRAPH
        return e

    def submit(self, cgf, depends_on=None) -> event:
        check_command_group(cgf)
        if self._recording is not None:
            return super().submit(cgf, depends_on)
        h = self._handler_class(self, None)
        if depends_on is not None:
            h.depends_on(depends_on)
        submitted = time.perf_counter_ns()
        cgf(h)
        recorded = self._close(h)             # (transitive recording: the host queue's rules)
        if recorded is not None:
            return recorded
        cmd = h.command
        if cmd is not None and isinstance(cmd, KernelCommand) and any(g == 0 for g in cmd.geometry[:cmd.kernel.dims]):
            cmd = None                           # an empty range: nothing to launch
        with self._lock:
            self.device.activate()
            for e in h.deps:
                if isinstance(e, cuda_event):
                    if e._q is not self:
                        ev = e._cuda_end()          # (recorded in its own queue's context)
                        if ev is not None:
                            self.device.activate()
                            driver.call("cuStreamWaitEvent", self._stream, ev, 0)
                else:
                    e.wait()
            start = end = None
            if self.profiling:
                start = self._new_event(timing=True)
                driver.call("cuEventRecord", start, self._stream)
            if cmd is not None:
                if cmd.kind == "host_task":
                    self._synchronize(None)
                cmd.run(self)
            if self.profiling:
                end = self._new_event(timing=True)
                driver.call("cuEventRecord", end, self._stream)
            self._seq += 1
            seq = self._seq
        e = cuda_event(self, seq, getattr(cmd, "label", "") or "")
        if self.profiling:
            e._profiled(submitted, start, end)
        e._unprofiled = getattr(cmd, "unprofiled", None)    # a graph finalized without enable_profiling
        return e

    def wait(self) -> None:
        super().wait()
        self._synchronize(None)

    def wait_and_throw(self) -> None:
        self.wait()

    # -- command graphs -----------------------------------------------------------------

    def run_graph_steps(self, steps) -> None:
        """Run an executable graph's commands one by one on this stream: the way
        for a graph that ``cuda/graph.py`` cannot make one CUDA graph (one
        holding a sub-graph, a reduction or a copy of host-only memory kinds)."""
        for step in steps:
            if step[0] != "python":
                continue
            c = step[1]
            if c.kind == "host_task":
                self._synchronize(None)
            c.run(self)
