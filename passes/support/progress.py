"""Progress of long commands on the terminal (``compile``, ``build``, ``post-link``).

``Progress`` draws click's progress bar on standard error once the work has
taken ``delay`` seconds (one by default), and only when standard error is a
terminal and the user did not ask for quiet: short runs, pipes, files and CI
logs see nothing.  A background thread redraws the bar every ``tick`` seconds,
so the elapsed time moves even while one long step (a 5 MB source) runs;
``step(label)`` marks the start of the next step, and the bar ends with a
newline so that diagnostics printed afterwards start on their own line.
"""
from __future__ import annotations

import sys
import threading
import time

import click

__all__ = ["Progress"]


class Progress:
    """``with Progress("compile", total=4, quiet=q) as p: p.step("parse") ...``"""

    def __init__(self, label: str, total: int, *, quiet: bool = False, delay: float = 1.0, tick: float = 0.25,
                 stream=None):
        self.label, self.total, self.delay, self.tick = label, max(int(total), 1), delay, tick
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = not quiet and _is_terminal(self.stream)
        self.done, self.current = 0, ""
        self._bar = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        self._start = time.monotonic()

    def __enter__(self) -> "Progress":
        if self.enabled:
            self._thread = threading.Thread(target=self._run, name="minisycl-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            if self._bar is not None:
                if exc[0] is None:
                    self._bar.update(self.total - self._bar.pos)
                self._bar.render_finish()
                self._bar = None

    def step(self, label: str = "", count: int = 1) -> None:
        """The work before this call is done (``count`` steps of it); ``label`` names what runs now."""
        with self._lock:
            self.done = min(self.done + count, self.total)
            self.current = label
            if self._bar is not None:
                self._bar.update(self.done - self._bar.pos)

    def at(self, done: int, total: int | None = None, label: str = "") -> None:
        """``done`` of ``total`` steps are finished (for callbacks that count)."""
        with self._lock:
            if total is not None and total != self.total:
                self.total = max(int(total), 1)
                if self._bar is not None:
                    self._bar.length = self.total
            self.done, self.current = min(done, self.total), label or self.current
            if self._bar is not None:
                self._bar.update(self.done - self._bar.pos)

    def _status(self) -> str:
        elapsed = time.monotonic() - self._start
        return f"{self.current} ({elapsed:.0f} s)" if self.current else f"({elapsed:.0f} s)"

    def _run(self) -> None:
        if self._stop.wait(max(self.delay - (time.monotonic() - self._start), 0)):
            return
        with self._lock:
            self._bar = click.progressbar(length=self.total, label=self.label, file=self.stream, show_eta=False,
                                          show_pos=True, item_show_func=lambda _: self._status())
            self._bar.update(self.done)
        while not self._stop.wait(self.tick):
            with self._lock:
                if self._bar is not None:
                    self._bar.render_progress()


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
