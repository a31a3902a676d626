"""Speed of the post-link step (issue 4, point 9; issue 28, point 1).

``-split=kernel`` and ``-split=source`` on a generated device module (2,000
kernels, about 10,000 functions, 100 virtual-function sets; ``gen_ir.py``) and at
twice the size, exactly as ``minisycl post-link -split=MODE -properties in.ll -o
out.table`` does it (read, load, split, properties, every image verified and
written as bitcode; where a core is free, LLVM verifies and writes each
image's bitcode in a forked child while the split goes on with the next,
``passes/ir/bitcode_worker.py``; where none is, post-link has LLVM make every
image's bitcode in one go before writing the files).

The figure (issue 28): post-link's time over LLVM's own work for the same
result ("LLVM's work"), which no post-link can avoid, done the plain way on one
thread: read the input file, LLVM's parse + verify + print of it, LLVM's parse +
verify + bitcode of every image post-link made, and writing the very files
post-link wrote (the same names and bytes: the images' bitcode LLVM just made,
the ``.prop`` files and the table), into a fresh folder on the same file system,
with ``open``/``write``/``close`` and no ``fsync`` (post-link syncs nothing
either).  The two output folders must hash equal (else the bench fails):
the same files are written.
Targets: at most 1.5x with ``-split=kernel``, 1.3x with ``-split=source``, and
doubling the module grows the time no more than it grows LLVM's work.

Each round runs post-link and LLVM's work once each, interleaved (the order
alternates: A B B A ...), so both meet the same machine; the tables print each
side's median wall and CPU time (this process's threads and its children) with
the spread (min-max) over the rounds, and the ratio is the median of the
rounds' paired ratios (its spread beside it).  On a loaded machine (CI's 2
shared cores) wall time is partly waiting for a core; the CPU ratio says what
the work costs.  Where the time goes, medians over the rounds: post-link's
read + LLVM's parse/verify/print of the input, cutting it into entities,
the split's own Python (groups, internalize, ...), extracting each image,
its properties, printing each image for LLVM (where a child makes the
images), LLVM's images (printed and made then, or waited for), writing the files; LLVM's work's read + parse/verify/print, its per-image
parse/verify/bitcode, its writing.

Each run's outputs are hashed (file names and contents, the output folder left
out): equal hashes at two commits mean byte-identical outputs.

Beside it (issue 15, point 7), LLVM's own in-memory way of doing the same
split (``llvm_split.py``): parse and verify the input once, then per image
clone the whole module, internalize everything but that image's entry points,
run GlobalDCE and write bitcode, for exactly the images post-link made.  Each
image costs LLVM a pass over the whole module, so this runs on a smaller
module (``--llvm-kernels``, default 100 kernels), and post-link is timed again
on that same module for the ratio.

    python bench/bench_postlink.py [--kernels 2000] [--llvm-kernels 100] [--repeat 5] [--quick]

``--quick`` (for the CI speed guard): 150 kernels and twice that, 5 rounds, no
comparison with LLVM's split; well under a minute.  Every run ends with one
JSON object per figure, one per line, each line starting with ``{``:
``{"figure": "postlink.kernel", "ratio": R, "target": 1.5}`` (post-link's wall
time over LLVM's work's, the worse of the two sizes), ``postlink.source``
(target 1.3), ``postlink.kernel.cpu`` / ``postlink.source.cpu`` (the same with
CPU time), and ``postlink.kernel.growth`` / ``postlink.source.growth`` (time
growth at twice the size over the growth of LLVM's work; target 1.0 plus noise).
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import inspect
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time

import llvmlite.binding as llvm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_ir import generate_device_module  # noqa: E402
import llvm_split  # noqa: E402

from minisycl.passes.support.gc_pause import gc_paused  # noqa: E402
from minisycl.passes.ir import Module, load  # noqa: E402
import minisycl.postlink as postlink  # noqa: E402
import minisycl.postlink.split as split_stage  # noqa: E402
from minisycl.postlink import split_module, write_outputs  # noqa: E402

# as the minisycl command splits (a tree from before issue 28 has no ``serialize``)
SPLIT_ARGS = {"serialize": "bitcode"} if "serialize" in inspect.signature(split_module).parameters else {}


def floor(text: str) -> float:
    t0 = time.perf_counter()
    ref = llvm.parse_assembly(text, context=llvm.create_context())
    str(ref)
    return time.perf_counter() - t0


def llvm_way(text: str, groups: list[list[str]]) -> float:
    """LLVM's in-memory split of ``text`` into images with these entry points:
    parse + verify once, then per image clone, internalize, GlobalDCE, bitcode."""
    t0 = time.perf_counter()
    module = llvm_split.parse(text)
    for entries in groups:
        llvm_split.keep_only(module, entries).as_bitcode()
    return time.perf_counter() - t0


def outputs_hash(folder: str) -> str:
    """Names and contents of the files in ``folder``, the folder's own path left out."""
    h = hashlib.sha256()
    for name in sorted(os.listdir(folder)):
        h.update(name.encode() + b"\0")
        with open(os.path.join(folder, name), "rb") as fh:
            h.update(fh.read().replace(folder.encode(), b"<out>") + b"\0")
    return h.hexdigest()[:16]


