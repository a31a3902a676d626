"""Queues on an NVIDIA GPU: one CUDA stream per queue.

Commands are enqueued on the queue's stream as they are submitted and run in
submission order there: a valid schedule for in-order and out-of-order queues
alike (an out-of-order queue may run commands in any order that respects
dependencies; submission order does).  A dependency on an event of another
queue is ``cuStreamWaitEvent``.  Events are CUDA events: ``wait`` synchronises
on them; with ``enable_profiling`` their ``command_start``/``command_end`` come
from GPU timestamps (``cuEventElapsedTime`` from a reference event recorded
when the queue was made, added to the host clock at that moment).  Host tasks
run on the submitting thread once everything before them on the stream has
finished.  Kernels launch with ``cuLaunchKernel``: ``id`` kernels over a grid
rounded up to whole blocks (the kernel checks the range), ``nd_item`` kernels
with one block per work-group.

A kernel that faults (an illegal address) is reported when the queue or one
of its events is next synchronised: ``errc::runtime`` naming the kernels
launched since the last synchronisation and saying that the CUDA context is
lost (the driver refuses every later command; the device then says so).
"""
from __future__ import annotations

import ctypes
import time

import numpy as np

from ..addresses import checked_address
from ..commands import Command, KernelCommand
from ..device_global import device_global, storage_address
from ..errors import errc, exception
from ..events import event
from ..handler import handler
from ..memory import _live, usm_allocation
from ..queue import queue
from ..reductions import reduction
from ..work_groups import check_local_size
from . import driver
from .memory import cuda_allocation

__all__ = ["cuda_queue", "cuda_event", "cuda_handler"]

_NON_BLOCKING = 1
_DISABLE_TIMING = 2
_NOT_READY = 600
_SHARED_ALIGN = 16


