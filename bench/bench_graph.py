"""Command-graph speed (issue 7 point 7, issue 28 point 1), side by side in one run.

The same chain of 100 small kernels (a) submitted eagerly and (b) replayed as an
executable graph; per-node cost of each.  Targets: replay <= 1 us per node and
>= 20x cheaper per node than eager submission.  Then updating one dynamic
parameter, replaying and waiting (target < 10 us on the CPU, issue 28), split
into what the time goes to: ``dynamic_parameter.update`` (its argument packed
again), the executable graph's ``update(node)`` (its plan entry repointed),
and the replay: a fixed cost (the submission's checks, the graph's lock and
memory check, one native call, the event), measured on a graph of one node,
and the 100 nodes' kernels run back to back by the native plan.  The same
update, replay and wait on a graph of one node is the figure for a GPU queue
(``MINISYCL_DEVICE=gpu``; target < 15 us through the driver's kernel-node
update), where the 100 kernels' own time on the GPU is most of the chain's.  Each figure
is the median of single timed calls over all rounds, the rounds interleaved: a
median shrugs off the load spikes of a shared machine, which a loop's mean
takes in.

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
from time import perf_counter

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import program_from_source  # noqa: E402

from minisycl import runtime as sycl  # noqa: E402

KSL = "kernel step(id<1> i, int* p, int v) { p[i] = p[i] + v; }\n"
NODES, WIDTH = 100, 4


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds; a last line of JSON ratios (CI guard)")
    args = ap.parse_args()
    rounds, calls = (5, 40) if args.quick else (15, 200)

    prog = program_from_source(KSL)
    k = prog.kernel("step")
    q = sycl.queue(in_order=True)
    p = sycl.malloc_device(WIDTH, np.int32, q)     # (device memory: on a GPU, managed memory would add its migration)

    # the same chain as a graph, built with the explicit API (record & replay
    # takes no dynamic parameters)
    g = sycl.command_graph(q)
    dyn = sycl.dynamic_parameter(g, 1)
    node = prev = g.add(lambda h: h.parallel_for(k, WIDTH, p, dyn))
    for _ in range(NODES - 1):
        prev = g.add(lambda h: h.parallel_for(k, WIDTH, p, 1), depends_on=[prev])
    ex = g.finalize(updatable=True)
    g1 = sycl.command_graph(q)              # one node: a replay's fixed cost
    g1.add(lambda h: h.parallel_for(k, WIDTH, p, 1))
    ex1 = g1.finalize()
    g1u = sycl.command_graph(q)             # one node and its dynamic parameter: an update's whole cost
    dyn1 = sycl.dynamic_parameter(g1u, 1)
    node1 = g1u.add(lambda h: h.parallel_for(k, WIDTH, p, dyn1))
    ex1u = g1u.finalize(updatable=True)

    def launch():
        q.parallel_for(k, WIDTH, p, 1)

    def replay():
        q.ext_oneapi_graph(ex)

    def replay_one():
        q.ext_oneapi_graph(ex1)

    def update(i):
        dyn.update(i)
        ex.update(node)

    def update_and_replay(i):
        dyn.update(i)
        ex.update(node)
        q.ext_oneapi_graph(ex).wait()

    def update_and_replay_one(i):
        dyn1.update(i)
        ex1u.update(node1)
        q.ext_oneapi_graph(ex1u).wait()

    def samples(fn, out, takes_value):
        """One timed call per sample."""
        for i in range(calls):
            t0 = perf_counter()
            fn(i) if takes_value else fn()
            out.append(perf_counter() - t0)

    parts = (("eager", launch, False), ("replay", replay, False), ("replay of one node", replay_one, False),
             ("dynamic_parameter.update", dyn.update, True), ("update(node)", lambda: ex.update(node), False),
             ("update", update, True), ("update+replay", update_and_replay, True),
             ("update+replay of one node", update_and_replay_one, True),
             ("update(node) of one node", lambda: ex1u.update(node1), False),
             ("replay+wait of one node", lambda: q.ext_oneapi_graph(ex1u).wait(), False))
    figures = {name: [] for name, _, _ in parts}
    for _, fn, takes in parts:
        samples(fn, [], takes)                  # warm: packers, plans, caches
    for _ in range(rounds):                     # interleaved rounds
        for name, fn, takes in parts:
            samples(fn, figures[name], takes)
    med = {name: statistics.median(v) for name, v in figures.items()}
    t_eager, t_graph = med["eager"], med["replay"] / NODES       # eager: one launch
    print(f"chain of {NODES} kernels over {WIDTH} work-items each ({rounds} interleaved rounds):")
    print(f"  eager submission: {t_eager * 1e6:8.2f} us per node")
    print(f"  graph replay:     {t_graph * 1e6:8.3f} us per node (target <= 1 us); "
          f"{t_eager / t_graph:.0f}x cheaper than eager (target >= 20x)")
    fixed = med["replay of one node"]
    per_node = max(med["replay"] - fixed, 0.0) / (NODES - 1)
    print(f"  update one dynamic parameter + replay the graph + wait: {med['update+replay'] * 1e6:.1f} us "
          f"(target < 10 us); the time goes to")
    print(f"    dynamic_parameter.update (its argument packed again):     {med['dynamic_parameter.update'] * 1e6:5.1f} us")
    print(f"    update(node) (the node's plan entry repointed in place):  {med['update(node)'] * 1e6:5.1f} us")
    print(f"    the replay of {NODES} nodes:                                  {med['replay'] * 1e6:5.1f} us: a fixed "
          f"{fixed * 1e6:.1f} us (checks, locks, one native call, the event; a graph of one node) + "
          f"{NODES - 1} x {per_node * 1e9:.0f} ns (each further node's kernel, in the native plan)")
    print(f"  the same on a graph of one node: {med['update+replay of one node'] * 1e6:.1f} us (target on a GPU "
          f"queue < 15 us, through the driver's kernel-node update: there the 100 nodes' kernels take the GPU's "
          f"time, not the runtime's); the time goes to")
    print(f"    dynamic_parameter.update {med['dynamic_parameter.update'] * 1e6:.1f} us, update(node) "
          f"{med['update(node) of one node'] * 1e6:.1f} us (on a GPU: the driver's kernel-node update), "
          f"replay + wait {med['replay+wait of one node'] * 1e6:.1f} us (the kernel's run included)")

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
