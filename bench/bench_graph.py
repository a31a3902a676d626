"""Command-graph speed (issue 7 point 7, issue 28 point 1), side by side in one run.

The same chain of 100 small kernels (a) submitted eagerly and (b) replayed as an
executable graph; per-node cost of each.  Targets: replay <= 1 us per node and
>= 20x cheaper per node than eager submission.  Then updating one dynamic
parameter and replaying (target < 10 us on the CPU, issue 28), split into what
the time goes to: the update (``dynamic_parameter.update`` + ``update(node)``)
and the replay.  Each figure is the median of rounds of the best of a few
calls, the rounds interleaved.

    python bench/bench_graph.py [--quick]

``--quick`` (the CI guard, ``bench/guard.py``): fewer rounds; the last line is
JSON of ratios to the eager submission of one kernel measured in the same run.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import program_from_source  # noqa: E402

from minisycl import runtime as sycl  # noqa: E402

KSL = "kernel step(id<1> i, int* p, int v) { p[i] = p[i] + v; }\n"
NODES, WIDTH = 100, 4


def _per_call(fn, calls: int) -> float:
    t0 = time.perf_counter()
    fn(calls)
    return (time.perf_counter() - t0) / calls


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds; a last line of JSON ratios (CI guard)")
    args = ap.parse_args()
    rounds, calls = (5, 40) if args.quick else (15, 200)

    prog = program_from_source(KSL)
    k = prog.kernel("step")
    q = sycl.queue(in_order=True)
    p = sycl.malloc_shared(WIDTH, np.int32, q)

    # the same chain as a graph, built with the explicit API (record & replay
    # takes no dynamic parameters)
    g = sycl.command_graph(q)
    dyn = sycl.dynamic_parameter(g, 1)
    node = prev = g.add(lambda h: h.parallel_for(k, WIDTH, p, dyn))
    for _ in range(NODES - 1):
        prev = g.add(lambda h: h.parallel_for(k, WIDTH, p, 1), depends_on=[prev])
    ex = g.finalize(updatable=True)

    def eager(n):
        for _ in range(n):
            for _ in range(NODES):
                q.parallel_for(k, WIDTH, p, 1)

    def replay(n):
        for _ in range(n):
            q.ext_oneapi_graph(ex)

    def update(n):
        for i in range(n):
            dyn.update(i)
            ex.update(node)

    def update_and_replay(n):
        for i in range(n):
            dyn.update(i)
            ex.update(node)
            q.ext_oneapi_graph(ex)

    figures = {"eager": [], "replay": [], "update": [], "update+replay": []}
    for fn in (eager, replay, update, update_and_replay):
        fn(2)                                   # warm: packers, plans, caches
    for _ in range(rounds):                     # interleaved rounds; each the best of 3 calls
        figures["eager"].append(min(_per_call(eager, max(calls // 20, 1)) for _ in range(3)) / NODES)
        figures["replay"].append(min(_per_call(replay, calls) for _ in range(3)))
        figures["update"].append(min(_per_call(update, calls) for _ in range(3)))
        figures["update+replay"].append(min(_per_call(update_and_replay, calls) for _ in range(3)))
    med = {name: statistics.median(v) for name, v in figures.items()}
    t_eager, t_graph = med["eager"], med["replay"] / NODES
    print(f"chain of {NODES} kernels over {WIDTH} work-items each (median of {rounds} rounds):")
    print(f"  eager submission: {t_eager * 1e6:8.2f} us per node")
    print(f"  graph replay:     {t_graph * 1e6:8.3f} us per node (target <= 1 us); "
          f"{t_eager / t_graph:.0f}x cheaper than eager (target >= 20x)")
    print(f"  update one dynamic parameter + replay the graph: {med['update+replay'] * 1e6:.1f} us "
          f"(target < 10 us)")
    print(f"    of which the update (dynamic_parameter.update + update(node)): {med['update'] * 1e6:.1f} us, "
          f"the replay of {NODES} nodes: {med['replay'] * 1e6:.1f} us")
    def figure(measured, baseline):
        return {"ratio": measured / baseline, "measured": f"{measured * 1e6:.2f} us",
                "baseline": f"{baseline * 1e6:.2f} us (eager launch)"}
    ratios = {
        "graph replay per node / eager launch": figure(t_graph, t_eager),
        "update one parameter / eager launch": figure(med["update"], t_eager),
        "update + replay of 100 nodes / eager launch": figure(med["update+replay"], t_eager),
    }
    if args.quick:
        print(json.dumps(ratios))


if __name__ == "__main__":
    main()
