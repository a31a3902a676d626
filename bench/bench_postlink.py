"""Speed of the post-link step (issue 4, point 9; issue 28, point 1).

``-split=kernel`` and ``-split=source`` on a generated device module (2,000
kernels, about 10,000 functions, 100 virtual-function sets; ``gen_ir.py``) and at
twice the size, exactly as ``minisycl post-link -split=MODE -properties in.ll -o
out.table`` does it (load, split, properties, every image verified and written
as bitcode; LLVM verifies and writes each image's bitcode in a forked child
where a core is free, else on a second thread, ``passes/ir/bitcode_worker.py``,
while the split goes on with the next).

The figure (issue 28): post-link's time over LLVM's own work for the same
result, which no text-based post-link can avoid: LLVM's parse + verify + print
of the input, plus its parse + verify + bitcode of every image post-link made
("LLVM's work").  Targets: at most 1.5x with ``-split=kernel``, 1.3x with
``-split=source``, and doubling the module at most doubles the time.  The
breakdown says where the time goes: load (LLVM's parse and print, then cutting
into entities while LLVM verifies), split+properties (Python; LLVM works on the
images made so far beside it), waiting for LLVM's images (as their files are
written), writing the files; then the CPU time of post-link's own process and
of LLVM's worker, against LLVM's work's CPU time: on a loaded machine (CI's 2
shared cores) wall time is mostly waiting for a core, and the CPU ratio says
what the work costs.  A baseline of llvmlite's parse + print alone ("floor")
is printed as before.

Each run's outputs are hashed (file names and contents, the output folder left
out): equal hashes at two commits mean byte-identical outputs.

Beside it (issue 15, point 7), LLVM's own in-memory way of doing the same
split (``llvm_split.py``): parse and verify the input once, then per image
clone the whole module, internalize everything but that image's entry points,
run GlobalDCE and write bitcode, for exactly the images post-link made.  Each
image costs LLVM a pass over the whole module, so this runs on a smaller
module (``--llvm-kernels``, default 100 kernels: about 110 images with
-split=kernel, some 12 ms each here), and post-link is timed again on that
same module for the ratio.

    python bench/bench_postlink.py [--kernels 2000] [--llvm-kernels 100] [--repeat 3] [--quick]

``--quick`` (for the CI speed guard): 150 kernels and twice that, 3 rounds, no
comparison with LLVM's split; well under a minute.  Every run ends with one
JSON object per figure, one per line, each line starting with ``{``:
``{"figure": "postlink.kernel", "ratio": R, "target": 1.5}`` (post-link over
LLVM's work, the worse of the two sizes), ``postlink.source`` (target 1.3),
and ``postlink.kernel.growth`` / ``postlink.source.growth`` (time growth at
twice the size over the growth of LLVM's work; target 1.0 plus noise).
"""
from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import resource
import sys
import tempfile
import time

import llvmlite.binding as llvm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_ir import generate_device_module  # noqa: E402
import llvm_split  # noqa: E402

from minisycl.passes.support.gc_pause import gc_paused  # noqa: E402
from minisycl.passes.ir import load  # noqa: E402
import minisycl.postlink as postlink  # noqa: E402
from minisycl.postlink import split_module, write_outputs  # noqa: E402

# as the minisycl command splits (a tree from before issue 28 has no ``serialize``)
SPLIT_ARGS = {"serialize": "bitcode"} if "serialize" in inspect.signature(split_module).parameters else {}


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


