"""Queues with SYCL's names: submit command groups, run them, return events.

Commands run when they are submitted, after the events they depend on (and,
for an in-order queue, the previous command) have completed: a valid
schedule for both in-order and out-of-order queues, and the cheapest one.
Kernels spread their work-items over the CPU cores (``native.run_range``); host
tasks run on the submitting thread.  A failed command raises its
``exception`` at submit and leaves the queue usable.
"""
from __future__ import annotations

import threading
import time

from .commands import DynamicValue, KernelCommand
from .device import context, default_context, default_device, device as Device
from .errors import errc, exception
from .events import event
from .handler import handler
from .native import run_range
from .program import kernel as Kernel
from . import assertions, work_groups

__all__ = ["queue"]


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
            work_groups.launch(linked, linked.groups[k.name], k, slots, geometry, self.device)
        else:
            run_range(linked.launcher(k.name), slots, total, geometry, k.name)
        assertions.check()                          # a failed assert in the kernel (assertions.py)

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
            if any(isinstance(a, DynamicValue) and a.graph_only for a in h.command.args):
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
