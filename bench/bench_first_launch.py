"""First launch of a kernel against its number of parameters (issue 28, point 1).

The first launch links and JIT-compiles the program (``runtime/jit.py``); it
must grow linearly with the kernel's parameter count (it grew with the square:
2,500 parameters 1.4 s, 5,000 5.6 s, 10,000 17-21 s, before kernels of many
parameters loaded them from their slots themselves, ``runtime/packed_args.py``).
Prints each size's first launch less that of a 10-parameter kernel, per
parameter, and the growth from the smallest to the largest size (linear: the
size ratio).  Each size is a fresh kernel (no cached object applies).

    python bench/bench_first_launch.py [--sizes 1000,2500,5000,10000] [--quick]

``--quick`` (the CI guard, ``bench/guard.py``): sizes 500 and 2,000; the last
line is JSON: the growth divided by the size ratio (1.0 is linear).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import program_from_source  # noqa: E402

from minisycl import runtime as sycl  # noqa: E402


def first_launch(n: int, tag: str, clock=time.perf_counter) -> float:
    """The first launch of a fresh kernel of ``n`` int parameters, by ``clock``
    (the test of linear growth passes ``cpu_time``: a loaded machine's waits
    do not count)."""
    name = f"wide_{tag}_{n}"
    src = f"kernel {name}({', '.join(f'int a{i}' for i in range(n))}, int* out) {{ out[0] = a0 + a{n - 1}; }}\n"
    prog = program_from_source(src)
    q = sycl.queue()
    out = sycl.malloc_shared(1, np.int32, q)
    t0 = clock()
    q.single_task(prog.kernel(name), *range(n), out).wait()
    elapsed = clock() - t0
    assert np.asarray(out)[0] == n - 1
    sycl.free(out, q)
    return elapsed


def cpu_time() -> float:
    """CPU seconds of this process (all its threads) and of its children waited
    for (code generation runs in a forked child): time the machine's other
    work takes from it does not count, as it does in wall time."""
    import resource
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,2500,5000,10000")
    ap.add_argument("--quick", action="store_true", help="sizes 500 and 2000; a last line of JSON (CI guard)")
    args = ap.parse_args()
    sizes = [500, 2000] if args.quick else [int(s) for s in args.sizes.split(",")]
    # a fresh object cache: every size compiles (the tag keeps kernels of other runs apart)
    os.environ["MINISYCL_CACHE_DIR"] = tempfile.mkdtemp(prefix="minisycl-bench-cache-")
    tag = str(os.getpid())
    base = min(first_launch(10, f"{tag}a"), first_launch(10, f"{tag}b"))
    print(f"first launch of a kernel of 10 parameters: {base * 1e3:.0f} ms (linking, JIT, the first call)")
    extra = {}
    for n in sizes:
        t = first_launch(n, tag)
        extra[n] = max(t - base, 1e-3)
        print(f"  {n:6d} parameters: {t:7.2f} s, {extra[n] * 1e6 / n:7.1f} us per parameter above the 10-parameter kernel")
    lo, hi = sizes[0], sizes[-1]
    growth = extra[hi] / extra[lo]
    print(f"growth {lo} -> {hi} parameters: x{growth:.1f} (linear: x{hi / lo:.1f}; quadratic: x{(hi / lo) ** 2:.0f})")
    if args.quick:
        print(json.dumps({"first launch growth / parameter growth": {
            "ratio": growth / (hi / lo), "measured": f"x{growth:.1f} ({lo} -> {hi} parameters)",
            "baseline": f"x{hi / lo:.0f} (linear)"}}))


if __name__ == "__main__":
    main()