class cuda_event(event):  # noqa: N801
    """A command's completion on the GPU (a CUDA event)."""

    def __init__(self, q: "cuda_queue", submit_ns: int, start, end, label: str):
        super().__init__(submit_ns, submit_ns, submit_ns, q.profiling)
        self._q, self._start, self._end, self._label = q, start, end, label

    def wait(self) -> None:
        self._recorded("wait")
        self._q._synchronize(self._end, self._label)

    wait_and_throw = wait

    @property
    def status(self) -> str:
        self._recorded("get_info")
        rc = driver.query("cuEventQuery", self._end)
        return "running" if rc == _NOT_READY else "complete"

    def get_profiling_info(self, what: str) -> int:
        self._recorded("get_profiling_info")
        super().get_profiling_info(what)            # the profiling and name checks
        if what == "command_submit":
            return self._times[what]
        self.wait()
        return self._q._gpu_ns(self._start if what == "command_start" else self._end)

    def __del__(self):
        try:
            for ev in {id(e): e for e in (self._start, self._end) if e is not None}.values():
                self._q._recycle(ev)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class cuda_handler(handler):  # noqa: N801
    """The command-group handler of a GPU queue: copies and fills on the stream."""

    def _async_copy(self, d: int, s: int, n: int, label: str) -> None:
        q = self.queue
        self._record(Command("memcpy", lambda: q._copy(d, s, n), label))

    def memcpy(self, dst, src, nbytes: int | None = None, offset: int = 0) -> None:
        if isinstance(dst, device_global) or isinstance(src, device_global) or nbytes is None:
            return super().memcpy(dst, src, nbytes, offset)
        d, s = checked_address(dst, "memcpy", int(nbytes)), checked_address(src, "memcpy", int(nbytes))
        self._async_copy(d, s, int(nbytes), f"memcpy {int(nbytes)} bytes")

    def _device_global_copy(self, dg, other, direction: str, offset: int, nbytes: int) -> None:
        if self.graph is not None:
            raise exception(errc.invalid, "device_global copies cannot be added to a command graph")
        dg.check_access(direction)
        dg.check_bounds(direction, offset, nbytes)
        if isinstance(other, np.ndarray) and not other.flags["C_CONTIGUOUS"]:
            raise exception(errc.invalid, f"copy {direction} device_global '{dg.name}' needs a contiguous array")
        host = checked_address(other, f"copy {direction} device_global '{dg.name}'", nbytes)
        q = self.queue

        def run():
            where = storage_address(dg, q.device, q.context) + offset
            q._copy(where, host, nbytes) if direction == "to" else q._copy(host, where, nbytes)
        self._record(Command("memcpy", run, f"copy {direction} device_global {dg.name}"))

    def memset(self, ptr, value: int, nbytes: int) -> None:
        p = checked_address(ptr, "memset", int(nbytes))
        q = self.queue
        self._record(Command("memset", lambda: q._memset(p, int(value) & 0xFF, 1, int(nbytes)),
                             f"memset {int(nbytes)} bytes"))

    def fill(self, ptr, pattern, count: int) -> None:
        if not isinstance(ptr, usm_allocation):
            raise exception(errc.invalid, "fill expects a USM allocation")
        ptr.check("fill")
        count = int(count)
        raw = np.asarray(pattern, dtype=ptr.dtype).reshape(-1)[:1].tobytes()
        checked_address(ptr, "fill", count * len(raw))
        q = self.queue
        if len(raw) in (1, 2, 4):
            value = int.from_bytes(raw, "little")
            self._record(Command("memfill", lambda: q._memset(ptr.ptr, value, len(raw), count), f"fill {count}"))
        else:
            data = np.frombuffer(raw * count, dtype=np.uint8)
            self._record(Command("memfill", lambda: q._copy(ptr.ptr, data.ctypes.data, data.nbytes), f"fill {count}"))

    def copy(self, src, dst, count: int | None = None, start_index: int = 0) -> None:
        if isinstance(dst, device_global) or isinstance(src, device_global) or count is None:
            return super().copy(src, dst, count, start_index)
        itemsize = (src.dtype if isinstance(src, (usm_allocation, np.ndarray)) else np.dtype(np.uint8)).itemsize
        n = int(count) * itemsize
        s, d = checked_address(src, "copy", n), checked_address(dst, "copy", n)
        self._async_copy(d, s, n, f"copy {int(count)} elements")

    def async_malloc(self, size: int, kind: str = "device", dtype=np.uint8):
        if self.graph is None and kind == "device":
            alloc = cuda_allocation(size, dtype, "device", self.queue)
            self._record(Command("async_malloc", None, f"async_malloc {size}"))
            return alloc
        return super().async_malloc(size, kind, dtype)


