"""DLPack export and import per call (issue 33, point 4: under 5 us), beside NumPy's own, in one run.

On this CPU, with NumPy as the other library (1,024 float32 values):

* export: ``np.from_dlpack(usm)``: our ``__dlpack__`` (a capsule) and, when
  NumPy's array goes, our deleter;
* import: ``sycl.from_dlpack(array, q)`` of a NumPy array (taken through its
  ``__dlpack__``): the capsule taken and checked, a ``foreign_allocation``
  made and, when it goes, NumPy's deleter called;
* the baseline: ``np.from_dlpack(array)``, NumPy taking its own array's
  capsule (a capsule made, taken, and a view made and dropped).

Each figure is the best of ``--rounds`` rounds of ``--iters`` calls, the three
interleaved round by round (A B C A B C), so a load that comes and goes on a
shared machine falls on all of them; times are the calling thread's CPU time
(``time.thread_time``: what a call costs, not the time the scheduler gives
other processes of a shared machine).  ``bench/bench_distributed.py`` (d) times
the same calls on a GPU with torch as the other library (``measure``).

    python bench/bench_dlpack.py [--iters 20000] [--rounds 7] [--quick]

``--quick`` (the CI guard, ``bench/guard.py``): fewer calls; the last lines are
JSON, each direction's time over NumPy's own ``np.from_dlpack``.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from minisycl import runtime as sycl

#: the issue's goal for either direction, microseconds per call
GOAL_US = 5.0


def measure(calls: dict, iters: int, rounds: int) -> dict:
    """Microseconds per call of each of ``calls`` (name -> function), in the calling
    thread's CPU time: the best of ``rounds`` rounds of ``iters`` calls, the
    functions interleaved round by round."""
    for fn in calls.values():                   # warm up (the native code is compiled on first use)
        for _ in range(100):
            fn()
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(rounds):
        for name, fn in calls.items():
            t0 = time.thread_time()
            for _ in range(iters):
                fn()
            best[name] = min(best[name], (time.thread_time() - t0) / iters * 1e6)
    return best


def numpy_calls(q) -> dict:
    """The three calls on this CPU with NumPy (see the module docstring)."""
    x = sycl.malloc_shared(1024, np.float32, q)
    a = np.ones(1024, np.float32)
    return {"export": lambda: np.from_dlpack(x), "import": lambda: sycl.from_dlpack(a, q),
            "numpy": lambda: np.from_dlpack(a)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="fewer calls; closing lines of JSON figures (CI guard)")
    args = ap.parse_args()
    if args.quick:
        args.iters, args.rounds = 3000, 9
    q = sycl.queue(sycl.HOST_CPU)
    us = measure(numpy_calls(q), args.iters, args.rounds)
    base = us["numpy"]
    print(f"DLPack per call on {q.device.name}, best of {args.rounds} x {args.iters} calls, interleaved "
          f"(goal: under {GOAL_US:g} us)")
    print(f"  export  np.from_dlpack(usm)        {us['export']:6.2f} us  ({us['export'] / base:4.2f}x NumPy's own)")
    print(f"  import  sycl.from_dlpack(ndarray)  {us['import']:6.2f} us  ({us['import'] / base:4.2f}x NumPy's own)")
    print(f"  NumPy   np.from_dlpack(ndarray)    {base:6.2f} us")
    for name, label in (("export", "DLPack export (np.from_dlpack of USM)"),
                        ("import", "DLPack import (sycl.from_dlpack of NumPy)")):
        print(json.dumps({"figure": f"{label} / np.from_dlpack of NumPy", "ratio": us[name] / base,
                          "measured": f"{us[name]:.2f} us", "baseline": f"{base:.2f} us"}))


if __name__ == "__main__":
    main()
