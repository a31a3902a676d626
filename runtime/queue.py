"""Queues with SYCL's names: submit command groups, run them, return events.

Commands run when they are submitted, after the events they depend on (and,
for an in-order queue, the previous command) have completed: a valid
schedule for both in-order and out-of-order queues, and the cheapest one.
Kernels spread their work-items over the CPU cores (``native.run_range``); host
tasks run on the submitting thread.  A failed command raises its
``exception`` at submit and leaves the queue usable.
"""
from __future__ import annotations

import enum
import threading
import time

from .commands import DynamicValue, KernelCommand, check_kernel, launch_geometry
from .device import context, default_context, default_device, device as Device
from .errors import errc, exception
from .events import event
from .handler import UNPROFILED_GRAPH, check_graph_submission, handler
from .commands import PLAIN, foreign
from .memory import usm_allocation
from .native import run_range
from .program import kernel as Kernel
from .reductions import prepare as prepare_reductions
from .validate import register_kind, require_bool, require_context, require_events
from . import assertions, host_access, work_groups


def check_command_group(cgf) -> None:
    """``errc::invalid`` unless ``cgf`` is a command-group function (every queue's ``submit``)."""
    if not callable(cgf):
        raise exception(errc.invalid, f"submit expects a command-group function, got {type(cgf).__name__}")


def _touches(cmd):
    """The allocations a command may touch (``host_access``): a kernel's allocation
    arguments, what another command lists; None (anything) for a host task or a
    sub-graph."""
    if isinstance(cmd, KernelCommand):
        return [a for a in cmd.args if isinstance(a, usm_allocation)]
    uses = cmd.uses
    return uses if isinstance(uses, tuple) and cmd.kind != "host_task" else None

__all__ = ["queue", "queue_state"]


class queue_state(str, enum.Enum):  # noqa: N801 - the graph extension's name
    """``queue_state`` of the graph extension (equal to its name as a string)."""
    executing = "executing"
    recording = "recording"