def cpu_times() -> float:
    """CPU seconds of this process (all threads) and of its children waited for."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


class _Clock:
    """Seconds spent in some functions of post-link, patched in for one run
    (what each stage of the split costs; a call inside another timed one is
    counted in both, so the caller subtracts)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self._undo = contextlib.ExitStack()

    def wrap(self, owner, attr: str, label: str, method: bool = False) -> None:
        inner = getattr(owner, attr)
        if method and isinstance(inspect.getattr_static(owner, attr), classmethod):
            inner, kind = inner.__func__, classmethod
        else:
            kind = None
        seconds = self.seconds
        seconds.setdefault(label, 0.0)

        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                seconds[label] += time.perf_counter() - t0
        original = inspect.getattr_static(owner, attr)
        setattr(owner, attr, kind(timed) if kind else timed)
        self._undo.callback(setattr, owner, attr, original)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._undo.close()


def post_link(path: str, mode: str, out: str) -> dict:
    """One run of post-link as the command does it; wall, CPU, stages, outputs."""
    # a fresh folder each run: overwriting the last run's files would time the file
    # system freeing their blocks, not post-link
    folder = tempfile.mkdtemp(dir=out)
    with _Clock() as clock:
        clock.wrap(Module, "parse", "cut", method=True)
        clock.wrap(split_stage, "image_module", "extract")
        clock.wrap(split_stage, "compute_properties", "properties")
        clock.wrap(Module, "start_verification", "print images")
        clock.wrap(postlink, "verify_and_serialize", "llvm")
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
    s = clock.seconds
    stages = {"read+LLVM input": t1 - t0 - s["cut"], "cut": s["cut"],
              "split": t2 - t1 - s["extract"] - s["properties"] - s["print images"],
              "extract": s["extract"], "properties": s["properties"], "print images": s["print images"],
              "LLVM images": s["llvm"], "write": t3 - t2 - s["llvm"]}
    return {"wall": t3 - t0, "cpu": c1 - c0, "stages": stages, "images": images, "folder": folder}


def output_files(folder: str) -> list[tuple[str, bytes | None]]:
    """The files post-link wrote, in its order (images' code, then ``.prop``s,
    then the table): the bitcode's place is ``None`` (LLVM's work makes it);
    the folder's path in the table's text as ``<out>``."""
    names = sorted(os.listdir(folder))
    out = []
    for name in names:
        with open(os.path.join(folder, name), "rb") as fh:
            out.append((name, None if name.endswith(".bc") else fh.read().replace(folder.encode(), b"<out>")))
    return out


