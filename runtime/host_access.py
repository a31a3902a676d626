"""Host access as SYCL defines it, checked on the CPU device (``MINISYCL_CHECK_HOST_ACCESS=1``).

On the CPU device every command has finished when ``submit`` returns, and all
USM is host memory, so two mistakes go unseen there that a GPU shows at once:

* reading (or writing) a USM allocation on the host after submitting a command
  and before waiting for it (``queue.wait()``, ``event.wait()``, or an
  ``event``'s status read as complete).  SYCL only promises results after the
  wait; a GPU queue runs asynchronously, and the host reads stale memory;
* reading ``malloc_device`` memory on the host, which SYCL does not allow and a
  GPU cannot do.

With the check on, the CPU queue notes each command it runs until the host has
waited for it (``submitted``/``waited``), and every host view of an allocation
(``usm_allocation.array``: indexing, ``numpy.asarray``) passes through
``check``, which refuses with ``errc::invalid`` while a command that may touch
the allocation is not waited for.  A command "may touch" an allocation when
the allocation is among what it lists in ``uses``, or when it cannot say (a
kernel reaches memory through pointers the runtime cannot see, and a graph
replay runs many commands).  Host tasks run after their dependencies, so their
bodies are exempt from the first check (not from the second).  The test suite turns the check on for every runtime test:
a test that passes on the CPU then reads results as a GPU needs it to.

Off (the default), ``submitted`` is never called and ``check`` costs one test of
an empty list.
"""
from __future__ import annotations

import functools
import threading

from ..passes.support import knobs
from .errors import errc, exception

__all__ = ["ENABLED", "submitted", "waited_queue", "waited_event", "check", "host_task_body", "native_command_body",
           "forget"]

#: whether the check runs (read once: the queue's hot path tests this constant)
ENABLED = knobs.check_host_access()

#: commands run and not yet waited for: [queue, event, its dependencies, uses (None: anything)]
_pending: list[list] = []
_lock = threading.Lock()
_local = threading.local()


def submitted(q, e, deps, uses, label: str) -> None:
    """``q`` ran the command ``label`` of event ``e`` (after ``deps``); it may touch
    ``uses`` (allocations), or anything when ``uses`` is None."""
    with _lock:
        _pending.append([q, e, tuple(deps), None if uses is None else tuple(u for u in uses if u is not None), label])


def forget() -> None:
    """Start afresh (the test suite, between tests)."""
    with _lock:
        _pending.clear()


def waited_queue(q) -> None:
    """``q.wait()`` returned: every command of ``q`` is complete for the host."""
    with _lock:
        _pending[:] = [p for p in _pending if p[0] is not q]


def waited_event(e) -> None:
    """``e.wait()`` returned: its command, what it depended on, and, on an in-order
    queue, every command before it are complete for the host."""
    with _lock:
        done = {id(e)}
        for p in reversed(_pending):
            if id(p[1]) in done:
                done.update(id(d) for d in p[2])
        cut = {}
        for i, p in enumerate(_pending):
            if id(p[1]) in done and getattr(p[0], "in_order", False):
                cut[id(p[0])] = i
        _pending[:] = [p for i, p in enumerate(_pending)
                       if id(p[1]) not in done and not (id(p[0]) in cut and i <= cut[id(p[0])])]


def check(allocation) -> None:
    """Refuse a host view of ``allocation`` where SYCL does not give one (module docstring)."""
    if getattr(_local, "in_native_command", False):
        return                      # the device's own work (a native command: here the host is the device)
    if allocation.kind == "device":
        raise exception(errc.invalid, f"a malloc_device allocation cannot be read or written by the host (a GPU "
                                      f"cannot): copy it with queue.memcpy / queue.copy "
                                      f"[{knobs.CHECK_HOST_ACCESS}]")
    if getattr(_local, "in_host_task", False):
        return
    with _lock:
        for q, e, _, uses, label in _pending:
            if uses is None or any(u is allocation for u in uses):
                raise exception(errc.invalid, f"host access to a USM allocation ({allocation!r}) while a command "
                                              f"submitted to a queue ({label}) has not been waited for: SYCL gives "
                                              f"results after queue.wait() or "
                                              f"event.wait() (a GPU is still running it) "
                                              f"[{knobs.CHECK_HOST_ACCESS}]")


def native_command_body(fn):
    """``fn`` run as a native command of a CPU device's queue: the device's own work
    (an MPI collective on USM, a library call), so neither check applies to it."""
    return _marked(fn, "in_native_command")


def host_task_body(fn):
    """``fn`` run as a host task's body: its host accesses are allowed (it runs
    after its dependencies)."""
    return _marked(fn, "in_host_task")


def _marked(fn, flag: str):
    """``fn`` running with the thread's ``flag`` set (``check`` reads it); its name and
    signature kept (a host task taking an ``interop_handle``)."""
    if not ENABLED:
        return fn

    @functools.wraps(fn)
    def body(*args):
        before = getattr(_local, flag, False)
        setattr(_local, flag, True)
        try:
            return fn(*args)
        finally:
            setattr(_local, flag, before)
    return body