class queue:  # noqa: N801
    #: the command-group handler class (a device with its own queue class, such as an
    #: NVIDIA GPU's ``cuda/queue.py``, has its own)
    _handler_class = handler

    def __new__(cls, dev=None, *, device_selector=None, **kwargs):
        """A queue of the class of the device's back end (``Backend.queue_class``)."""
        if cls is queue:
            cls = default_device(device_selector if dev is None else dev).impl.queue_class
        return super().__new__(cls)

    def __init__(self, dev: Device | str | None = None, *, in_order: bool = False, enable_profiling: bool = False,
                 device_selector=None, context: "context | None" = None):
        self.device = default_device(device_selector if dev is None else dev)
        self.context = require_context(context, "queue context", optional=True) or default_context(self.device)
        if self.device not in self.context.devices:
            raise exception(errc.invalid, f"Queue cannot be constructed with the given context and device since the "
                                          f"device is not a member of the context ({self.device.name} is not one of "
                                          f"{', '.join(d.name for d in self.context.devices)})")
        self._recording_ref = None    # weak reference to the command_graph this queue records into
        self._lock = threading.RLock()   # one command at a time per queue, from any thread
        self.in_order = require_bool(in_order, "queue in_order")
        self.profiling = require_bool(enable_profiling, "queue enable_profiling")

    @property
    def _recording(self):
        ref = self._recording_ref
        return ref() if ref is not None else None

    def get_device(self) -> Device:
        return self.device

    def get_context(self):
        return self.context

    # -- what a back end's queue class may override (``backend.QUEUE_HOOKS``)

    def prepare_reductions(self, args) -> None:
        """``initialize_to_identity``: each reduction's result set to its operation's identity
        before the kernel (on this CPU, now)."""
        prepare_reductions(args)

    def run_graph_steps(self, steps) -> None:
        """Run an executable graph's commands one by one on this queue (a graph its device's
        back end does not run as one native graph, off the host)."""
        for step in steps:
            if step[0] == "python":
                step[1].run(self)

    def hold_until_done(self, obj) -> None:
        """Keep ``obj`` (another library's memory a command uses: ``interop.adopt``) while
        commands submitted from now on may use it: here they have run at submit, so the
        caller's reference is enough (a GPU queue keeps it until a synchronisation)."""

    def native_stream(self) -> int:
        """The native queue or stream handle, for interoperating libraries: a CPU
        device has none (``errc::feature_not_supported``)."""
        raise exception(errc.feature_not_supported, f"device {self.device.name} ({self.device.backend}) has no "
                                                    f"native stream")

    def _launch(self, k: Kernel, slots, total: int, geometry) -> None:
        target = k.targets.get((self.device.name, self.context.id))
        if target is None:
            target = self._target(k)
        _, launcher, group, required = target
        if required is not None:                    # reqd_work_group_size (work_groups.py)
            work_groups.check_local_size(k, geometry, self.device)
        if group is not None:                       # a work-group per call (work_groups.py)
            work_groups.launch(launcher, group, k, slots, geometry, self.device)
        else:
            run_range(launcher, slots, total, geometry, k.name)
        assertions.check(k.name)                    # a failed assert in the kernel (assertions.py)

    def _target(self, k: Kernel) -> tuple:
        """What a launch of ``k`` on this queue's device and context needs, found once
        (``kernel.targets``): the linked program (kept alive with it), its launcher's
        address, its work-group facts or None, and its required work-group size or None."""
        linked, _ = k.program.linked_for(k.name, self.device, self.context)
        required = k.required_work_group_size(self.device) if k.item is not None and k.item.startswith("nd_item") \
            else None
        target = k.targets[(self.device.name, self.context.id)] = (linked, linked.launcher(k.name),
                                                                   linked.groups.get(k.name), required)
        return target

    def submit(self, cgf, depends_on=None) -> event:
        check_command_group(cgf)
        h = self._handler_class(self, self._recording)
        if depends_on is not None:
            h.depends_on(depends_on)
        submitted = time.perf_counter_ns()
        cgf(h)
        recorded = self._close(h)
        if recorded is not None:
            return recorded
        if h.command is None:
            return event(submitted, submitted, submitted, self.profiling)
        event.wait_list(h.deps)
        start = time.perf_counter_ns()
        with self._lock:
            h.command.run(self)
        e = event(submitted, start, time.perf_counter_ns(), self.profiling)
        e._unprofiled = getattr(h.command, "unprofiled", None)
        if host_access.ENABLED:
            host_access.submitted(self, e, h.deps, _touches(h.command), h.command.label or h.command.kind)
        return e

    def _close(self, h: handler):
        """End command group ``h`` once its function has returned, for every queue
        class: decide where it goes (the graph this queue records into, or
        transitively the one its dependencies were recorded into, else this
        queue), apply that destination's rules (``handler.close``) and, for a
        graph, record it: its event.  ``None``: the queue runs it.  A refusal
        leaves the queue's recording state and the graph as they were."""
        graph, scope = self._recording, None
        if graph is None:
            scope = self._transitive_scope(h)
            graph = scope.graph if scope is not None else None
        h.close(graph)
        if graph is None:
            return None
        if scope is not None:
            graph._begin_transitive(self, scope)
        try:
            return graph._record(self, h)
        except BaseException:
            if scope is not None:           # a refused command leaves the queue as it was
                graph.end_recording(self)
            raise

    def _transitive_scope(self, h: handler):
        """The recording this submission goes to although the queue is not
        recording: one its dependencies were recorded into, while that recording
        is open (the graph extension's transitive queue recording).  The queue
        then records into its graph as if ``begin_recording`` had been called,
        with the same properties (``_close``).  An event whose recording has
        ended is refused, and so is a queue of another device or context."""
        scopes = {e._scope for e in h.deps if getattr(e, "_scope", None) is not None}
        if not scopes:
            return None
        if any(not s.open for s in scopes):
            raise exception(errc.invalid, "an event recorded into a command graph cannot be used after its queue's "
                                          "recording ended (end_recording)")
        graphs = {s.graph for s in scopes}
        if len(graphs) > 1:
            raise exception(errc.invalid, "a command group cannot depend on events recorded into different "
                                          "command graphs")
        scope = scopes.pop()
        if self.context is not scope.graph.context or self.device != scope.graph.device:
            raise exception(errc.invalid, "a queue of another device or context cannot depend on an event recorded "
                                          "into this graph")
        return scope

    # -- sycl_ext_oneapi_graph
    #: whether ``ext_oneapi_graph`` may run a graph without ``submit`` (a GPU queue's
    #: submit orders the launch on its stream and returns its own event: it may not)
    _graphs_directly = True

    def ext_oneapi_graph(self, graph, depends_on=None) -> event:
        """Submit an executable command graph.  Without dependencies on a queue that
        is not recording, it runs directly (no handler, command or closure: the
        same checks, ``check_graph_submission``); a replay costs little more than
        its plan."""
        if depends_on is not None or self._recording_ref is not None or not self._graphs_directly:
            return self.submit(lambda h: h.ext_oneapi_graph(graph), depends_on)
        check_graph_submission(self, graph)
        if graph.profiling:
            submitted = time.perf_counter_ns()
            with self._lock:
                graph._execute(self)
            e = event(submitted, submitted, time.perf_counter_ns(), self.profiling)
        else:                           # no times: its event refuses to give any
            with self._lock:
                graph._execute(self)
            e = event.untimed(UNPROFILED_GRAPH)
        if host_access.ENABLED:
            host_access.submitted(self, e, (), None, "a command graph")
        return e

    def ext_oneapi_get_state(self) -> queue_state:
        """``queue_state.recording`` or ``queue_state.executing``."""
        return queue_state.recording if self._recording is not None else queue_state.executing

    def ext_oneapi_get_graph(self):
        if self._recording is None:
            raise exception(errc.invalid, "ext_oneapi_get_graph() called for a queue which is not recording to a graph")
        return self._recording

    def ext_oneapi_submit_barrier(self, wait_list=None) -> event:
        """``sycl_ext_oneapi_enqueue_barrier``: a barrier, on ``wait_list`` when given,
        else on everything submitted before."""
        if wait_list is not None:
            wait_list = require_events(wait_list, "ext_oneapi_submit_barrier wait_list")
        return self.submit(lambda h: h.ext_oneapi_barrier(wait_list))

    # shortcuts, as sycl::queue has them
    def single_task(self, k: Kernel, *args, depends_on=None) -> event:
        if depends_on is None and self._direct_launch(k, args):
            return self._launch_now(k, None, args)
        return self.submit(lambda h: h.single_task(k, *args), depends_on)

    def parallel_for(self, k: Kernel, r, *args, depends_on=None) -> event:
        if depends_on is None and self._direct_launch(k, args):
            return self._launch_now(k, r, args)
        return self.submit(lambda h: h.parallel_for(k, r, *args), depends_on)

    def _direct_launch(self, k, args) -> bool:
        """Whether a shortcut launch may skip the handler and ``submit``: this (CPU)
        queue class, no graph recording, no dynamic values."""
        if self._handler_class is not handler or self._recording_ref is not None:
            return False
        for a in args:
            if type(a) not in PLAIN and (isinstance(a, DynamicValue) or foreign(a)):
                return False        # (another library's memory: the handler adopts it)
        return True

    def _launch_now(self, k: Kernel, r, args) -> event:
        """What ``submit`` does for a kernel command group without dependencies,
        less the handler, its bookkeeping and the ``KernelCommand``: the same checks
        in the same order, for about a third of the Python."""
        submitted = time.perf_counter_ns()
        check_kernel(k)
        total, geometry = launch_geometry(k, r)
        slots = k.pack(args)
        start = time.perf_counter_ns()
        with self._lock:
            if k.reduces:
                prepare_reductions(args)
            self._launch(k, slots, total, geometry)
        e = event(submitted, start, time.perf_counter_ns(), self.profiling)
        if host_access.ENABLED:
            host_access.submitted(self, e, (), [a for a in args if isinstance(a, usm_allocation)], k.name)
        return e

    def memcpy(self, dst, src, nbytes: int | None = None, offset: int = 0, depends_on=None) -> event:
        return self.submit(lambda h: h.memcpy(dst, src, nbytes, offset), depends_on)

    def memset(self, ptr, value: int, nbytes: int, depends_on=None) -> event:
        return self.submit(lambda h: h.memset(ptr, value, nbytes), depends_on)

    def fill(self, ptr, pattern, count: int, depends_on=None) -> event:
        return self.submit(lambda h: h.fill(ptr, pattern, count), depends_on)

    def copy(self, src, dst, count: int | None = None, start_index: int = 0, depends_on=None) -> event:
        return self.submit(lambda h: h.copy(src, dst, count, start_index), depends_on)

    def ext_codeplay_enqueue_native_command(self, fn, depends_on=None) -> event:
        """``fn(interop_handle)`` as a command (``handler.ext_codeplay_enqueue_native_command``)."""
        return self.submit(lambda h: h.ext_codeplay_enqueue_native_command(fn), depends_on)

    def wait(self) -> None:
        if self._recording is not None:
            raise exception(errc.invalid, "wait cannot be called for a queue which is recording to a command graph.")
        if host_access.ENABLED:
            host_access.waited_queue(self)

    def wait_and_throw(self) -> None:
        self.wait()


register_kind("queue", queue)
