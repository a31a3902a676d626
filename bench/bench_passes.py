"""Speed of the middle end (issue 3, point 8).

Runs ``split-if-device,propagate-aspects`` on a generated single-source module
(about 10,000 functions, 1,000+ kernels; ``gen_ir.py``) and at twice the size,
exactly as ``minisycl opt -passes=split-if-device,propagate-aspects in.ll -o
dev.ll --host-output host.ll`` does it: load (LLVM parse + verify + print, then
cut into entities), the passes, then both halves verified and printed by LLVM.
The baseline is llvmlite's own parse + verify + print of the same module, the
floor of any text-based pass.  Targets: ratio <= 3, and doubling the module at
most doubles the time.

    python bench/bench_passes.py [--groups 1000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import llvmlite.binding as llvm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_ir import generate_module  # noqa: E402

from minisycl.passes import parse_pipeline  # noqa: E402
from minisycl.passes.ir import load, render  # noqa: E402
from minisycl.passes.manager import PassContext, PassManager  # noqa: E402


def floor(text: str) -> float:
    t0 = time.perf_counter()
    ref = llvm.parse_assembly(text, context=llvm.create_context())
    ref.verify()
    str(ref)
    return time.perf_counter() - t0


def pipeline(path: str, verify_each: bool = False) -> tuple[float, dict]:
    t0 = time.perf_counter()
    module = load(path)
    t1 = time.perf_counter()
    ctx = PassManager(parse_pipeline("split-if-device,propagate-aspects"), verify_each=verify_each).run(module, PassContext())
    t2 = time.perf_counter()
    render([module, ctx.host_module])
    t3 = time.perf_counter()
    parts = {"load": t1 - t0, **{k: v for k, v in ctx.timings.items()}, "verify+print outputs": t3 - t2}
    return t3 - t0, parts


def best(fn, repeat):
    results = [fn() for _ in range(repeat)]
    return min(results, key=lambda r: r[0] if isinstance(r, tuple) else r)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--groups", type=int, default=1000, help="kernel groups (about 10 functions each)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for scale in (1, 2):
            text = generate_module(args.groups * scale)
            path = os.path.join(tmp, f"m{scale}.ll")
            with open(path, "w") as fh:
                fh.write(text)
            ref = llvm.parse_assembly(text, context=llvm.create_context())
            n_fn = sum(1 for _ in ref.functions)
            n_k = text.count("spir_kernel void @")
            base = best(lambda: floor(text), args.repeat)
            ours, parts = best(lambda: pipeline(path), args.repeat)
            each, _ = best(lambda: pipeline(path, verify_each=True), args.repeat)
            rows.append((scale, n_fn, n_k, len(text), base, ours, each, parts))
    print(f"{'size':>5} {'functions':>9} {'kernels':>7} {'MB':>5} {'llvmlite floor':>14} {'passes':>8} {'ratio':>6}"
          f" {'verify-each':>11} {'ratio':>6}")
    for scale, n_fn, n_k, size, base, ours, each, parts in rows:
        print(f"{scale:>4}x {n_fn:>9} {n_k:>7} {size / 1e6:>5.1f} {base:>13.3f}s {ours:>7.3f}s {ours / base:>6.2f}"
              f" {each:>10.3f}s {each / base:>6.2f}")
    for scale, *_, parts in rows:
        print(f"  {scale}x breakdown: " + ", ".join(f"{k} {v:.3f}s" for k, v in parts.items()))
    growth = rows[1][5] / rows[0][5]
    print(f"time growth when the module doubles: {growth:.2f}x (target <= 2.0); "
          f"ratio target <= 3: {'met' if max(r[5] / r[4] for r in rows) <= 3 else 'NOT met'}")


if __name__ == "__main__":
    main()
