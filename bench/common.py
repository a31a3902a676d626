"""Helpers the runtime benchmarks share."""
from __future__ import annotations

import os
import tempfile
import time


def best(fn, repeat: int = 5) -> float:
    """The fastest of ``repeat`` timed calls of ``fn``, in seconds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def source_file(text: str, name: str = "bench.ksl") -> str:
    """Write kernel-language source to a fresh temporary folder; returns its path."""
    path = os.path.join(tempfile.mkdtemp(prefix="minisycl-bench-"), name)
    with open(path, "w") as fh:
        fh.write(text)
    return path


def program_from_source(text: str):
    from minisycl import runtime as sycl
    return sycl.build_program([source_file(text)])
