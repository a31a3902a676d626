"""Quick forms of benches whose script has no ``--quick`` mode yet (CI guard).

``bench/guard.py`` runs ``python bench/<script> --quick`` and reads its last line
as JSON.  Until ``bench_passes.py`` and ``bench_postlink.py`` have their own
``--quick`` (they are being reworked in parallel), the guard runs the function
here instead: the same work as the script's main figure, at a small size,
reusing the script's own timing functions.  Once a script has ``--quick``, the
guard uses it and its entry here can go.

    python bench/quick_fallbacks.py bench_passes.py
"""
from __future__ import annotations

import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _passes() -> dict:
    """``split-if-device,propagate-aspects`` (pipelined, as ``minisycl opt`` runs
    it) over LLVM's parse+verify+print of the same module: 150 kernel groups."""
    import bench_passes
    from gen_ir import generate_module
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.ll")
        text = generate_module(150)
        with open(path, "w") as fh:
            fh.write(text)
        runs = [(bench_passes.floor(text), bench_passes.pipeline(path)[0]) for _ in range(3)]
    base, ours = min(r[0] for r in runs), min(r[1] for r in runs)
    return {"passes / LLVM parse+verify+print": {"ratio": ours / base, "measured": f"{ours:.3f} s",
                                                  "baseline": f"{base:.3f} s"}}


def _postlink() -> dict:
    """post-link ``-split=kernel`` and ``-split=source`` over LLVM's own work for the
    same input and images (parse+print of the input, parse+verify+bitcode of each
    image): 150 kernels."""
    import bench_postlink
    from gen_ir import generate_device_module
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.ll")
        text = generate_device_module(150, sets=8)
        with open(path, "w") as fh:
            fh.write(text)
        base = min(bench_postlink.floor(text) for _ in range(3))
        for mode in ("kernel", "source"):
            t, _, parts = min((bench_postlink.post_link(path, mode, tmp) for _ in range(3)), key=lambda r: r[0])
            llvm = base + parts["of which LLVM's own image work"]
            out[f"post-link -split={mode} / LLVM's own work"] = {"ratio": t / llvm, "measured": f"{t:.3f} s",
                                                                  "baseline": f"{llvm:.3f} s"}
    return out


FALLBACKS = {"bench_passes.py": _passes, "bench_postlink.py": _postlink}


def main():
    script = os.path.basename(sys.argv[1]) if len(sys.argv) == 2 else ""
    if script not in FALLBACKS:
        raise SystemExit(f"usage: quick_fallbacks.py {{{','.join(FALLBACKS)}}}")
    print(json.dumps(FALLBACKS[script]()))


if __name__ == "__main__":
    main()
