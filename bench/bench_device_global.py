"""device_global speed (issue 6, point 6), side by side in one run.

1. A read-modify-write of a device global in a kernel, versus the same through
   a USM pointer argument (target: within 5%).
2. A 4-byte ``copy`` to a device global versus a 4-byte USM ``memcpy``
   (target: within 2x).

    python bench/bench_device_global.py
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import best, program_from_source  # noqa: E402

from minisycl import runtime as sycl  # noqa: E402

KSL = """
device_global<float[1048576]> table;
kernel through_dg(id<1> i) { table[i] = table[i] * 0.5f + 1.0f; }
kernel through_usm(id<1> i, float* t) { t[i] = t[i] * 0.5f + 1.0f; }
"""


def main():
    prog = program_from_source(KSL)
    q = sycl.queue()
    n = 1 << 20         # each work-item updates its own element (no two cores share a cache line)
    usm = sycl.malloc_shared(n, np.float32, q)
    q.parallel_for(prog.kernel("through_dg"), n)
    q.parallel_for(prog.kernel("through_usm"), n, usm)
    t_dg = best(lambda: q.parallel_for(prog.kernel("through_dg"), n), 50)
    t_usm = best(lambda: q.parallel_for(prog.kernel("through_usm"), n, usm), 50)
    dg = prog.device_global("table")
    src = np.ones(1, np.float32)
    dst = sycl.malloc_device(1, np.float32, q)
    reps = 20000

    def copies():
        for _ in range(reps):
            q.copy(src, dg, 1)

    def memcpys():
        for _ in range(reps):
            q.memcpy(dst, src, 4)
    t_copy = best(copies, 3) / reps
    t_memcpy = best(memcpys, 3) / reps
    print(f"read-modify-write over {n} work-items: device_global {t_dg * 1e6:.1f} us, USM pointer "
          f"{t_usm * 1e6:.1f} us, ratio {t_dg / t_usm:.3f} (target <= 1.05)")
    print(f"4-byte copy to a device_global {t_copy * 1e6:.2f} us, 4-byte USM memcpy {t_memcpy * 1e6:.2f} us, "
          f"ratio {t_copy / t_memcpy:.2f} (target <= 2)")


if __name__ == "__main__":
    main()
