"""Command-graph speed (issue 7, point 7), side by side in one run.

The same chain of 100 small kernels (a) submitted eagerly and (b) replayed as an
executable graph; per-node cost of each.  Targets: replay <= 1 us per node and
>= 20x cheaper per node than eager submission.  Also: updating one dynamic
parameter and replaying (target < 50 us).

    python bench/bench_graph.py
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import program_from_source  # noqa: E402

from minisycl import runtime as sycl  # noqa: E402

KSL = "kernel step(id<1> i, int* p, int v) { p[i] = p[i] + v; }\n"
NODES, WIDTH, REPS = 100, 4, 200


def main():
    prog = program_from_source(KSL)
    k = prog.kernel("step")
    q = sycl.queue(in_order=True)
    p = sycl.malloc_shared(WIDTH, np.int32, q)

    def eager():
        for _ in range(NODES):
            q.parallel_for(k, WIDTH, p, 1)
    eager()
    t0 = time.perf_counter()
    for _ in range(REPS // 10):
        eager()
    t_eager = (time.perf_counter() - t0) / (REPS // 10) / NODES

    # the same chain as a graph, built with the explicit API (record & replay
    # takes no dynamic parameters)
    g = sycl.command_graph(q)
    dyn = sycl.dynamic_parameter(g, 1)
    node = prev = g.add(lambda h: h.parallel_for(k, WIDTH, p, dyn))
    for _ in range(NODES - 1):
        prev = g.add(lambda h: h.parallel_for(k, WIDTH, p, 1), depends_on=[prev])
    ex = g.finalize(updatable=True)
    q.ext_oneapi_graph(ex)
    t0 = time.perf_counter()
    for _ in range(REPS):
        q.ext_oneapi_graph(ex)
    t_graph = (time.perf_counter() - t0) / REPS / NODES

    def update_and_replay(v):
        dyn.update(v)
        ex.update(node)
        q.ext_oneapi_graph(ex)
    update_and_replay(2)
    t0 = time.perf_counter()
    for i in range(REPS):
        update_and_replay(i)
    t_update = (time.perf_counter() - t0) / REPS
    print(f"chain of {NODES} kernels over {WIDTH} work-items each:")
    print(f"  eager submission: {t_eager * 1e6:8.2f} us per node")
    print(f"  graph replay:     {t_graph * 1e6:8.3f} us per node (target <= 1 us); "
          f"{t_eager / t_graph:.0f}x cheaper than eager (target >= 20x)")
    print(f"  update one dynamic parameter + replay the graph: {t_update * 1e6:.1f} us (target < 50 us)")


if __name__ == "__main__":
    main()
