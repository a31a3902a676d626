"""The command-group handler: ``queue.submit(lambda h: ...)`` records one command.

The handler turns each SYCL command-group call (``parallel_for``, ``memcpy``,
``host_task``, the graph extension's ``async_malloc`` ...) into one
``Command`` (``commands.py``), checking its arguments; the queue runs it, or
a recording command graph makes it a node."""
from __future__ import annotations

import ctypes

import numpy as np

from .addresses import checked_count, checked_int, checked_memory, fill_bytes
from .arguments import element_bytes
from .commands import Command, GraphPointer, KernelCommand
from .device_global import device_global, storage_address
from .errors import errc, exception
from .events import event
from .interop import NativeCommand, adopt_arguments, host_task_command
from .memory import free, usm_allocation
from .memory_pool import USM_KINDS, memory_pool
from .program import kernel as Kernel
from .validate import require_callable, require_dtype, require_events

__all__ = ["handler"]


class handler:  # noqa: N801
    """Records one command group (``queue.submit(lambda h: ...)``)."""

    def __init__(self, q, graph=None):
        self.queue = q                # the queue it was submitted to
        self.graph = graph            # set while the group is added to a command graph
        self.deps: list[event] = []
        self.command = None
        self._set_args: dict[int, object] = {}
        self._spec_values: dict[str, object] = {}     # set_specialization_constant
        self._bundle = None                           # use_kernel_bundle

    def depends_on(self, events) -> None:
        events = require_events(events, "depends_on")
        self.deps.extend(events)
        if self.graph is None:
            # an event of an open queue recording: this group is recorded into that
            # graph (transitive queue recording, ``queue.submit``)
            scope = next((s for s in (getattr(e, "_scope", None) for e in events) if s is not None and s.open), None)
            if scope is not None:
                self.graph = scope.graph

    def _record(self, cmd):
        if self.command is not None:
            raise exception(errc.invalid, "a command group can hold only one command")
        self.command = cmd if isinstance(cmd, Command) else Command(getattr(cmd, "_kind", "host_task"), cmd)

    def set_arg(self, index: int, value) -> None:
        """Set kernel argument ``index`` (a value or a ``dynamic_parameter``) for the next launch."""
        self._set_args[checked_count(index, "set_arg index")] = value

    def _with_set_args(self, k, args) -> list:
        args = list(args)
        if self._set_args and isinstance(k, Kernel) and max(self._set_args) >= len(k.params):
            raise exception(errc.invalid, f"set_arg index {max(self._set_args)} is out of range: kernel '{k.name}' "
                                          f"takes {len(k.params)} arguments")
        for i, v in sorted(self._set_args.items()):
            while len(args) <= i:
                args.append(None)
            args[i] = v
        return args

    def set_specialization_constant(self, name: str, value) -> None:
        """Set a specialization constant (by its name) for this group's kernel: the
        kernel is compiled with the value folded in (``program.kernel.specialized``).
        After ``use_kernel_bundle`` it is ``errc::invalid``, as SYCL says: the
        bundle's values are used."""
        if self._bundle is not None:
            raise exception(errc.invalid, f"set_specialization_constant('{name}') after use_kernel_bundle: "
                                          "the kernel bundle's values are used")
        if not isinstance(name, str):
            raise exception(errc.invalid, f"a specialization constant is named by a string, got {type(name).__name__}")
        self._spec_values[name] = value

    def get_specialization_constant(self, name: str):
        """The value set with ``set_specialization_constant``; else the bundle's or the default."""
        if name in self._spec_values:
            return self._spec_values[name]
        if self._bundle is not None:
            return self._bundle.get_specialization_constant(name)
        raise exception(errc.invalid, f"specialization constant '{name}' was not set in this command group; "
                                      "its default is known once a kernel is chosen (kernel_bundle)")

    def use_kernel_bundle(self, bundle) -> None:
        """Launch this group's kernel from ``bundle`` (executable state), with its values."""
        from .kernel_bundle import bundle_state, kernel_bundle
        if not isinstance(bundle, kernel_bundle):
            raise exception(errc.invalid, f"use_kernel_bundle expects a kernel_bundle, got {type(bundle).__name__}")
        if bundle.state != bundle_state.executable:
            raise exception(errc.invalid, f"use_kernel_bundle needs a bundle in the executable state, this one is "
                                          f"{bundle.state}")
        if self._spec_values:
            raise exception(errc.invalid, "use_kernel_bundle after set_specialization_constant")
        if self.queue.context not in bundle.contexts:
            raise exception(errc.invalid, "the kernel bundle belongs to another context than the queue")
        self._bundle = bundle

    def _kernel(self, k: Kernel) -> Kernel:
        """``k`` as this group launches it: from its bundle, with its specialization constants."""
        if self._bundle is not None:
            k = self._bundle.kernel_for(k, self.queue.device)
        if self._spec_values:
            k = k.specialized(self._spec_values)
        return k

    def single_task(self, k: Kernel, *args) -> None:
        k = self._kernel(k)
        self._record(KernelCommand(k, None, self._arguments(k, args)))

    def parallel_for(self, k: Kernel, r, *args) -> None:
        k = self._kernel(k)
        self._record(KernelCommand(k, r, self._arguments(k, args)))

    def _arguments(self, k, args) -> list:
        """The launch's arguments: ``set_arg`` values in, other libraries' memory adopted
        (``interop.adopt_arguments``: the command holds the exporters)."""
        args = self._with_set_args(k, args)
        return adopt_arguments(k, args, self.queue) if isinstance(k, Kernel) else args

    def prefetch(self, ptr, nbytes: int) -> None:
        m = checked_memory(ptr, "prefetch", checked_count(nbytes, "prefetch size"))
        self._record(Command("prefetch", None, "prefetch", uses=(m.allocation,)))

    def mem_advise(self, ptr, nbytes: int, advice: int = 0) -> None:
        checked_int(advice, "mem_advise advice", -(1 << 31), (1 << 31) - 1)
        m = checked_memory(ptr, "mem_advise", checked_count(nbytes, "mem_advise size"))
        self._record(Command("memadvise", None, "mem_advise", uses=(m.allocation,)))

    def ext_oneapi_barrier(self, events=None) -> None:
        """A barrier on ``events`` (its wait list) when given, else on everything before it."""
        if events is not None:
            events = require_events(events, "barrier wait list")
            self.depends_on(events)
        cmd = Command("ext_oneapi_barrier", None, "barrier")
        cmd.wait_list = [events] if isinstance(events, event) else list(events or ())
        self._record(cmd)

    def memcpy(self, dst, src, nbytes: int | None = None, offset: int = 0) -> None:
        """``memcpy(dst, src, nbytes)``; with a device global on either side, SYCL's
        ``memcpy(dg, src, numBytes = sizeof(T), offset = 0)`` and its mirror."""
        if isinstance(dst, device_global) or isinstance(src, device_global):
            dg = dst if isinstance(dst, device_global) else src
            n = dg.size if nbytes is None else checked_count(nbytes, "memcpy size")
            self._device_global_copy(dg, src if dg is dst else dst, "to" if dg is dst else "from",
                                     checked_count(offset, "memcpy offset"), n)
            return
        if nbytes is None:
            raise exception(errc.invalid, "memcpy needs a byte count")
        n = checked_count(nbytes, "memcpy size")
        if checked_count(offset, "memcpy offset"):
            raise exception(errc.invalid, "memcpy takes an offset only to or from a device_global")
        d = checked_memory(dst, "memcpy destination", n, writes=True)
        s = checked_memory(src, "memcpy source", n)
        self._record(Command("memcpy", lambda: ctypes.memmove(d.address, s.address, n), f"memcpy {n} bytes",
                             uses=(d.allocation, s.allocation)))

    def _device_global_copy(self, dg: device_global, other, direction: str, offset: int, nbytes: int) -> None:
        if self.graph is not None:
            raise exception(errc.invalid, "device_global copies cannot be added to a command graph")
        dg.check_access(direction)
        dg.check_bounds(direction, offset, nbytes)
        host = checked_memory(other, f"copy {direction} device_global '{dg.name}'", nbytes,
                              writes=direction == "from").address
        dev, ctx = self.queue.device, self.queue.context

        def run():
            where = storage_address(dg, dev, ctx) + offset
            ctypes.memmove(where, host, nbytes) if direction == "to" else ctypes.memmove(host, where, nbytes)
        self._record(Command("memcpy", run, f"copy {direction} device_global {dg.name}"))

    def memset(self, ptr, value: int, nbytes: int) -> None:
        v = checked_int(value, "memset value", -(1 << 31), (1 << 31) - 1)
        n = checked_count(nbytes, "memset size")
        m = checked_memory(ptr, "memset", n, writes=True)
        self._record(Command("memset", lambda: ctypes.memset(m.address, v, n), f"memset {n} bytes", uses=(m.allocation,)))

    def fill(self, ptr, pattern, count: int) -> None:
        """``fill(ptr, pattern, count)``: ``count`` elements of ``ptr``'s type, each ``pattern``."""
        n = checked_count(count, "fill count")
        m = checked_memory(ptr, "fill", writes=True)
        if m.dtype is None:
            raise exception(errc.invalid, "fill needs a USM allocation or a NumPy array (its element type), "
                                          "not an address")
        if n > m.count:
            raise exception(errc.invalid, f"fill of {n} elements overruns memory of {m.count} elements")
        element = element_bytes(m.dtype, pattern, f"fill pattern for {m.dtype} memory")
        self._record(Command("memfill", lambda: fill_bytes(m.address, element, n), f"fill {n}", uses=(m.allocation,)))

    def copy(self, src, dst, count: int | None = None, start_index: int = 0) -> None:
        """``copy(src, dst, count)`` of elements (the whole of both when they are the
        same size and no count is given); with a device global on either side,
        SYCL's ``copy(src, dg, count = elements of T, startIndex = 0)`` and its mirror."""
        start = checked_count(start_index, "copy start index")
        if isinstance(dst, device_global) or isinstance(src, device_global):
            dg = dst if isinstance(dst, device_global) else src
            n = dg.elements if count is None else checked_count(count, "copy count")
            other = checked_memory(src if dg is dst else dst, "copy")
            if other.dtype is not None:
                dg.check_element_type(other.dtype, "copy")
            self._device_global_copy(dg, src if dg is dst else dst, "to" if dg is dst else "from",
                                     start * dg.element_size, n * dg.element_size)
            return
        if start:
            raise exception(errc.invalid, "copy takes a start index only to or from a device_global")
        s = checked_memory(src, "copy source")
        d = checked_memory(dst, "copy destination", writes=True)
        if s.dtype is None or d.dtype is None:
            raise exception(errc.invalid, "copy needs USM allocations or NumPy arrays (their element types); "
                                          "memcpy copies bytes between addresses")
        if s.dtype != d.dtype:
            raise exception(errc.invalid, f"copy from {s.dtype} to {d.dtype} memory: the element types must match")
        if count is None:
            if s.count != d.count:
                raise exception(errc.invalid, f"copy between arrays of different sizes ({s.count} and {d.count} "
                                              f"elements) needs a count")
            n = s.count
        else:
            n = checked_count(count, "copy count")
        for side, m in (("source", s), ("destination", d)):
            if n > m.count:
                raise exception(errc.invalid, f"copy of {n} elements overruns its {side} of {m.count} elements")
        nbytes = n * s.dtype.itemsize
        self._record(Command("memcpy", lambda: ctypes.memmove(d.address, s.address, nbytes),
                             f"copy {n} elements", uses=(s.allocation, d.allocation)))

    def host_task(self, fn) -> None:
        """``fn()`` on the host after the group's dependencies; a ``fn`` taking one
        argument gets an ``interop_handle`` (the queue's native stream, device, context)."""
        if not callable(fn):
            raise exception(errc.invalid, f"host_task expects a callable, got {type(fn).__name__}")
        self._record(host_task_command(fn, self.queue))

    def ext_codeplay_enqueue_native_command(self, fn) -> None:
        """``sycl_ext_codeplay_enqueue_native_command``: ``fn(interop_handle)`` enqueues
        native work (cuBLAS, torch, NCCL ...) on ``get_native_queue()``, ordered with the
        queue's other commands without waiting for them on the host; in a command graph
        it is a ``native_command`` node (on a GPU, the stream is captured)."""
        if not callable(fn):
            raise exception(errc.invalid, f"ext_codeplay_enqueue_native_command expects a callable, "
                                          f"got {type(fn).__name__}")
        self._record(NativeCommand(fn))

    def async_malloc(self, size: int, kind: str = "device", dtype=np.uint8):
        """Graph-owned (or, outside a graph, ordinary) memory of ``size`` elements.
        In a graph the memory is chosen when the node is added, reusing a block an
        ``async_free`` node this one depends on released; only device memory
        (``errc::invalid`` otherwise, as the graph extension says)."""
        return self._async_allocation(size, dtype, kind, None)

    def async_malloc_from_pool(self, size: int, pool: memory_pool, dtype=np.uint8):
        """``async_malloc_from_pool``: as ``async_malloc``, with the pool's kind and
        properties (in a graph only ``zero_init`` and ``read_only`` count)."""
        if not isinstance(pool, memory_pool):
            raise exception(errc.invalid, f"async_malloc_from_pool expects a memory_pool, got {type(pool).__name__}")
        if pool.device != self.queue.device or pool.context is not self.queue.context:
            raise exception(errc.invalid, "the memory pool belongs to another device or context than the queue")
        return self._async_allocation(size, dtype, pool.kind, pool)

    def _async_allocation(self, size, dtype, kind: str, pool):
        size = checked_count(size, "async_malloc size")
        if not isinstance(kind, str) or kind not in USM_KINDS:
            raise exception(errc.invalid, f"unknown USM allocation kind {kind!r:.60} ({', '.join(USM_KINDS)})")
        dtype = require_dtype(dtype, "async_malloc dtype")
        if self.graph is None:
            alloc = usm_allocation(size, dtype, kind, self.queue)
            self._record(Command("async_malloc", None, f"async_malloc {size}"))
            return alloc
        if kind != "device":
            raise exception(errc.invalid, f"graph allocation nodes take only device memory (usm::alloc::device), "
                                          f"not usm::alloc::{kind}")
        cmd = Command("async_malloc", None, f"async_malloc {size}")
        cmd.request = (int(size), np.dtype(dtype), bool(pool and pool.zero_init), bool(pool and pool.read_only))
        cmd.allocation = None
        self._record(cmd)
        return GraphPointer(cmd)

    def async_free(self, ptr) -> None:
        cmd = Command("async_free", None, "async_free")
        cmd.frees = ptr
        if self.graph is None and isinstance(ptr, usm_allocation):
            cmd._run = lambda: None if ptr.freed else free(ptr)
        self._record(cmd)

    def ext_oneapi_graph(self, graph) -> None:
        """Run an executable command graph as this command group's command (on a
        queue of the graph's device and context only)."""
        check_graph_submission(self.queue, graph)
        if self.graph is not None and getattr(graph.graph, "_pool", None):
            raise exception(errc.invalid, "a graph with graph-owned allocations cannot be used as a sub-graph")
        cmd = Command("subgraph", lambda: graph._execute(self.queue), "graph", uses=(graph,))
        if not graph.profiling:
            cmd.unprofiled = UNPROFILED_GRAPH
        self._record(cmd)


#: why an event of a graph finalized without ``enable_profiling`` has no times
UNPROFILED_GRAPH = ("Graph profiling information is unavailable: the executable graph was finalized without the "
                    "enable_profiling property")


def check_graph_submission(q, graph) -> None:
    """``errc::invalid`` unless ``graph`` is an executable graph of ``q``'s device and
    context (``handler.ext_oneapi_graph`` and the queue's direct submission)."""
    if not hasattr(graph, "memory_in_use"):
        raise exception(errc.invalid, f"ext_oneapi_graph expects an executable command graph (finalize() a "
                                      f"modifiable one first), got {type(graph).__name__}")
    if q.device != graph.device or q.context is not graph.context:
        raise exception(errc.invalid, f"an executable graph for {graph.device.name} (context {graph.context.id}) "
                                      f"cannot be submitted to a queue of {q.device.name} (context "
                                      f"{q.context.id}): the device and context must be the graph's")