class cuda_queue(queue):  # noqa: N801
    """A queue of an NVIDIA GPU (see the module docstring)."""

    backend = "cuda"
    _handler_class = cuda_handler

    def __init__(self, dev=None, *, in_order: bool = False, enable_profiling: bool = False, device_selector=None,
                 context=None):
        super().__init__(dev, in_order=in_order, enable_profiling=enable_profiling, device_selector=device_selector,
                         context=context)
        self.device.activate()
        self._stream = ctypes.c_void_p()
        driver.call("cuStreamCreate", ctypes.byref(self._stream), _NON_BLOCKING, what=f"a stream on {self.device.name}")
        self._pending: list[str] = []          # kernels launched since the last synchronisation
        self._ref = None
        self._pool = {True: [], False: []}       # free events, by whether they record time
        self._timing: dict[int, bool] = {}
        self._graphs: dict = {}
        self._functions: dict = {}     # (program id, kernel) -> CUfunction (programs kept in _keep)
        self._keep: list = []
        if enable_profiling:
            self._ref = self._new_event(timing=True)
            driver.call("cuEventRecord", self._ref, self._stream)
            driver.call("cuEventSynchronize", self._ref)
            self._ref_ns = time.perf_counter_ns()

    def __del__(self):
        try:
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

    def _gpu_ns(self, ev) -> int:
        ms = ctypes.c_float()
        driver.call("cuEventElapsedTime", ctypes.byref(ms), self._ref, ev)
        return self._ref_ns + int(ms.value * 1e6)

    def _copy(self, dst: int, src: int, n: int) -> None:
        if n:
            driver.call("cuMemcpyAsync", dst, src, n, self._stream, what=f"a copy of {n} bytes on {self.device.name}")

    def _memset(self, ptr: int, value: int, width: int, count: int) -> None:
        if count:
            fn = {1: "cuMemsetD8Async", 2: "cuMemsetD16Async", 4: "cuMemsetD32Async"}[width]
            driver.call(fn, ptr, value, count, self._stream, what=f"a fill on {self.device.name}")

    def _failed(self, err: driver.DriverError, what: str):
        names = ", ".join(f"'{k}'" for k in dict.fromkeys(self._pending)) or "none"
        self._pending = []
        message = f"{what} on {self.device.name} failed: {err.name} (kernels launched since the last wait: {names})"
        if err.result in driver.CONTEXT_LOST:
            message += ("; the device's CUDA context is lost: every later command on this device fails "
                        "(restart the process to use it again)")
            self.device.lost = message
        return exception(errc.runtime, message)

    def _synchronize(self, ev=None, label: str = "") -> None:
        self.device.activate()
        try:
            if ev is None:
                driver.call("cuStreamSynchronize", self._stream)
            else:
                driver.call("cuEventSynchronize", ev)
        except driver.DriverError as err:
            raise self._failed(err, f"command '{label}'" if label else "the queue") from None
        if ev is None:
            self._pending = []

    def _launch(self, k, slots, total: int, geometry) -> None:
        key = (id(k.program), k.name)
        found = self._functions.get(key)
        if found is None:           # the program keeps its built module for this device and context
            linked, _ = k.program.linked_for(k.name, self.device, self.context)
            found = self._functions[key] = (linked.function(k.name), linked)
            self._keep.append(k.program)
        fn, linked = found
        for i, ty in enumerate(k.params):
            if ty.endswith("*") and slots[i] and not ty.startswith("local "):
                owner = _live.get(int(slots[i]))      # the allocation the address starts, if any
                if owner is not None and not isinstance(owner, cuda_allocation):
                    raise exception(errc.invalid, f"argument {i + 1} of kernel '{k.name}' is host USM of another "
                                                  f"device: allocate it with this queue")
        nd = k.item is not None and k.item.startswith("nd_item")
        if nd:
            check_local_size(k, geometry, self.device)      # reqd_work_group_size (work_groups.py)
        grid, block = self.launch_shape(k, geometry)
        slots, dynamic = self._shared_memory(k, linked, slots, block if nd else None)
        n = len(k.params)
        if k.item is not None:
            dims = (ctypes.c_int64 * 3)(*[max(int(geometry[d]), 1) for d in range(3)])
            ptrs = [ctypes.addressof(dims) + 8 * d for d in range(3)]
        else:
            dims, ptrs = None, []
        base = ctypes.addressof(slots)
        ptrs += [base + 8 * i for i in range(n)]
        params = (ctypes.c_void_p * max(len(ptrs), 1))(*ptrs)
        try:
            driver.call("cuLaunchKernel", fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], dynamic,
                        self._stream, params, None, what=f"launching kernel '{k.name}'")
        except driver.DriverError as err:
            if err.result in driver.CONTEXT_LOST:
                raise self._failed(err, f"launching kernel '{k.name}'") from None
            raise
        self._pending.append(k.name)

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
        out = (ctypes.c_uint64 * max(len(k.params), 1))(*slots[:len(k.params)])
        offset = 0
        for i in local:
            offset = (offset + _SHARED_ALIGN - 1) // _SHARED_ALIGN * _SHARED_ALIGN
            size = int(slots[i])
            out[i] = offset
            offset += size
        limit = self.device.local_mem_size
        if static + offset > limit:
            raise exception(errc.invalid, f"kernel '{k.name}' needs {static + offset} bytes of work-group memory "
                                          f"({static} static, {offset} from local_memory arguments) but device "
                                          f"{self.device.name} has {limit} per work-group "
                                          f"(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)")
        linked.allow_dynamic_shared(k.name, offset)
        return out, offset

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
        for axis, (g, key) in enumerate(zip(grid, ("max_grid_x", "max_grid_y", "max_grid_z"))):
            if g > a[key]:
                raise exception(errc.nd_range, f"kernel '{k.name}': the range needs {g} blocks along CUDA axis "
                                               f"{'xyz'[axis]}, more than {self.device.name}'s {a[key]}")
        return tuple(grid), tuple(block)

    # -- the queue --------------------------------------------------------------------

    def submit(self, cgf, depends_on=None) -> event:
        if self._recording is not None:
            return super().submit(cgf, depends_on)
        h = self._handler_class(self, None)
        if depends_on is not None:
            h.depends_on(depends_on)
        submitted = time.perf_counter_ns()
        cgf(h)
        graphs = {getattr(e, "_node", None).graph for e in h.deps if getattr(e, "_node", None) is not None}
        if len(graphs) == 1:                     # transitive recording, as the host queue does
            recording = graphs.pop()
            recording.begin_recording(self)
            h.graph = recording
            return recording._record(self, h)
        cmd = h.command
        if isinstance(cmd, KernelCommand) and any(getattr(a, "graph_only", False) for a in cmd.args):
            raise exception(errc.invalid, "a dynamic_parameter can only be used in command graph nodes")
        if cmd is not None and isinstance(cmd, KernelCommand) and any(g == 0 for g in cmd.geometry[:cmd.kernel.dims]):
            cmd = None                           # an empty range: nothing to launch
        with self._lock:
            self.device.activate()
            for e in h.deps:
                if isinstance(e, cuda_event) and e._q is not self:
                    driver.call("cuStreamWaitEvent", self._stream, e._end, 0)
                elif not isinstance(e, cuda_event):
                    e.wait()
            start = None
            if self.profiling:
                start = self._new_event(timing=True)
                driver.call("cuEventRecord", start, self._stream)
            if cmd is not None:
                if cmd.kind == "host_task":
                    self._synchronize(None)
                cmd.run(self)
            end = self._new_event(timing=self.profiling)
            driver.call("cuEventRecord", end, self._stream)
        return cuda_event(self, submitted, start if start is not None else end, end,
                          getattr(cmd, "label", "") or "")

    def wait(self) -> None:
        super().wait()
        self._synchronize(None)

    def wait_and_throw(self) -> None:
        self.wait()

    # -- command graphs -----------------------------------------------------------------

    def run_graph_steps(self, steps) -> None:
        """Run an executable graph's commands on this stream: as one CUDA graph
        (captured from the stream the first time, replayed with one
        ``cuGraphLaunch``) when every command is a kernel, else one by one."""
        cmds = [s[1] for s in steps if s[0] == "python"]
        if not cmds or not all(isinstance(c, KernelCommand) for c in cmds):
            for c in cmds:
                if c.kind == "host_task":
                    self._synchronize(None)
                c.run(self)
            return
        key = tuple(id(c) for c in cmds)
        exec_ = self._graphs.get(key)
        if exec_ is None:
            self.device.activate()
            driver.call("cuStreamBeginCapture_v2", self._stream, 2, what="capturing a command graph")   # relaxed mode
            try:
                for c in cmds:
                    c.run(self)
            finally:
                g = ctypes.c_void_p()
                driver.call("cuStreamEndCapture", self._stream, ctypes.byref(g), what="capturing a command graph")
            exec_ = ctypes.c_void_p()
            driver.call("cuGraphInstantiateWithFlags", ctypes.byref(exec_), g, 0, what="instantiating a CUDA graph")
            driver.query("cuGraphDestroy", g)
            self._graphs = {key: exec_}          # the latest version only: an update makes new commands
        self.device.activate()
        driver.call("cuGraphLaunch", exec_, self._stream, what="launching a CUDA graph")
        self._pending += [c.kernel.name for c in cmds]
