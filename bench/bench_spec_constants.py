"""Specialization constants (issue 32 point 4): a kernel whose inner loop's trip
count and stride are specialization constants against the same kernel taking
them as arguments, and the cost of specialising.

    python bench/bench_spec_constants.py [--device NAME] [--n N] [--trip T] [--stride S] [--rounds R]

(a) ``spec`` and ``args`` evaluate, for each work-item's ``v = x[i]``, the
    polynomial of degree TRIP whose coefficients are ``j * STRIDE / 1000``
    (Horner's rule: ``acc = acc * v + c_j``) and write it to ``y[i]``; 2^16
    work-items on a CPU, 2^24 on a GPU; TRIP=64, STRIDE=1 (the source's
    defaults are 4 and 2, so the specialised build is a real one, not the
    defaults-folded image).  The specialised kernel is compiled with the
    values folded in (on a CPU the launcher passes a constant buffer,
    ``runtime/jit.py``; on a GPU the PTX is built for the values): the known
    trip count lets LLVM unroll the loop whole and fold every coefficient
    into a constant (and, on a CPU, vectorise across work-items); the other
    reads its bounds from arguments and keeps the loop, converting each
    index to a float.  Both launches go through ``queue.submit`` (the same
    submission path), the results are compared, and the two are timed in
    turn (A B A B ...), ``--rounds`` rounds of 5 launches each (a launch and
    its wait); the median of the rounds' best launches is compared; target:
    the specialised kernel at least 1.3x faster.

    Specialising is not always a win, and what wins depends on the device.
    Measured (specialised over arguments): this kernel 17x on a shared
    2-core CPU, 2.0x on an H200; the same polynomial with its coefficients
    read from a table (``w[j * STRIDE]``) 2.3x on the CPU, 1.34x on the H200
    (the table's loads remain); a memory-bound loop (``y[k] = x[k] * w[j] +
    1`` over TRIP elements per work-item) 4.1x on the CPU (its loop
    vectorised), 0.93x on the H200 (bandwidth-bound: unrolling changes
    nothing); on the CPU, TRIP=128 gives the table form 1.25x, and a known
    16-trip loop can be unrolled whole and then not vectorised (0.44x).

(b) the cost of specialising: the first launch with a new set of values (a JIT
    compile of the image: new values each time, so nothing is cached on disk
    either) against a launch with a set compiled before (the in-memory cache),
    and a launch of the unspecialised kernel for reference.

``--device`` names the device (``cpu``, ``gpu``, ``cuda:0``, a device name);
the default is minisycl's (``MINISYCL_DEVICE`` or the host CPU).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import program_from_source  # noqa: E402

SOURCE = """
specialization_id<int> trip{4};
specialization_id<int> stride{2};

kernel spec(id<1> i, float* x, float* y, kernel_handler kh) {
  int n = kh.get_specialization_constant<trip>();
  int s = kh.get_specialization_constant<stride>();
  float v = x[i];
  float acc = 0.0f;
  for (int j = 0; j < n; j++) acc = acc * v + (float)(j * s) * 0.001f;
  y[i] = acc;
}

kernel args(id<1> i, float* x, float* y, int n, int s) {
  float v = x[i];
  float acc = 0.0f;
  for (int j = 0; j < n; j++) acc = acc * v + (float)(j * s) * 0.001f;
  y[i] = acc;
}
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default=None, help="device to run on (default: minisycl's default device)")
    ap.add_argument("--n", type=int, default=0, help="work-items (default 2^16 on a CPU, 2^24 on a GPU)")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--trip", type=int, default=64)
    ap.add_argument("--stride", type=int, default=1)
    a = ap.parse_args(argv)
    from minisycl import runtime as sycl
    q = sycl.queue(a.device) if a.device else sycl.queue()
    prog = program_from_source(SOURCE)
    n = a.n or (1 << 16 if q.device.impl.runs_on_host else 1 << 24)
    trip, stride = a.trip, a.stride
    x, y1, y2 = (sycl.malloc_device(n, np.float32, q) for _ in range(3))
    q.memcpy(x, np.random.default_rng(1).random(n, dtype=np.float32), n * 4).wait()
    values = {"trip": trip, "stride": stride}

    def run_spec(v=values, items=n):
        q.submit(lambda h: ([h.set_specialization_constant(k, val) for k, val in v.items()],
                            h.parallel_for(prog.kernel("spec"), items, x, y1))).wait()

    def run_args(items=n):
        q.submit(lambda h: h.parallel_for(prog.kernel("args"), items, x, y2, trip, stride)).wait()

    t0 = time.perf_counter()
    run_spec()
    first_spec = time.perf_counter() - t0
    run_args()
    got1, got2 = np.empty(n, np.float32), np.empty(n, np.float32)
    q.memcpy(got1, y1, got1.nbytes)
    q.memcpy(got2, y2, got2.nbytes).wait()
    if not np.allclose(got1, got2, rtol=1e-4, atol=1e-6):
        print("MISMATCH between the specialised and the argument kernel", file=sys.stderr)
        return 1
    rounds_spec, rounds_args = [], []
    for _ in range(a.rounds):
        for fn, out in ((run_spec, rounds_spec), (run_args, rounds_args)):
            best = float("inf")
            for _ in range(5):
                t = time.perf_counter()
                fn()
                best = min(best, time.perf_counter() - t)
            out.append(best)
    ms, ma = statistics.median(rounds_spec), statistics.median(rounds_args)
    print(f"device: {q.device.name}; {n} work-items, trip {trip}, stride {stride}")
    print(f"(a) specialised {ms * 1e3:.3f} ms, arguments {ma * 1e3:.3f} ms (median of {a.rounds} rounds' best of 5; "
          f"spread spec {min(rounds_spec) * 1e3:.3f}-{max(rounds_spec) * 1e3:.3f}, "
          f"args {min(rounds_args) * 1e3:.3f}-{max(rounds_args) * 1e3:.3f} ms): {ma / ms:.2f}x "
          f"(target >= 1.3x: {'met' if ma / ms >= 1.3 else 'NOT met'})")

    # (b) specialising for a new set of values, and for one compiled before
    small = max(n // 64, 1)
    news, cached = [], []
    seed = int(time.time() * 1e6) % 100000          # values never compiled before (no disk cache hit)
    for r in range(3):
        vals = {"trip": 2 + (seed * 10 + r) % 1000, "stride": stride}      # a new trip count each time
        builds = prog.builds
        t = time.perf_counter()
        run_spec(vals, small)
        news.append(time.perf_counter() - t)
        fresh = prog.builds > builds
        t = time.perf_counter()
        run_spec(vals, small)
        cached.append(time.perf_counter() - t)
        if not fresh:
            news.pop()
            cached.pop()
    plain = min(_timed(lambda: run_args(small)) for _ in range(5))
    if news:
        print(f"(b) first launch with new values (JIT compile): {statistics.median(news) * 1e3:.1f} ms; "
              f"with values compiled before: {statistics.median(cached) * 1e3:.3f} ms; "
              f"an unspecialised launch: {plain * 1e3:.3f} ms ({small} work-items); "
              f"first specialised launch above: {first_spec * 1e3:.1f} ms")
    return 0


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


if __name__ == "__main__":
    sys.exit(main())