def llvm_work(path: str, texts: list[str], files: list[tuple[str, bytes | None]], out: str) -> dict:
    """LLVM's own work for post-link's result, the plain way on one thread:
    read the input, parse + verify + print it, parse + verify + bitcode every
    image (``texts``: post-link's printing of them), and write the same files
    into a fresh folder (``open``/``write``/``close``, no ``fsync``)."""
    folder = tempfile.mkdtemp(dir=out)
    bitcode_names = [n for n, data in files if data is None]
    assert len(bitcode_names) == len(texts), (len(bitcode_names), len(texts))
    by_number = sorted(bitcode_names, key=lambda n: int(n.rsplit("_", 1)[1].split(".")[0]))
    files = [(name, data if data is None else data.replace(b"<out>", folder.encode())) for name, data in files]
    with gc_paused():
        c0 = cpu_times()
        t0 = time.perf_counter()
        with open(path, "rb") as fh:
            source = fh.read().decode()
        ref = llvm.parse_assembly(source, context=llvm.create_context())
        ref.verify()
        str(ref)
        t1 = time.perf_counter()
        codes = {}
        for name, text in zip(by_number, texts):
            ref = llvm.parse_assembly(text, context=llvm.create_context())
            ref.verify()
            codes[name] = ref.as_bitcode()
        t2 = time.perf_counter()
        for name, data in files:
            with open(os.path.join(folder, name), "wb") as fh:
                fh.write(codes[name] if data is None else data)
        t3 = time.perf_counter()
        c1 = cpu_times()
    return {"wall": t3 - t0, "cpu": c1 - c0, "folder": folder,
            "stages": {"read+LLVM input": t1 - t0, "LLVM images": t2 - t1, "write": t3 - t2}}


