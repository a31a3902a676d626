"""The command-group handler: ``queue.submit(lambda h: ...)`` records one command.

The handler turns each SYCL command-group call (``parallel_for``, ``memcpy``,
``host_task``, the graph extension's ``async_malloc`` ...) into one
``Command`` (``commands.py``), checking its arguments; the queue runs it, or
a recording command graph makes it a node."""
from __future__ import annotations


import numpy as np

from .addresses import Span, checked_count, checked_int, checked_memory, copy_bytes, fill_bytes
from .arguments import element_bytes
from .commands import AsyncFree, AsyncMalloc, Command, DynamicValue, KernelCommand, SubgraphCommand
from .device_global import device_global, storage_address
from . import host_access
from .errors import errc, exception
from .events import event
from .interop import NativeCommand, adopt_arguments, host_task_command
from .memory_pool import USM_KINDS, memory_pool
from .program import kernel as Kernel
from .validate import require_dtype, require_events

__all__ = ["handler"]


class handler:  # noqa: N801
    """Records one command group (``queue.submit(lambda h: ...)``)."""

    def __init__(self, q, graph=None):
        self.queue = q                # the queue it was submitted to
        self.graph = graph            # the command graph it goes to, once known (``close``)
        self.deps: list[event] = []
        self.command = None
        self._set_args: dict[int, object] = {}
        #: (argument index, dynamic parameter) for every dynamic parameter given, in order
        self.registrations: list[tuple[int, object]] = []
        self._spec_values: dict[str, object] = {}     # set_specialization_constant
        self._bundle = None                           # use_kernel_bundle

    def depends_on(self, events) -> None:
        """(An event recorded into a graph makes the group a node of that graph:
        decided when the group ends, ``queue.submit``, whatever the order of its calls.)"""
        events = require_events(events, "depends_on")
        self.deps.extend(events)

    def close(self, graph) -> None:
        """The command group's function has returned and where it goes is known:
        ``graph`` (explicit ``add``, a recording queue, or transitive recording) or
        ``None`` (the queue runs it now).  The one place where the rules that
        depend on the destination are applied (``Command.bind``), so that they are
        decided by what the group is, not by the order of its calls; a refusal
        changes nothing (nothing is allocated or registered before it)."""
        if graph is None and self.registrations:          # (set_arg and kernel arguments register them)
            raise exception(errc.invalid, "a dynamic_parameter can only be used in command graph nodes")
        if self.command is not None:
            self.command.bind(graph, self.queue)
        self.graph = graph

    def _record(self, cmd):
        if self.command is not None:
            raise exception(errc.invalid, "a command group can hold only one command")
        self.command = cmd if isinstance(cmd, Command) else Command(getattr(cmd, "_kind", "host_task"), cmd)

    def set_arg(self, index: int, value) -> None:
        """Set kernel argument ``index`` (a value or a ``dynamic_parameter``) for the next launch.
        A dynamic parameter is registered with the argument; one argument may be
        registered with several (the newer revision), and takes the value given last."""
        index = checked_count(index, "set_arg index")
        self._set_args[index] = value
        if isinstance(value, DynamicValue) and value.graph_only:
            self.registrations.append((index, value))

    def _with_set_args(self, k, args) -> list:
        args = list(args)
        given = [(i, a) for i, a in enumerate(args) if isinstance(a, DynamicValue) and a.graph_only]
        if given:
            self.registrations[:0] = given
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
        n = checked_count(nbytes, "prefetch size")
        m = checked_memory(ptr, "prefetch", n)
        self._record(Command("prefetch", None, "prefetch", uses=(m.allocation,),
                             details=(("Ptr", f"{m.address:#x}"), ("Length", n))))

    def mem_advise(self, ptr, nbytes: int, advice: int = 0) -> None:
        checked_int(advice, "mem_advise advice", -(1 << 31), (1 << 31) - 1)
        n = checked_count(nbytes, "mem_advise size")
        m = checked_memory(ptr, "mem_advise", n)
        self._record(Command("memadvise", None, "mem_advise", uses=(m.allocation,),
                             details=(("Ptr", f"{m.address:#x}"), ("Length", n), ("Advice", advice))))

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
        self._copy_bytes(d, s, n, f"memcpy {n} bytes")

    # -- what a back end's handler changes: how bytes move (checked before these are called)
    def _copy_bytes(self, d: Span, s: Span, n: int, label: str) -> None:
        """Record a copy of ``n`` bytes from ``s`` to ``d``: on this CPU device, done by the
        host when it runs (``addresses.copy_bytes``)."""
        self._record(Command("memcpy", lambda: copy_bytes(d, s, n), label, uses=(d.allocation, s.allocation),
                             details=copy_details(s.address, d.address, n)))

    def _fill_bytes(self, kind: str, m: Span, element: bytes, count: int, label: str) -> None:
        """Record ``count`` copies of ``element`` from ``m`` on (a ``memset`` when
        ``element`` is one byte), written by the host: memory it can write only."""
        m = self._host_memory(m, kind)
        self._record(Command(kind, lambda: fill_bytes(m.address, element, count), label, uses=(m.allocation,),
                             details=fill_details(kind, m.address, element, count)))

    def _device_global_copy(self, dg: device_global, other, direction: str, offset: int, nbytes: int) -> None:
        dg.check_access(direction)
        dg.check_bounds(direction, offset, nbytes)
        host = checked_memory(other, f"copy {direction} device_global '{dg.name}'", nbytes,
                              writes=direction == "from")
        dev, ctx = self.queue.device, self.queue.context

        def run():
            where = Span(storage_address(dg, dev, ctx) + offset, None, 0, None)
            copy_bytes(where, host, nbytes) if direction == "to" else copy_bytes(host, where, nbytes)
        self._record(device_global_copy(run, dg, direction, host.address, offset, nbytes))

    def _host_memory(self, m: Span, what: str) -> Span:
        """``m`` when this (CPU) queue's host threads can write it: another device's memory
        the host cannot address (a GPU's ``malloc_device``) is ``errc::invalid``."""
        if m.allocation is not None and not m.allocation.host_accessible:
            raise exception(errc.invalid, f"{what} on {self.queue.device.name}: the memory is device memory of "
                                          f"{m.allocation.device.name}, which this device cannot write; use a "
                                          f"queue of {m.allocation.device.name}")
        return m

    def memset(self, ptr, value: int, nbytes: int) -> None:
        v = checked_int(value, "memset value", -(1 << 31), (1 << 31) - 1)
        n = checked_count(nbytes, "memset size")
        m = checked_memory(ptr, "memset", n, writes=True)
        self._fill_bytes("memset", m, (v & 0xFF).to_bytes(1, "little"), n, f"memset {n} bytes")

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
        self._fill_bytes("memfill", m, element, n, f"fill {n}")

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
        self._copy_bytes(d, s, n * s.dtype.itemsize, f"copy {n} elements")

    def host_task(self, fn) -> None:
        """``fn()`` on the host after the group's dependencies; a ``fn`` taking one
        argument gets an ``interop_handle`` (the queue's native stream, device, context)."""
        if not callable(fn):
            raise exception(errc.invalid, f"host_task expects a callable, got {type(fn).__name__}")
        self._record(host_task_command(host_access.host_task_body(fn), self.queue))

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
        """Graph-owned (or, outside a graph, ordinary) memory of ``size`` elements
        (``commands.AsyncMalloc``).  In a graph the memory is chosen when the node is
        added, reusing a block an ``async_free`` node this one depends on released;
        only device memory (``errc::invalid`` otherwise, as the graph extension says)."""
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
        cmd = AsyncMalloc(size, dtype, kind, bool(pool and pool.zero_init), bool(pool and pool.read_only))
        self._record(cmd)
        return cmd.pointer

    def async_free(self, ptr) -> None:
        self._record(AsyncFree(ptr))

    def ext_oneapi_graph(self, graph) -> None:
        """Run an executable command graph as this command group's command (on a
        queue of the graph's device and context only)."""
        check_graph_submission(self.queue, graph)
        cmd = SubgraphCommand(graph)
        if graph.owns_memory:           # (as finalized: the newer revision)
            cmd.not_in_graph = "a graph with graph-owned allocations cannot be used as a sub-graph"
        if not graph.profiling:
            cmd.unprofiled = UNPROFILED_GRAPH
        self._record(cmd)


