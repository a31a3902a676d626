"""Record & replay: a queue's submissions become nodes of a graph instead of running.

``begin_recording`` puts queues into the recording state; each command group
they are given becomes a node (``Recorder._record``), with edges from its
event dependencies, from the implicit chain of an in-order queue and from
barriers.  A queue whose command depends on an event of an open recording
records into that graph too (transitive recording, ``queue.submit``)."""
from __future__ import annotations

import contextlib
import weakref

from ..events import event
from ..validate import require_bool, require_names, require_queue
from .nodes import invalid

__all__ = ["GRAPH_PROPERTIES", "Recording", "Recorder"]

#: the graph properties (``property::graph::*``), by name: what ``begin_recording`` accepts
GRAPH_PROPERTIES = ("no_cycle_check", "assume_buffer_outlives_graph", "assume_data_outlives_buffer", "updatable",
                    "enable_profiling")


class Recording:
    """One queue's recording into a graph, from ``begin_recording`` (or a transitive
    start) to ``end_recording``.  Events recorded in it carry it (``event._scope``):
    once it is closed they cannot be used by other queues' commands, and the
    queues they come from are never put back into recording through them."""

    __slots__ = ("_graph", "properties", "_open")

    def __init__(self, graph, properties: dict):
        self._graph = weakref.ref(graph)
        self.properties = dict(properties)
        self._open = True

    @property
    def graph(self):
        return self._graph()

    @property
    def open(self) -> bool:
        return self._open and self._graph() is not None

    def close(self) -> None:
        self._open = False


def _queues(value, what: str) -> list:
    """A queue or a list or tuple of queues, as a list."""
    if isinstance(value, (list, tuple)):
        return [require_queue(q, f"{what}[{i}]") for i, q in enumerate(value)]
    return [require_queue(value, what)]


def _property_names(property_list, properties: dict) -> dict:
    """Graph properties given as names, a name -> value mapping and keywords, checked."""
    given = dict(properties)
    if isinstance(property_list, dict):
        given.update(property_list)
    else:
        for name in require_names(property_list, "graph property list"):
            given[name] = True
    for name in given:
        if name not in GRAPH_PROPERTIES:
            raise invalid(f"{name!r:.60} is not a command-graph property ({', '.join(GRAPH_PROPERTIES)})")
        given[name] = require_bool(given[name], f"graph property {name}")
    return given


class Recorder:
    """The recording half of ``command_graph`` (a mixin: the graph's ``_lock``,
    ``nodes``, ``_node_of`` and ``_new_node`` are its own)."""

    def _init_recording(self) -> None:
        self._recording_queues: weakref.WeakSet = weakref.WeakSet()
        self._sessions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._last_on_queue: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._barrier_on_queue: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def _check_not_recording(self, what: str) -> None:
        if any(q._recording is self for q in self._recording_queues):
            raise invalid(what)

    def begin_recording(self, queues, property_list=(), **properties) -> None:
        """Start recording ``queues`` (one or a list) into this graph; the properties
        (graph property names, as a list, a mapping or keywords) hold for what they
        record and pass on to queues they put into recording transitively.  All
        queues are checked before any starts."""
        targets = _queues(queues, "begin_recording queues")
        props = _property_names(property_list, properties)
        seen = set()
        for q in targets:
            if q._recording is not None or id(q) in seen:
                raise invalid("begin_recording cannot be called for a queue which is already in the recording state.")
            seen.add(id(q))
            if q.context is not self.context:
                raise invalid("begin_recording cannot be called for a queue whose context differs from the graph "
                              "context.")
            if q.device != self.device:
                raise invalid("begin_recording cannot be called for a queue whose device differs from the graph "
                              "device.")
        for q in targets:
            self._start(q, props)

    def _start(self, q, props: dict) -> None:
        q._recording_ref = weakref.ref(self)
        self._recording_queues.add(q)
        self._sessions[q] = Recording(self, props)

    def _begin_transitive(self, q, scope: Recording) -> None:
        """``q`` depends on an event of ``scope``: it records into this graph as if
        ``begin_recording`` had been called with ``scope``'s properties (``q``'s
        device and context checked by ``queue._transitive_scope``)."""
        self._start(q, scope.properties)

    def end_recording(self, queues=None) -> None:
        targets = list(self._recording_queues) if queues is None else _queues(queues, "end_recording queues")
        for q in targets:
            if q._recording is not None and q._recording is not self:
                raise invalid("end_recording called for a queue which is recording to a different graph.")
        for q in targets:
            if q._recording is not self:
                continue
            q._recording_ref = None
            self._recording_queues.discard(q)
            session = self._sessions.pop(q, None)
            if session is not None:
                session.close()
            # (the in-order chain is kept: recording an in-order queue makes a straight-line
            # graph, paused or not, so a resumed recording's first node follows its last)
            self._barrier_on_queue.pop(q, None)

    @contextlib.contextmanager
    def recording(self, queues, property_list=(), **properties):
        """``with graph.recording(q): ...`` records the block's submissions."""
        self.begin_recording(queues, property_list, **properties)
        try:
            yield self
        finally:
            self.end_recording(queues)

    def _record(self, q, h) -> event:
        with self._lock:
            deps = [self._node_of(e) for e in h.deps]
            cmd = h.command
            if h.registrations:
                raise invalid("dynamic_parameters cannot be used in commands recorded from a queue (record & "
                              "replay): add the node with command_graph.add")
            last = self._last_on_queue.get(q)
            if q.in_order and last is not None:
                deps.append(last)
            barrier = self._barrier_on_queue.get(q)
            if barrier is not None:
                deps.append(barrier)            # commands after a barrier wait for it
            is_barrier = cmd is not None and cmd.kind == "ext_oneapi_barrier"
            if is_barrier and not q.in_order and not cmd.wait_list:
                # a barrier without a wait list waits for this queue's leaves; one with
                # a wait list only for those events
                deps += [n for n in self.nodes if not n.succs and getattr(n, "_queue", None) is q]
            n = self._new_node(cmd, deps)
            n._queue = q
            self._last_on_queue[q] = n
            if is_barrier:
                self._barrier_on_queue[q] = n
            session = self._sessions.get(q)
        e = event(0, 0, 0, False)
        e._node = n
        e._scope = session
        return e

    def _close_recordings(self) -> None:
        """The graph is gone: its recordings end (``__del__``)."""
        for session in list(getattr(self, "_sessions", {}).values()):
            session.close()
        for q in list(getattr(self, "_recording_queues", ())):
            if q._recording is self or q._recording is None:
                q._recording_ref = None
