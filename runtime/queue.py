"""Queues, handlers and events with SYCL's names.

Commands run when they are submitted, after the events they depend on (and,
for an in-order queue, the previous command) have completed: a valid
schedule for both in-order and out-of-order queues, and the cheapest one.
Kernels spread their work-items over the CPU cores (``native.run_range``); host
tasks run on the submitting thread.  A failed command raises its
``exception`` at submit and leaves the queue usable.
"""
from __future__ import annotations

import ctypes
import threading
import time

import numpy as np

from .device import context, default_context, default_device, device as Device
from .device_global import device_global, storage_address
from .errors import errc, exception
from .native import run_range
from .memory import free, usm_allocation
from .program import kernel as Kernel
from . import work_groups

__all__ = ["queue", "event", "handler", "range", "nd_range"]

class range:  # noqa: N801,A001 - SYCL's name
    def __init__(self, *dims: int):
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        if not 1 <= len(dims) <= 3 or not all(isinstance(d, (int, np.integer)) and d >= 0 for d in dims):
            raise exception(errc.invalid, f"a range has 1 to 3 non-negative integer dimensions, got {dims!r}")
        self.dims = tuple(int(d) for d in dims)

    def size(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n

    def __len__(self):
        return len(self.dims)

    def __repr__(self):
        return f"range{self.dims}"


class nd_range:  # noqa: N801
    def __init__(self, global_range, local_range):
        self.global_range = global_range if isinstance(global_range, range) else range(global_range)
        self.local_range = local_range if isinstance(local_range, range) else range(local_range)
        if len(self.global_range) != len(self.local_range):
            raise exception(errc.nd_range, "global and local ranges of an nd_range must have the same dimensions")
        for g, l in zip(self.global_range.dims, self.local_range.dims):
            if l == 0 or g % l:
                raise exception(errc.nd_range, "Non-uniform work-groups are not supported by the target device")


def _as_range(r) -> range | nd_range:
    if isinstance(r, (range, nd_range)):
        return r
    if isinstance(r, (int, np.integer)):
        return range(int(r))
    if isinstance(r, (tuple, list)):
        return range(*r)
    raise exception(errc.invalid, f"expected a range, an nd_range, an int or a tuple, got {type(r).__name__}")


class event:  # noqa: N801
    """A command's completion (commands complete at submit, see the module docstring)."""

    def __init__(self, submit_ns: int, start_ns: int, end_ns: int, profiling: bool):
        self._times = {"command_submit": submit_ns, "command_start": start_ns, "command_end": end_ns}
        self._profiling = profiling

    _node = None       # set for events of commands recorded into a command graph

    def _recorded(self, what: str) -> None:
        if self._node is not None:
            raise exception(errc.invalid, f"{what} method cannot be used for an event associated with a command graph.")

    def wait(self) -> None:
        self._recorded("wait")

    def wait_and_throw(self) -> None:
        self._recorded("wait")

    @property
    def status(self) -> str:
        self._recorded("get_info")
        return "complete"

    def get_profiling_info(self, what: str) -> int:
        self._recorded("get_profiling_info")
        if not self._profiling:
            raise exception(errc.invalid, "Profiling information is unavailable as the queue associated with "
                                          "the event does not have the 'enable_profiling' property.")
        if what not in self._times:
            raise exception(errc.invalid, f"unknown profiling info '{what}' (command_submit, command_start, command_end)")
        return self._times[what]

    @staticmethod
    def wait_list(events) -> None:
        for e in events:
            e.wait()


def _address(x, what: str, nbytes: int = 0) -> int:
    """The address of a USM allocation / NumPy array, checked to hold ``nbytes``."""
    from .graph import dynamic_parameter
    if isinstance(x, dynamic_parameter):
        raise exception(errc.invalid, "dynamic_parameters cannot be registered with graph nodes which do not "
                                      "represent kernel executions")
    if isinstance(x, usm_allocation):
        x.check(what)
        if nbytes > x.nbytes:
            raise exception(errc.invalid, f"{what} of {nbytes} bytes overruns a {x.nbytes}-byte USM allocation")
        return x.ptr
    if isinstance(x, np.ndarray):
        if nbytes > x.nbytes:
            raise exception(errc.invalid, f"{what} of {nbytes} bytes overruns a {x.nbytes}-byte array")
        return x.ctypes.data
    if isinstance(x, (int, np.integer)):
        return int(x)
    raise exception(errc.invalid, f"{what} expects a USM allocation, a NumPy array or an address, got {type(x).__name__}")


class Command:
    """One recorded command: what it is (a graph ``node_type`` name) and how to run it."""

    def __init__(self, kind: str, run=None, label: str = ""):
        self.kind, self._run, self.label = kind, run, label

    def run(self, q: "queue") -> None:
        if self._run is not None:
            self._run()

    def describe(self) -> str:
        return self.label


def _geometry(k: Kernel, r):
    """(work-item count, geometry array) of a launch of ``k`` over ``r``, checked."""
    if r is None:
        if k.item is not None:
            raise exception(errc.invalid, f"kernel '{k.name}' takes {k.item}: launch it with parallel_for")
        return 1, (ctypes.c_int64 * 6)()
    r = _as_range(r)
    if k.item is None:
        raise exception(errc.invalid, f"kernel '{k.name}' takes no work-item index: launch it with single_task")
    is_nd = isinstance(r, nd_range)
    if k.item.startswith("nd_item") != is_nd:
        want = "an nd_range" if k.item.startswith("nd_item") else "a range"
        raise exception(errc.nd_range, f"kernel '{k.name}' takes {k.item}: launch it over {want}")
    glob = r.global_range if is_nd else r
    if len(glob) != k.dims:
        raise exception(errc.nd_range, f"kernel '{k.name}' takes {k.item} but the range has {len(glob)} dimensions")
    geometry = (ctypes.c_int64 * 6)(*(list(glob.dims) + [0] * (3 - len(glob))) +
                                    (list(r.local_range.dims) + [1] * (3 - len(glob)) if is_nd else [1, 1, 1]))
    return glob.size(), geometry


class KernelCommand(Command):
    """A kernel launch: the kernel, its range and arguments (dynamic parameters
    resolved when the arguments are packed)."""

    def __init__(self, k: Kernel, r, args):
        super().__init__("kernel", label=k.name)
        self.kernel, self.range, self.args = k, r, list(args)
        self.total, self.geometry = _geometry(k, r)
        self.slots = self.pack()

    def pack(self):
        """Slots for the current values: a dynamic parameter's value, the memory of
        a graph allocation."""
        from .graph import dynamic_parameter
        return self.kernel.pack([a.value if isinstance(a, dynamic_parameter) else
                                 a._allocation() if isinstance(a, _GraphPointer) else a for a in self.args])

    def set_range(self, r) -> None:
        self.range = r
        self.total, self.geometry = _geometry(self.kernel, r)

    def run(self, q: "queue") -> None:
        q._launch(self.kernel, self.slots, self.total, self.geometry)

    def describe(self) -> str:
        return ", ".join(f"{i}) {ty} = {a!r}" for i, (ty, a) in enumerate(zip(self.kernel.params, self.args)))


class _GraphPointer:
    """The pointer an ``async_malloc`` node returns; its memory is assigned when the
    node joins the graph (before any later node can use it)."""

    def __init__(self, cmd):
        self._cmd = cmd

    def _allocation(self) -> usm_allocation:
        if self._cmd.allocation is None:
            raise exception(errc.invalid, "graph-owned memory is used before its async_malloc node was added")
        return self._cmd.allocation

    def __getattr__(self, name):
        return getattr(self._allocation(), name)

    def __array__(self, dtype=None, copy=None):
        return self._allocation().__array__(dtype)


class handler:  # noqa: N801
    """Records one command group (``queue.submit(lambda h: ...)``)."""

    def __init__(self, q: "queue", graph=None):
        self.queue = q
        self.graph = graph            # set while the group is added to a command graph
        self.deps: list[event] = []
        self.command = None
        self._set_args: dict[int, object] = {}

    def depends_on(self, events) -> None:
        self.deps.extend([events] if isinstance(events, event) else list(events))

    def _set(self, cmd):
        if self.command is not None:
            raise exception(errc.invalid, "a command group can hold only one command")
        self.command = cmd if isinstance(cmd, Command) else Command(getattr(cmd, "_kind", "host_task"), cmd)

    def set_arg(self, index: int, value) -> None:
        """Set kernel argument ``index`` (a value or a ``dynamic_parameter``) for the next launch."""
        self._set_args[int(index)] = value

    def _args(self, args) -> list:
        args = list(args)
        for i, v in sorted(self._set_args.items()):
            while len(args) <= i:
                args.append(None)
            args[i] = v
        return args

    def single_task(self, k: Kernel, *args) -> None:
        self._set(KernelCommand(k, None, self._args(args)))

    def parallel_for(self, k: Kernel, r, *args) -> None:
        self._set(KernelCommand(k, r, self._args(args)))

    def prefetch(self, ptr, nbytes: int) -> None:
        _address(ptr, "prefetch", int(nbytes))
        self._set(Command("prefetch", None, "prefetch"))

    def mem_advise(self, ptr, nbytes: int, advice: int = 0) -> None:
        _address(ptr, "mem_advise", int(nbytes))
        self._set(Command("memadvise", None, "mem_advise"))

    def ext_oneapi_barrier(self, events=None) -> None:
        if events:
            self.depends_on(events)
        self._set(Command("ext_oneapi_barrier", None, "barrier"))

    def memcpy(self, dst, src, nbytes: int | None = None, offset: int = 0) -> None:
        """``memcpy(dst, src, nbytes)``; with a device global on either side, SYCL's
        ``memcpy(dg, src, numBytes = sizeof(T), offset = 0)`` and its mirror."""
        if isinstance(dst, device_global) or isinstance(src, device_global):
            dg = dst if isinstance(dst, device_global) else src
            n = dg.size if nbytes is None else int(nbytes)
            self._device_global_copy(dg, src if dg is dst else dst, "to" if dg is dst else "from", int(offset), n)
            return
        if nbytes is None:
            raise exception(errc.invalid, "memcpy needs a byte count")
        d, s = _address(dst, "memcpy", int(nbytes)), _address(src, "memcpy", int(nbytes))
        self._set(Command("memcpy", lambda: ctypes.memmove(d, s, int(nbytes)), f"memcpy {int(nbytes)} bytes"))

    def _device_global_copy(self, dg: device_global, other, direction: str, offset: int, nbytes: int) -> None:
        if self.graph is not None:
            raise exception(errc.invalid, "device_global copies cannot be added to a command graph")
        dg.check_access(direction)
        dg.check_bounds(direction, offset, nbytes)
        if isinstance(other, np.ndarray) and not other.flags["C_CONTIGUOUS"]:
            raise exception(errc.invalid, f"copy {direction} device_global '{dg.name}' needs a contiguous array")
        host = _address(other, f"copy {direction} device_global '{dg.name}'", nbytes)
        dev, ctx = self.queue.device, self.queue.context

        def run():
            where = storage_address(dg, dev, ctx) + offset
            ctypes.memmove(where, host, nbytes) if direction == "to" else ctypes.memmove(host, where, nbytes)
        self._set(Command("memcpy", run, f"copy {direction} device_global {dg.name}"))

    def memset(self, ptr, value: int, nbytes: int) -> None:
        p = _address(ptr, "memset", int(nbytes))
        self._set(Command("memset", lambda: ctypes.memset(p, int(value), int(nbytes)), f"memset {int(nbytes)} bytes"))

    def fill(self, ptr, pattern, count: int) -> None:
        if not isinstance(ptr, usm_allocation):
            raise exception(errc.invalid, "fill expects a USM allocation")
        ptr.check("fill")
        self._set(Command("memfill", lambda: ptr.array.__setitem__(slice(0, int(count)), pattern), f"fill {int(count)}"))

    def copy(self, src, dst, count: int | None = None, start_index: int = 0) -> None:
        """``copy(src, dst, count)`` of elements; with a device global on either side,
        SYCL's ``copy(src, dg, count = elements of T, startIndex = 0)`` and its mirror."""
        if isinstance(dst, device_global) or isinstance(src, device_global):
            dg = dst if isinstance(dst, device_global) else src
            n = dg.elements - int(start_index) if count is None else int(count)
            self._device_global_copy(dg, src if dg is dst else dst, "to" if dg is dst else "from",
                                     int(start_index) * dg.element_size, n * dg.element_size)
            return
        if count is None:
            raise exception(errc.invalid, "copy needs an element count")

        def run():
            a, b = np.asarray(src), np.asarray(dst)
            b.reshape(-1)[:int(count)] = a.reshape(-1)[:int(count)]
        for x in (src, dst):
            if isinstance(x, usm_allocation):
                x.check("copy")
        self._set(Command("memcpy", run, f"copy {int(count)} elements"))

    def host_task(self, fn) -> None:
        self._set(Command("host_task", fn, getattr(fn, "__name__", "host_task")))

    def async_malloc(self, size: int, kind: str = "device", dtype=np.uint8):
        """Graph-owned (or, outside a graph, ordinary) device memory of ``size`` elements.
        In a graph the memory is chosen when the node is added, reusing a block an
        ``async_free`` node this one depends on released."""
        if kind != "device":
            raise exception(errc.feature_not_supported,
                            "Only device allocations are currently supported in graph allocation nodes!")
        if self.graph is None:
            alloc = usm_allocation(size, dtype, "device", self.queue)
            self._set(Command("async_malloc", None, f"async_malloc {size}"))
            return alloc
        cmd = Command("async_malloc", None, f"async_malloc {size}")
        cmd.request = (int(size), np.dtype(dtype))
        cmd.allocation = None
        self._set(cmd)
        return _GraphPointer(cmd)

    def async_free(self, ptr) -> None:
        cmd = Command("async_free", None, "async_free")
        cmd.frees = ptr
        if self.graph is None and isinstance(ptr, usm_allocation):
            cmd._run = lambda: None if ptr.freed else free(ptr)
        self._set(cmd)

    def ext_oneapi_graph(self, graph) -> None:
        """Run an executable command graph as this command group's command."""
        if self.graph is not None and getattr(graph.graph, "_pool", None):
            raise exception(errc.invalid, "a graph with graph-owned allocations cannot be used as a sub-graph")
        self._set(Command("subgraph", lambda: graph._execute(self.queue), "graph"))


class queue:  # noqa: N801
    def __init__(self, dev: Device | str | None = None, *, in_order: bool = False, enable_profiling: bool = False,
                 device_selector=None, context: "context | None" = None):
        self.device = default_device(device_selector if dev is None else dev)
        self.context = context or default_context(self.device)
        self._recording_ref = None    # weak reference to the command_graph this queue records into
        self._lock = threading.RLock()   # one command at a time per queue, from any thread
        self.in_order = in_order
        self.profiling = enable_profiling

    @property
    def _recording(self):
        ref = self._recording_ref
        return ref() if ref is not None else None

    def get_device(self) -> Device:
        return self.device

    def get_context(self):
        return self.context

    def _launch(self, k: Kernel, slots, total: int, geometry) -> None:
        linked, _ = k.program.linked_for(k.name, self.device, self.context)
        if k.item is not None and k.item.startswith("nd_item"):     # reqd_work_group_size (work_groups.py)
            work_groups.check_local_size(k, geometry, self.device)
        if k.name in linked.groups:                 # a work-group per call (work_groups.py)
            return work_groups.launch(linked, linked.groups[k.name], k, slots, geometry, self.device)
        run_range(linked.launcher(k.name), slots, total, geometry, k.name)

    def submit(self, cgf, depends_on=None) -> event:
        recording = self._recording
        h = handler(self, recording)
        if depends_on is not None:
            h.depends_on(depends_on)
        submitted = time.perf_counter_ns()
        cgf(h)
        if recording is None:
            graphs = {getattr(e, "_node", None).graph for e in h.deps if getattr(e, "_node", None) is not None}
            if len(graphs) == 1:
                # transitive recording: depending on a recorded event puts this queue into recording
                recording = graphs.pop()
                recording.begin_recording(self)
                h.graph = recording
        if recording is not None:
            return recording._record(self, h)
        if isinstance(h.command, KernelCommand):
            from .graph import dynamic_parameter
            if any(isinstance(a, dynamic_parameter) for a in h.command.args):
                raise exception(errc.invalid, "a dynamic_parameter can only be used in command graph nodes")
        if h.command is None:
            return event(submitted, submitted, submitted, self.profiling)
        event.wait_list(h.deps)
        start = time.perf_counter_ns()
        with self._lock:
            h.command.run(self)
        return event(submitted, start, time.perf_counter_ns(), self.profiling)

    # -- sycl_ext_oneapi_graph
    def ext_oneapi_graph(self, graph, depends_on=None) -> event:
        """Submit an executable command graph."""
        return self.submit(lambda h: h.ext_oneapi_graph(graph), depends_on)

    def ext_oneapi_get_state(self) -> str:
        """``"recording"`` or ``"executing"`` (``queue_state`` of the graph extension)."""
        return "recording" if self._recording is not None else "executing"

    def ext_oneapi_get_graph(self):
        if self._recording is None:
            raise exception(errc.invalid, "ext_oneapi_get_graph() called for a queue which is not recording to a graph")
        return self._recording

    # shortcuts, as sycl::queue has them
    def single_task(self, k: Kernel, *args, depends_on=None) -> event:
        return self.submit(lambda h: h.single_task(k, *args), depends_on)

    def parallel_for(self, k: Kernel, r, *args, depends_on=None) -> event:
        return self.submit(lambda h: h.parallel_for(k, r, *args), depends_on)

    def memcpy(self, dst, src, nbytes: int | None = None, offset: int = 0, depends_on=None) -> event:
        return self.submit(lambda h: h.memcpy(dst, src, nbytes, offset), depends_on)

    def memset(self, ptr, value: int, nbytes: int, depends_on=None) -> event:
        return self.submit(lambda h: h.memset(ptr, value, nbytes), depends_on)

    def fill(self, ptr, pattern, count: int, depends_on=None) -> event:
        return self.submit(lambda h: h.fill(ptr, pattern, count), depends_on)

    def copy(self, src, dst, count: int | None = None, start_index: int = 0, depends_on=None) -> event:
        return self.submit(lambda h: h.copy(src, dst, count, start_index), depends_on)

    def wait(self) -> None:
        if self._recording is not None:
            raise exception(errc.invalid, "wait cannot be called for a queue which is recording to a command graph.")

    def wait_and_throw(self) -> None:
        self.wait()