class _Timed:
    """``verify_and_serialize`` as ``write_outputs`` calls it, timed: how long
    writing waits for LLVM's images, apart from writing the files."""

    def __init__(self):
        self.inner, self.seconds = postlink.verify_and_serialize, 0.0

    def __call__(self, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return self.inner(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - t0


def outputs_hash(folder: str) -> str:
    """Names and contents of the files in ``folder``, the folder's own path left out."""
    h = hashlib.sha256()
    for name in sorted(os.listdir(folder)):
        h.update(name.encode() + b"\0")
        with open(os.path.join(folder, name), "rb") as fh:
            h.update(fh.read().replace(folder.encode(), b"<out>") + b"\0")
    return h.hexdigest()[:16]


def cpu_times() -> tuple[float, float]:
    """CPU seconds of this process (all threads) and of its children waited for."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, children.ru_utime + children.ru_stime


def post_link(path: str, mode: str, out: str) -> tuple[float, int, dict]:
    # a fresh folder each run: overwriting the last run's files would time the file
    # system freeing their blocks (this machine's ext4 discards them), not post-link
    folder = tempfile.mkdtemp(dir=out)
    timed = postlink.verify_and_serialize = _Timed()
    try:
        with gc_paused():                   # as the minisycl command runs
            c0 = cpu_times()
            t0 = time.perf_counter()
            module = load(path)
            t1 = time.perf_counter()
            images = split_module(module, mode=mode, **SPLIT_ARGS)
            t2 = time.perf_counter()
            write_outputs(images, os.path.join(folder, f"{mode}.table"), properties=True)
            t3 = time.perf_counter()
            c1 = cpu_times()
    finally:
        postlink.verify_and_serialize = timed.inner
    return t3 - t0, len(images), {"load": t1 - t0, "split+properties": t2 - t1,
                                  "waiting for LLVM's images": timed.seconds,
                                  "writing files": t3 - t2 - timed.seconds,
                                  "CPU: post-link's process": c1[0] - c0[0], "CPU: LLVM's worker": c1[1] - c0[1],
                                  "images": images, "hash": outputs_hash(folder)}


def llvm_work(text: str, images) -> tuple[float, float]:
    """LLVM's own work for post-link's result: parse + verify + print of the
    input, then parse + verify + bitcode of every image (wall and CPU seconds)."""
    c0 = sum(cpu_times())
    t0 = time.perf_counter()
    ref = llvm.parse_assembly(text, context=llvm.create_context())
    ref.verify()
    str(ref)
    wall = time.perf_counter() - t0 + llvm_share(images)
    return wall, sum(cpu_times()) - c0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernels", type=int, default=2000)
    ap.add_argument("--llvm-kernels", type=int, default=100,
                    help="module size for the comparison with LLVM's own split (0: leave it out)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="small sizes for the CI speed guard (under a minute)")
    args = ap.parse_args()
    if args.quick:
        args.kernels, args.llvm_kernels, args.repeat = 150, 0, 3
    rows = []
    llvm_rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for scale in (1, 2):
            text = generate_device_module(args.kernels * scale, sets=max(1, args.kernels * scale // 20))
            path = os.path.join(tmp, f"m{scale}.ll")
            with open(path, "w") as fh:
                fh.write(text)
            n_fn = text.count("\ndefine ")
            base = min(floor(text) for _ in range(args.repeat))
            for mode in ("kernel", "source"):
                runs, theirs = [], []
                for _ in range(args.repeat):        # interleaved: both meet the same machine
                    runs.append(post_link(path, mode, tmp))
                    theirs.append(llvm_work(text, runs[-1][2]["images"]))
                best = min(runs, key=lambda r: r[0])
                hashes = {r[2]["hash"] for r in runs}
                for r in runs:
                    del r[2]["images"]
                ours_cpu = min(r[2]["CPU: post-link's process"] + r[2]["CPU: LLVM's worker"] for r in runs)
                best[2]["CPU x LLVM's CPU"] = ours_cpu / max(min(c for _, c in theirs), 1e-3)
                rows.append((scale, mode, n_fn, args.kernels * scale, base, min(w for w, _ in theirs), *best, hashes))
        if args.llvm_kernels:
            text = generate_device_module(args.llvm_kernels, sets=max(1, args.llvm_kernels // 20))
            path = os.path.join(tmp, "llvm.ll")
            with open(path, "w") as fh:
                fh.write(text)
            for mode in ("kernel", "source"):
                ours = min((post_link(path, mode, tmp) for _ in range(args.repeat)), key=lambda r: r[0])
                groups = [im.entry_points for im in ours[2]["images"]]
                theirs = min(llvm_way(text, groups) for _ in range(args.repeat))
                llvm_rows.append((mode, text.count("\ndefine "), args.llvm_kernels, len(groups), ours[0], theirs))
    targets = {"kernel": 1.5, "source": 1.3}
    print(f"{'size':>4} {'split':>6} {'functions':>9} {'kernels':>7} {'images':>6} {'floor':>8} {'LLVM work':>9} "
          f"{'post-link':>9} {'x LLVM':>6} {'target':>6}  outputs")
    for scale, mode, n_fn, n_k, base, theirs, t, n_img, parts, hashes in rows:
        print(f"{scale:>3}x {mode:>6} {n_fn:>9} {n_k:>7} {n_img:>6} {base:>7.3f}s {theirs:>8.3f}s {t:>8.3f}s "
              f"{t / theirs:>6.2f} {targets[mode]:>6}  {','.join(sorted(hashes))}")
    print("where the time goes (fastest run):")
    for scale, mode, *_, parts, hashes in rows:
        print(f"  {scale}x {mode}: " + ", ".join(f"{k} {v:.3f}" + ("" if k.endswith("CPU") else "s")
                                                 for k, v in parts.items() if k != "hash"))
    figures = []
    for mode in ("kernel", "source"):
        one = next(r for r in rows if r[0] == 1 and r[1] == mode)
        two = next(r for r in rows if r[0] == 2 and r[1] == mode)
        growth, llvm_growth = two[6] / one[6], two[5] / one[5]
        print(f"-split={mode}: time growth at 2x size {growth:.2f}x (LLVM's work grew {llvm_growth:.2f}x, "
              f"its floor {two[4] / one[4]:.2f}x)")
        worst = max(one[6] / one[5], two[6] / two[5])
        print(f"-split={mode}: worst ratio to LLVM's work {worst:.2f} (target <= {targets[mode]}): "
              f"{'met' if worst <= targets[mode] else 'NOT met'}")
        figures.append({"figure": f"postlink.{mode}", "ratio": round(worst, 3), "target": targets[mode]})
        figures.append({"figure": f"postlink.{mode}.growth", "ratio": round(growth / llvm_growth, 3), "target": 1.0})
    if llvm_rows:
        print(f"LLVM's own split, at {args.llvm_kernels} kernels (not {args.kernels}: LLVM clones the whole module "
              "per image), post-link timed again at that size, same images:")
        print("  LLVM: parse+verify the input once; per image clone, internalize all but its entry points, "
              "GlobalDCE, bitcode")
        print("  post-link: load, split, properties, verify and write every image (as above)")
        print(f"{'split':>6} {'functions':>9} {'kernels':>7} {'images':>6} {'post-link':>9} {'LLVM':>8} {'LLVM/ours':>9}")
        for mode, n_fn, n_k, n_img, ours, theirs in llvm_rows:
            print(f"{mode:>6} {n_fn:>9} {n_k:>7} {n_img:>6} {ours:>8.3f}s {theirs:>7.3f}s {theirs / ours:>9.2f}")
    for fig in figures:
        print(json.dumps(fig))


if __name__ == "__main__":
    main()
