"""What a guarded USM allocation costs (issue 17, point 3), side by side in one run.

Each ``malloc_shared`` is its own mapping ending at a ``PROT_NONE`` guard page
(``runtime/memory.py``), so a kernel that runs past an allocation faults in its
guard.  Timed per allocate-and-free, at several sizes, against:

* plain ``malloc``/``free`` from the C library (through ctypes: the call cost is
  included, as it is for ours);
* ``calloc``/``free`` (zeroed memory, as USM here is);
* the previous implementation, a 64-byte-aligned slice of ``numpy.zeros``.

Also the first touch of every page of a fresh allocation, where the kernel's
lazy zero pages cost their page faults.

    python bench/bench_usm.py [--repeat 2000] [--quick]

``--quick`` (the CI guard, ``bench/guard.py``): 4 KiB and 1 MiB, 300 repeats; the
last line is JSON: allocate + free over NumPy's ``np.zeros`` of the same size.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import best  # noqa: E402

from minisycl import runtime as sycl  # noqa: E402

SIZES = [64, 4096, 1 << 20, 64 << 20]


def per_call(fn, repeat: int) -> float:
    """Best of 5 rounds, seconds per call."""
    def round_():
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        return (time.perf_counter() - t0) / repeat
    return min(round_() for _ in range(5))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2000)
    ap.add_argument("--quick", action="store_true", help="two sizes; a last line of JSON ratios (CI guard)")
    args = ap.parse_args()
    sizes = [4096, 1 << 20] if args.quick else SIZES
    if args.quick:
        args.repeat = 300
    figures = {}
    libc = ctypes.CDLL(None)
    libc.malloc.restype = libc.calloc.restype = ctypes.c_void_p
    libc.malloc.argtypes, libc.calloc.argtypes = [ctypes.c_size_t], [ctypes.c_size_t, ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]

    def numpy_zeros(n):
        raw = np.zeros(n + 64, dtype=np.uint8)
        return raw[(-raw.ctypes.data) % 64:][:n]

    print(f"{'bytes':>10} {'malloc':>10} {'calloc':>10} {'np.zeros':>10} {'ours':>10} {'ours/malloc':>12}"
          f" {'ours/np.zeros':>14}   (us per allocate + free)")
    for size in sizes:
        repeat = max(args.repeat // (1 + size // (1 << 20)), 20)
        t_malloc = per_call(lambda: libc.free(libc.malloc(size)), repeat)
        t_calloc = per_call(lambda: libc.free(libc.calloc(1, size)), repeat)
        t_numpy = per_call(lambda: numpy_zeros(size), repeat)
        t_ours = per_call(lambda: sycl.free(sycl.malloc_shared(size, np.uint8)), repeat)
        print(f"{size:>10} {t_malloc * 1e6:>10.2f} {t_calloc * 1e6:>10.2f} {t_numpy * 1e6:>10.2f} "
              f"{t_ours * 1e6:>10.2f} {t_ours / t_malloc:>11.1f}x {t_ours / t_numpy:>13.2f}x")
        figures[f"malloc_shared + free of {size} bytes / np.zeros"] = {
            "ratio": t_ours / t_numpy, "measured": f"{t_ours * 1e6:.2f} us", "baseline": f"{t_numpy * 1e6:.2f} us"}
    if args.quick:
        print(json.dumps(figures))
        return

    size = 64 << 20
    def touch_ours():
        a = sycl.malloc_shared(size, np.uint8)
        np.asarray(a)[::4096] = 1
        sycl.free(a)
    def touch_numpy():
        numpy_zeros(size)[::4096] = 1
    t_ours = best(touch_ours, 5)
    t_numpy = best(touch_numpy, 5)
    print(f"first touch of 64 MiB: ours {t_ours * 1e3:.2f} ms, np.zeros {t_numpy * 1e3:.2f} ms "
          f"({t_ours / t_numpy:.2f}x)")


if __name__ == "__main__":
    main()
