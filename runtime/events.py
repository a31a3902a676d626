"""Events: a command's completion and, with profiling, its times.

Commands complete when they are submitted (``queue.py``), so an event is
always complete; an event of a command recorded into a command graph has no
completion and refuses to be waited on, as the graph extension says."""
from __future__ import annotations

from . import host_access
from .errors import errc, exception
from .validate import register_kind

__all__ = ["event"]


class event:  # noqa: N801
    """A command's completion (commands complete at submit, see the module docstring)."""

    def __init__(self, submit_ns: int, start_ns: int, end_ns: int, profiling: bool):
        self._times = {"command_submit": submit_ns, "command_start": start_ns, "command_end": end_ns}
        self._profiling = profiling

    @staticmethod
    def untimed(why: str) -> "event":
        """The event of a command that keeps no times, as none can be asked for:
        ``get_profiling_info`` refuses with ``why`` (a graph finalized without
        ``enable_profiling``), whether its queue profiles or not."""
        e = event.__new__(event)
        e._unprofiled = why
        return e

    _profiling = False
    _node = None       # set for events of commands recorded into a command graph
    _scope = None      # ... with the queue's recording (graph/recording.py), usable while it is open
    _unprofiled = None  # why profiling is refused although the queue profiles (a graph without enable_profiling)

    def _recorded(self, what: str) -> None:
        if self._node is not None:
            raise exception(errc.invalid, f"{what} method cannot be used for an event associated with a command graph.")

    def wait(self) -> None:
        if self._node is not None:      # (a completed command's wait costs this test and the next)
            self._recorded("wait")
        if host_access.ENABLED:
            host_access.waited_event(self)

    def wait_and_throw(self) -> None:
        self.wait()

    @property
    def status(self) -> str:
        self._recorded("get_info")
        if host_access.ENABLED:
            host_access.waited_event(self)
        return "complete"

    def get_profiling_info(self, what: str) -> int:
        self._recorded("get_profiling_info")
        if self._unprofiled is not None:
            raise exception(errc.invalid, self._unprofiled)
        if not self._profiling:
            raise exception(errc.invalid, "Profiling information is unavailable as the queue associated with "
                                          "the event does not have the 'enable_profiling' property.")
        if not isinstance(what, str) or what not in self._times:
            raise exception(errc.invalid, f"unknown profiling info {what!r:.60} (command_submit, command_start, "
                                          f"command_end)")
        return self._times[what]

    @staticmethod
    def wait_list(events) -> None:
        """The runtime waits for ``events`` before a command (not the host: see
        ``host_access``)."""
        for e in events:
            if type(e) is event:
                e._recorded("wait")
            else:
                e.wait()


register_kind("event", event)
