"""Speed of the post-link step (issue 4, point 9).

``-split=kernel`` and ``-split=source`` on a generated device module (2,000
kernels, about 10,000 functions, 100 virtual-function sets; ``gen_ir.py``) and at
twice the size, exactly as ``minisycl post-link -split=MODE -properties in.ll -o
out.table`` does it (load, split, properties, every image verified and written
as bitcode).  Baseline: llvmlite's parse + print of the same module.  Targets:
at most 4x the baseline, and linear scaling.

Beside it (issue 15, point 7), LLVM's own in-memory way of doing the same
split (``llvm_split.py``): parse and verify the input once, then per image
clone the whole module, internalize everything but that image's entry points,
run GlobalDCE and write bitcode, for exactly the images post-link made.  Each
image costs LLVM a pass over the whole module, so this runs on a smaller
module (``--llvm-kernels``, default 100 kernels: about 230 images with
-split=kernel, some 12 ms each here), and post-link is timed again on that
same module for the ratio.  LLVM's cost per image grows with the module and
post-link's with the image, so the ratio grows with the module: 200 kernels
gave about twice the 100-kernel ratio.

    python bench/bench_postlink.py [--kernels 2000] [--llvm-kernels 100] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import llvmlite.binding as llvm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_ir import generate_device_module  # noqa: E402
import llvm_split  # noqa: E402

from minisycl.passes.support.gc_pause import gc_paused  # noqa: E402
from minisycl.passes.ir import load  # noqa: E402
from minisycl.postlink import split_module, write_outputs  # noqa: E402


def floor(text: str) -> float:
    t0 = time.perf_counter()
    ref = llvm.parse_assembly(text, context=llvm.create_context())
    str(ref)
    return time.perf_counter() - t0


def llvm_share(images) -> float:
    """What LLVM alone needs for the images: parse, verify and write bitcode of each."""
    texts = [img.module.text() for img in images]
    t0 = time.perf_counter()
    for text in texts:
        ref = llvm.parse_assembly(text, context=llvm.create_context())
        ref.verify()
        ref.as_bitcode()
    return time.perf_counter() - t0


def llvm_way(text: str, groups: list[list[str]]) -> float:
    """LLVM's in-memory split of ``text`` into images with these entry points:
    parse + verify once, then per image clone, internalize, GlobalDCE, bitcode."""
    t0 = time.perf_counter()
    module = llvm_split.parse(text)
    for entries in groups:
        llvm_split.keep_only(module, entries).as_bitcode()
    return time.perf_counter() - t0


def post_link(path: str, mode: str, out: str) -> tuple[float, int, dict]:
    # a fresh folder each run: overwriting the last run's files would time the file
    # system freeing their blocks (this machine's ext4 discards them), not post-link
    folder = tempfile.mkdtemp(dir=out)
    with gc_paused():                   # as the minisycl command runs
        t0 = time.perf_counter()
        module = load(path)
        t1 = time.perf_counter()
        images = split_module(module, mode=mode)
        t2 = time.perf_counter()
        write_outputs(images, os.path.join(folder, f"{mode}.table"), properties=True)
        t3 = time.perf_counter()
    return t3 - t0, len(images), {"load": t1 - t0, "split+properties": t2 - t1, "verify+write": t3 - t2,
                                  "of which LLVM's own image work": llvm_share(images),
                                  "groups": [im.entry_points for im in images]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernels", type=int, default=2000)
    ap.add_argument("--llvm-kernels", type=int, default=100,
                    help="module size for the comparison with LLVM's own split (0: leave it out)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = []
    llvm_rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for scale in (1, 2):
            text = generate_device_module(args.kernels * scale, sets=100 * scale)
            path = os.path.join(tmp, f"m{scale}.ll")
            with open(path, "w") as fh:
                fh.write(text)
            n_fn = text.count("\ndefine ")
            base = min(floor(text) for _ in range(args.repeat))
            for mode in ("kernel", "source"):
                runs = [post_link(path, mode, tmp) for _ in range(args.repeat)]
                best = min(runs, key=lambda r: r[0])
                rows.append((scale, mode, n_fn, args.kernels * scale, base, *best))
        if args.llvm_kernels:
            text = generate_device_module(args.llvm_kernels, sets=max(1, args.llvm_kernels // 20))
            path = os.path.join(tmp, "llvm.ll")
            with open(path, "w") as fh:
                fh.write(text)
            for mode in ("kernel", "source"):
                ours = min((post_link(path, mode, tmp) for _ in range(args.repeat)), key=lambda r: r[0])
                groups = ours[2]["groups"]
                theirs = min(llvm_way(text, groups) for _ in range(args.repeat))
                llvm_rows.append((mode, text.count("\ndefine "), args.llvm_kernels, len(groups), ours[0], theirs))
    print(f"{'size':>4} {'split':>6} {'functions':>9} {'kernels':>7} {'images':>6} {'floor':>8} {'post-link':>9} {'ratio':>6}")
    for scale, mode, n_fn, n_k, base, t, n_img, parts in rows:
        print(f"{scale:>3}x {mode:>6} {n_fn:>9} {n_k:>7} {n_img:>6} {base:>7.3f}s {t:>8.3f}s {t / base:>6.2f}")
    for scale, mode, *_, parts in rows:
        print(f"  {scale}x {mode}: " + ", ".join(f"{k} {v:.3f}s" for k, v in parts.items() if k != "groups"))
    for mode in ("kernel", "source"):
        one = next(r for r in rows if r[0] == 1 and r[1] == mode)
        two = next(r for r in rows if r[0] == 2 and r[1] == mode)
        print(f"-split={mode}: time growth at 2x size {two[5] / one[5]:.2f}x (floor grew {two[4] / one[4]:.2f}x)")
    for scale, mode, n_fn, n_k, base, t, n_img, parts in rows:
        share = parts["of which LLVM's own image work"]
        print(f"  {scale}x {mode}: LLVM's parse+verify+print of the input plus its parse+verify+bitcode of "
              f"the images alone is {(base + share) / base:.2f}x the floor")
    worst = max(r[5] / r[4] for r in rows)
    print(f"worst ratio {worst:.2f} (target <= 4): {'met' if worst <= 4 else 'NOT met'}")
    if llvm_rows:
        print(f"LLVM's own split, at {args.llvm_kernels} kernels (not {args.kernels}: LLVM clones the whole module "
              "per image), post-link timed again at that size, same images:")
        print("  LLVM: parse+verify the input once; per image clone, internalize all but its entry points, "
              "GlobalDCE, bitcode")
        print("  post-link: load, split, properties, verify and write every image (as above)")
        print(f"{'split':>6} {'functions':>9} {'kernels':>7} {'images':>6} {'post-link':>9} {'LLVM':>8} {'LLVM/ours':>9}")
        for mode, n_fn, n_k, n_img, ours, theirs in llvm_rows:
            print(f"{mode:>6} {n_fn:>9} {n_k:>7} {n_img:>6} {ours:>8.3f}s {theirs:>7.3f}s {theirs / ours:>9.2f}")


if __name__ == "__main__":
    main()