def _spread(values) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def measure(path: str, mode: str, rounds: int, tmp: str) -> dict:
    """``rounds`` interleaved runs of post-link and of LLVM's work (A B B A ...)."""
    ours, theirs, hashes = [], [], set()
    files = texts = None
    for r in range(rounds + 1):             # round 0: learn the outputs (and warm up), not counted
        order = ("ours", "llvm") if r % 2 == 0 else ("llvm", "ours")
        for side in order:
            if side == "ours":
                run = post_link(path, mode, tmp)
                if files is None:
                    files = output_files(run["folder"])
                    texts = [im.module.text() for im in run["images"]]
                    n_images = len(run["images"])
                hashes.add(outputs_hash(run["folder"]))
                del run["images"]
                shutil.rmtree(run["folder"])
                if r:
                    ours.append(run)
            elif files is not None:
                run = llvm_work(path, texts, files, tmp)
                hashes.add(outputs_hash(run["folder"]))
                shutil.rmtree(run["folder"])
                if r:
                    theirs.append(run)
            else:                           # (round 0, LLVM first: nothing known yet)
                pass
    return {"ours": ours, "theirs": theirs, "hashes": hashes, "images": n_images,
            "wall": statistics.median(o["wall"] / t["wall"] for o, t in zip(ours, theirs)),
            "cpu": statistics.median(o["cpu"] / t["cpu"] for o, t in zip(ours, theirs)),
            "wall ratios": [o["wall"] / t["wall"] for o, t in zip(ours, theirs)],
            "cpu ratios": [o["cpu"] / t["cpu"] for o, t in zip(ours, theirs)]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernels", type=int, default=2000)
    ap.add_argument("--llvm-kernels", type=int, default=100,
                    help="module size for the comparison with LLVM's own split (0: leave it out)")
    ap.add_argument("--repeat", type=int, default=5, help="interleaved rounds (each: post-link and LLVM's work)")
    ap.add_argument("--quick", action="store_true", help="small sizes for the CI speed guard (under a minute)")
    args = ap.parse_args()
    if args.quick:
        args.kernels, args.llvm_kernels, args.repeat = 150, 0, 5
    rows = []
    llvm_rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for scale in (1, 2):
            text = generate_device_module(args.kernels * scale, sets=max(1, args.kernels * scale // 20))
            path = os.path.join(tmp, f"m{scale}.ll")
            with open(path, "w") as fh:
                fh.write(text)
            n_fn = text.count("\ndefine ")
            base = min(floor(text) for _ in range(3))
            for mode in ("kernel", "source"):
                rows.append((scale, mode, n_fn, args.kernels * scale, base, measure(path, mode, args.repeat, tmp)))
        if args.llvm_kernels:
            text = generate_device_module(args.llvm_kernels, sets=max(1, args.llvm_kernels // 20))
            path = os.path.join(tmp, "llvm.ll")
            with open(path, "w") as fh:
                fh.write(text)
            for mode in ("kernel", "source"):
                runs = []
                for _ in range(args.repeat):
                    run = post_link(path, mode, tmp)
                    runs.append((run["wall"], [im.entry_points for im in run["images"]]))
                    del run["images"]
                ours, groups = min(runs, key=lambda r: r[0])
                theirs = min(llvm_way(text, groups) for _ in range(args.repeat))
                llvm_rows.append((mode, text.count("\ndefine "), args.llvm_kernels, len(groups), ours, theirs))
    report(args, rows, llvm_rows)


def report(args, rows, llvm_rows) -> None:
    targets = {"kernel": 1.5, "source": 1.3}
    try:
        load_avg = "load average %.1f %.1f %.1f" % os.getloadavg()
    except OSError:
        load_avg = "load average unknown"
    print(f"{args.repeat} interleaved rounds per row; medians (min-max); {os.cpu_count()} cores, {load_avg}")
    print(f"{'size':>4} {'split':>6} {'functions':>9} {'images':>6} {'floor':>7} {'LLVM wall':>19} "
          f"{'post-link wall':>19} {'x LLVM':>16} {'LLVM CPU':>19} {'post-link CPU':>19} {'x LLVM':>16} "
          f"{'target':>6}  outputs")
    for scale, mode, n_fn, n_k, base, m in rows:
        same = "same files" if len(m["hashes"]) == 1 else "DIFFERENT FILES"
        print(f"{scale:>3}x {mode:>6} {n_fn:>9} {m['images']:>6} {base:>6.3f}s "
              f"{_spread([t['wall'] for t in m['theirs']]):>19} {_spread([o['wall'] for o in m['ours']]):>19} "
              f"{_spread(m['wall ratios']):>16} "
              f"{_spread([t['cpu'] for t in m['theirs']]):>19} {_spread([o['cpu'] for o in m['ours']]):>19} "
              f"{_spread(m['cpu ratios']):>16} {targets[mode]:>6}  {','.join(sorted(m['hashes']))} ({same})")
    print("where the time goes, seconds (medians over the rounds):")
    for scale, mode, *_, m in rows:
        for side, label in (("ours", "post-link"), ("theirs", "LLVM's work")):
            stages = m[side][0]["stages"].keys()
            print(f"  {scale}x {mode} {label:>11}: " + ", ".join(
                f"{k} {statistics.median(r['stages'][k] for r in m[side]):.3f}" for k in stages))
    figures = []
    for mode in ("kernel", "source"):
        one = next(r[-1] for r in rows if r[0] == 1 and r[1] == mode)
        two = next(r[-1] for r in rows if r[0] == 2 and r[1] == mode)

        def med(m, side):
            return statistics.median(r["wall"] for r in m[side])
        growth, llvm_growth = med(two, "ours") / med(one, "ours"), med(two, "theirs") / med(one, "theirs")
        print(f"-split={mode}: time growth at 2x size {growth:.2f}x (LLVM's work grew {llvm_growth:.2f}x)")
        worst = max(one["wall"], two["wall"])
        worst_cpu = max(one["cpu"], two["cpu"])
        print(f"-split={mode}: worst ratio to LLVM's work {worst:.2f} wall, {worst_cpu:.2f} CPU "
              f"(target <= {targets[mode]}): {'met' if worst <= targets[mode] else 'NOT met'}")
        figures.append({"figure": f"postlink.{mode}", "ratio": round(worst, 3), "target": targets[mode]})
        figures.append({"figure": f"postlink.{mode}.cpu", "ratio": round(worst_cpu, 3), "target": targets[mode]})
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
    if any(len(r[-1]["hashes"]) != 1 for r in rows):
        sys.exit("bench_postlink: the two sides wrote different files (or post-link's runs differed): "
                 "the ratios compare different work")


if __name__ == "__main__":
    main()