def copy_details(src: int, dst: int, nbytes: int) -> tuple:
    """What ``print_graph(verbose=True)`` shows of a copy."""
    return ("Src", f"{src:#x}"), ("Dst", f"{dst:#x}"), ("Length", nbytes)


def fill_details(kind: str, dst: int, element: bytes, count: int) -> tuple:
    """... of a memset (``element``: one byte, ``count`` bytes) or a fill (``element``:
    the pattern's bytes, ``count`` elements)."""
    if kind == "memset":
        return ("Dst", f"{dst:#x}"), ("Value", element[0]), ("Length", count)
    return ("Dst", f"{dst:#x}"), ("Pattern", element.hex()), ("Count", count)


def device_global_copy(run, dg, direction: str, host: int, offset: int, nbytes: int) -> Command:
    """A copy to or from a device_global: never a command-graph node."""
    ends = (("Src", f"{host:#x}"), ("Dst", f"device_global {dg.name}")) if direction == "to" else \
        (("Src", f"device_global {dg.name}"), ("Dst", f"{host:#x}"))
    cmd = Command("memcpy", run, f"copy {direction} device_global {dg.name}",
                  details=ends + (("Offset", offset), ("Length", nbytes)))
    cmd.not_in_graph = "device_global copies cannot be added to a command graph"
    return cmd


#: why an event of a graph finalized without ``enable_profiling`` has no times
UNPROFILED_GRAPH = ("Graph profiling information is unavailable: the executable graph was finalized without the "
                    "enable_profiling property")


def check_graph_submission(q, graph) -> None:
    """``errc::invalid`` unless ``graph`` is an executable graph of ``q``'s device and
    context (``handler.ext_oneapi_graph`` and the queue's direct submission)."""
    if not hasattr(graph, "memory_in_use"):
        raise exception(errc.invalid, f"ext_oneapi_graph expects an executable command graph (finalize() a "
                                      f"modifiable one first), got {type(graph).__name__}")
    if q.context is not graph.context or (q.device is not graph.device and q.device != graph.device):
        raise exception(errc.invalid, f"an executable graph for {graph.device.name} (context {graph.context.id}) "
                                      f"cannot be submitted to a queue of {q.device.name} (context "
                                      f"{q.context.id}): the device and context must be the graph's")
