"""NVIDIA GPU speed (issue 20, point 9): minisycl on the GPU beside CUDA itself, in one run.

(a) saxpy on 2^26 floats (bandwidth; CUDA: 2.66 TB/s on the H100);
(b) the naive matrix product, n = 2048, one work-item per element (CUDA's naive kernel: 3.19 ms);
(c) launch + synchronize of a tiny kernel (CUDA: 9.0 us): ``q.single_task(k, p).wait()``, the
    launch fast path (``cuda/queue.py``), beside the same launch through ``submit`` and a handler;
(d) 100 tiny kernels eagerly, and as a command graph replayed (per node; a CUDA graph: 0.99 us);
    the graph is one CUDA graph built node by node (``cuda/graph.py``): the node kinds are printed;
(e) first launch (lowering, PTX, driver JIT) and cached launch (PTX from the disk cache);
(f) the tiled matrix product of docs/language.md (16x16 tiles in work-group memory, one output
    per work-item) and the same idea with 128x128 tiles, 8x8 outputs per work-item, at
    n = 4096 in TFLOP/s (target >= 10 TFLOP/s fp32), beside cuBLAS (CuPy's matmul);
(g) the NVRTC suite (issue 31 point 5, ``nvrtc_suite.py``): saxpy, the naive and tiled matrix
    products, a work-group reduction, a scan and a stencil, each written in our language and in
    CUDA C compiled by NVRTC (CuPy's ``RawModule``), timed at the same sizes (best of 5 batches
    of 10 launches, wall clock around each batch and one synchronisation), every result
    checked against the other and NumPy; target: NVRTC's time / ours >= 0.95 each.  Without
    CuPy the NVRTC half is skipped (and said so); ours still runs and is checked.

CUDA's figures come from CuPy (NVRTC-compiled kernels of the same code) timed in
this run when ``cupy`` imports; otherwise the figures CUDA gave on the lent H100
(``REFERENCE``; bench/README.md, "NVIDIA GPUs") are printed, labelled "reference".  Kernel times are the
best of several runs timed with wall clock around ``wait()`` (minisycl) and
``synchronize()`` (CuPy).

    python bench/bench_gpu.py [--n 67108864] [--matmul 2048] [--tiled 4096] [--suite-only | --no-suite]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import best, source_file  # noqa: E402
import nvrtc_suite  # noqa: E402

from minisycl import runtime as sycl  # noqa: E402

KSL = """
kernel saxpy(id<1> i, float a, float* x, float* y) { y[i] = a * x[i] + y[i]; }
kernel matmul(id<2> ij, int n, float* A, float* B, float* C) {
  int i = (int)ij[0]; int j = (int)ij[1]; float s = 0.0f;
  for (int k = 0; k < n; k++) { s += A[i * n + k] * B[k * n + j]; }
  C[i * n + j] = s;
}
kernel nop(int* p) { }
kernel tiled_matmul(nd_item<2> it, float* a, float* b, float* c, int n)
    [[reqd_work_group_size(16, 16)]] {
  local float ta[16][16];
  local float tb[16][16];
  long r = it.get_global_id(0), col = it.get_global_id(1);
  long lr = it.get_local_id(0), lc = it.get_local_id(1);
  float acc = 0.0f;
  for (int t = 0; t < n / 16; t++) {
    ta[lr][lc] = a[r * n + t * 16 + lc];
    tb[lr][lc] = b[(t * 16 + lr) * n + col];
    group_barrier(it);
    for (int k = 0; k < 16; k++) acc += ta[lr][k] * tb[k][lc];     // contracted to an FMA
    group_barrier(it);
  }
  c[r * n + col] = acc;
}

// 128x128 tiles of C per work-group of 16x16, 8x8 outputs per work-item (rows lr + 16 i,
// columns lc + 16 j: conflict-free .shared reads), k in steps of 8; n a multiple of 128.
kernel tiled_matmul_8x8(nd_item<2> it, float* a, float* b, float* c, int n)
    [[reqd_work_group_size(16, 16)]] {
  local float ta[8][132];
  local float tb[8][128];
  int lr = (int)it.get_local_id(0), lc = (int)it.get_local_id(1);
  int row0 = (int)it.get_group(0) * 128, col0 = (int)it.get_group(1) * 128;
  int tid = lr * 16 + lc;
  float acc[64];
  for (int i = 0; i < 64; i++) acc[i] = 0.0f;
  for (int t = 0; t < n; t += 8) {
    for (int i = 0; i < 4; i++) {
      int e = tid + i * 256;
      ta[e % 8][e / 8] = a[(long)(row0 + e / 8) * n + t + e % 8];
      tb[e / 128][e % 128] = b[(long)(t + e / 128) * n + col0 + e % 128];
    }
    group_barrier(it);
    for (int k = 0; k < 8; k++) {
      float av[8];
      float bv[8];
      for (int i = 0; i < 8; i++) { av[i] = ta[k][lr + 16 * i]; bv[i] = tb[k][lc + 16 * i]; }
      for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) acc[i * 8 + j] = fma(av[i], bv[j], acc[i * 8 + j]);
    }
    group_barrier(it);
  }
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++) c[(long)(row0 + lr + 16 * i) * n + col0 + lc + 16 * j] = acc[i * 8 + j];
}
"""

CUDA_SRC = r"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }
extern "C" __global__ void matmul(int n, const float* A, const float* B, float* C) {
  int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < n) { float s = 0.0f; for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j]; C[i * n + j] = s; } }
extern "C" __global__ void nop(int* p) { }
extern "C" __global__ void tiled(const float* a, const float* b, float* c, int n) {  // docs/language.md's, in CUDA
  __shared__ float ta[16][16], tb[16][16];
  int lr = threadIdx.y, lc = threadIdx.x, r = blockIdx.y * 16 + lr, col = blockIdx.x * 16 + lc;
  float acc = 0.0f;
  for (int t = 0; t < n / 16; t++) {
    ta[lr][lc] = a[r * n + t * 16 + lc]; tb[lr][lc] = b[(t * 16 + lr) * n + col];
    __syncthreads();
    for (int k = 0; k < 16; k++) acc += ta[lr][k] * tb[k][lc];
    __syncthreads();
  }
  c[r * n + col] = acc; }
"""

REFERENCE = {"saxpy_s": 303e-6, "matmul_s": 3.19e-3, "launch_s": 9.0e-6, "eager_s": 4.7e-6, "graph_s": 0.99e-6,
             "cublas_tflops": 47.7}



def median(fn, count):
    times = []
    for _ in range(count):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


def tiled_figures(prog, q, t: int) -> dict:
    """(f): both tiled kernels at n = ``t`` (a multiple of 128), best of 5, checked on three rows."""
    out = {}
    a, b, c = (sycl.malloc_device(t * t, np.float32, q) for _ in range(3))
    rng = np.random.default_rng(2)
    ha, hb = rng.random((t, t), dtype=np.float32), rng.random((t, t), dtype=np.float32)
    q.memcpy(a, ha, ha.nbytes)
    q.memcpy(b, hb, hb.nbytes).wait()
    rows = [0, t // 2 + 3, t - 1]
    want = ha[rows] @ hb
    for name, key, grid in (("tiled_matmul", "tiled", t), ("tiled_matmul_8x8", "tiled8", t // 8)):
        k = prog.kernel(name)
        r = sycl.nd_range((grid, grid), (16, 16))
        q.parallel_for(k, r, a, b, c, t).wait()
        out[key + "_s"] = best(lambda: q.parallel_for(k, r, a, b, c, t).wait(), 5)
        hc = np.empty((t, t), np.float32)
        q.memcpy(hc, c, hc.nbytes).wait()
        out[key + "_ok"] = bool(np.allclose(hc[rows], want, rtol=1e-3))
    for x in (a, b, c):
        sycl.free(x, q)
    return out


def minisycl_figures(gpu, n: int, m: int, t: int) -> dict:
    out = {}
    cache = tempfile.mkdtemp(prefix="minisycl-gpu-cache-")
    os.environ["MINISYCL_CACHE_DIR"] = cache
    path = source_file(KSL)
    prog = sycl.build_program([path])
    q = sycl.queue(gpu, in_order=True)
    t0 = time.perf_counter()
    p1 = sycl.malloc_device(1, np.int32, q)
    q.single_task(prog.kernel("nop"), p1).wait()
    out["first_s"] = time.perf_counter() - t0
    again = sycl.build_program([path])          # a new program: PTX from the disk cache, driver JIT again
    t0 = time.perf_counter()
    q.single_task(again.kernel("nop"), p1).wait()
    out["cached_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    q.single_task(prog.kernel("nop"), p1).wait()
    out["warm_s"] = time.perf_counter() - t0

    x, y = sycl.malloc_device(n, np.float32, q), sycl.malloc_device(n, np.float32, q)
    q.fill(x, np.float32(1.0), n)
    q.fill(y, np.float32(2.0), n).wait()
    k = prog.kernel("saxpy")
    q.parallel_for(k, n, 2.0, x, y).wait()
    out["saxpy_s"] = best(lambda: q.parallel_for(k, n, 2.0, x, y).wait(), 20)

    a, b, c = (sycl.malloc_device(m * m, np.float32, q) for _ in range(3))
    rng = np.random.default_rng(1)
    ha, hb = rng.random((m, m), dtype=np.float32), rng.random((m, m), dtype=np.float32)
    q.memcpy(a, ha, ha.nbytes)
    q.memcpy(b, hb, hb.nbytes).wait()
    mm = prog.kernel("matmul")
    q.parallel_for(mm, sycl.range(m, m), m, a, b, c).wait()
    out["matmul_s"] = best(lambda: q.parallel_for(mm, sycl.range(m, m), m, a, b, c).wait(), 5)
    hc = np.empty((m, m), np.float32)
    q.memcpy(hc, c, hc.nbytes).wait()
    rows = [0, m // 2, m - 1]
    out["matmul_ok"] = bool(np.allclose(hc[rows], ha[rows] @ hb, rtol=1e-3))

    nop = prog.kernel("nop")
    out["launch_s"] = median(lambda: q.single_task(nop, p1).wait(), 2000)
    out["launch_submit_s"] = median(lambda: q.submit(lambda h: h.single_task(nop, p1)).wait(), 2000)

    def eager():
        for _ in range(100):
            q.single_task(nop, p1)
        q.wait()
    out["eager_s"] = best(eager, 20) / 100
    g = sycl.command_graph(q)
    prev = None
    for _ in range(100):
        prev = g.add(lambda h: h.single_task(nop, p1), depends_on=[prev] if prev else [])
    ex = g.finalize()
    built = getattr(ex, "_device_graph", None)
    out["graph_method"] = ("explicit CUDA graph (cuGraphAdd*Node, dependencies at add time), nodes "
                           + ", ".join(f"{k} x{v}" for k, v in sorted(built.node_kinds().items()))
                           if built is not None else "command by command on the stream")
    q.ext_oneapi_graph(ex).wait()
    out["graph_s"] = best(lambda: q.ext_oneapi_graph(ex).wait(), 20) / 100
    out.update(tiled_figures(prog, q, t))
    return out


def cupy_figures(n: int, m: int, t: int) -> dict | None:
    try:
        import cupy as cp
    except ImportError:
        return None
    mod = cp.RawModule(code=CUDA_SRC)
    saxpy, matmul, nop = mod.get_function("saxpy"), mod.get_function("matmul"), mod.get_function("nop")
    out = {}
    x, y = cp.ones(n, cp.float32), cp.full(n, 2.0, cp.float32)
    sync = cp.cuda.Device().synchronize
    run = lambda: (saxpy(((n + 255) // 256,), (256,), (cp.float32(2.0), x, y, cp.int64(n))), sync())  # noqa: E731
    run()
    out["saxpy_s"] = best(run, 20)
    a, b, c = (cp.random.random((m, m), dtype=cp.float32) for _ in range(3))
    mrun = lambda: (matmul(((m + 31) // 32, (m + 7) // 8), (32, 8), (cp.int32(m), a, b, c)), sync())  # noqa: E731
    mrun()
    out["matmul_s"] = best(mrun, 5)
    p = cp.zeros(1, cp.int32)
    one = lambda: (nop((1,), (1,), (p,)), sync())  # noqa: E731
    out["launch_s"] = median(one, 2000)

    def eager():
        for _ in range(100):
            nop((1,), (1,), (p,))
        sync()
    out["eager_s"] = best(eager, 20) / 100
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        s.begin_capture()
        for _ in range(100):
            nop((1,), (1,), (p,))
        graph = s.end_capture()
    graph.launch(s)
    s.synchronize()
    out["graph_s"] = best(lambda: (graph.launch(s), s.synchronize()), 20) / 100
    ta, tb = (cp.random.random((t, t), dtype=cp.float32) for _ in range(2))
    tc = cp.empty((t, t), cp.float32)
    blas = lambda: (cp.matmul(ta, tb, out=tc), sync())  # noqa: E731 - cuBLAS sgemm
    blas()
    out["cublas_tflops"] = 2 * t ** 3 / best(blas, 5) / 1e12
    tiled = mod.get_function("tiled")
    trun = lambda: (tiled((t // 16, t // 16), (16, 16), (ta, tb, tc, cp.int32(t))), sync())  # noqa: E731
    trun()
    out["tiled_cuda_tflops"] = 2 * t ** 3 / best(trun, 5) / 1e12
    return out


def suite_figures(gpu, repeat: int = 5) -> None:
    """(g): print each kernel of the NVRTC suite, ours beside NVRTC's."""
    try:
        import cupy as cp
    except ImportError:
        cp = None
    prog = sycl.build_program([source_file(nvrtc_suite.KSL, "suite.ksl")])
    q = sycl.queue(gpu, in_order=True)
    module = cp.RawModule(code=nvrtc_suite.CUDA) if cp is not None else None
    print("NVRTC suite (same kernels in our language and in CUDA C compiled by NVRTC; best of 5 x 10 launches):")
    if cp is None:
        print("  CuPy is not installed: the NVRTC half is skipped (ours runs and is checked against NumPy)")
    print(f"  {'kernel':48} {'minisycl':>11} {'NVRTC':>11} {'NVRTC/ours':>10}  results (target >= 0.95)")
    rng = np.random.default_rng(5)
    for case in nvrtc_suite.CASES:
        size = nvrtc_suite.BENCH_SIZES[case.name]
        host = case.inputs(size, rng)
        want = case.want(*host)
        ours, ours_s = nvrtc_suite.run_ours(sycl, prog, q, case, size, host, repeat)
        checks = [f"ours {'=' if nvrtc_suite.agrees(case, ours, want) else '!='} NumPy"]
        if module is not None:
            theirs, cuda_s = nvrtc_suite.run_cuda(cp, module, case, size, host, repeat)
            checks += [f"NVRTC {'=' if nvrtc_suite.agrees(case, theirs, want) else '!='} NumPy",
                       f"ours {'=' if nvrtc_suite.agrees(case, ours, theirs) else '!='} NVRTC"]
            ratio = cuda_s / ours_s
            print(f"  {case.what.format(size):48} {ours_s * 1e6:9.1f}us {cuda_s * 1e6:9.1f}us {ratio:10.2f}  "
                  f"{', '.join(checks)}{'' if ratio >= 0.95 else '  (below target)'}")
        else:
            print(f"  {case.what.format(size):48} {ours_s * 1e6:9.1f}us {'-':>11} {'-':>10}  {', '.join(checks)}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 26)
    ap.add_argument("--matmul", type=int, default=2048)
    ap.add_argument("--tiled", type=int, default=4096, help="n of the tiled products (a multiple of 128)")
    ap.add_argument("--suite-only", action="store_true", help="only the NVRTC suite (g)")
    ap.add_argument("--no-suite", action="store_true", help="everything but the NVRTC suite (g)")
    args = ap.parse_args(argv)
    if args.suite_only and args.no_suite:
        ap.error("--suite-only and --no-suite exclude each other")
    gpus = [d for d in sycl.get_devices() if getattr(d, "backend", None) == "cuda"]
    if not gpus:
        print("bench_gpu: no NVIDIA GPU (the CUDA driver lists none): nothing to measure")
        return 0
    gpu = gpus[0]
    print(f"device: {gpu.name} [{gpu.describe()}]")
    if args.tiled % 128:
        ap.error("--tiled must be a multiple of 128")
    if args.suite_only:
        suite_figures(gpu)
        return 0
    ours = minisycl_figures(gpu, args.n, args.matmul, args.tiled)
    cuda = cupy_figures(args.n, args.matmul, args.tiled)
    label = "CUDA (CuPy, this run)" if cuda else "CUDA (reference, bench/README.md)"
    cuda = cuda or REFERENCE
    n, m = args.n, args.matmul
    bw = lambda s: 12 * n / s / 1e12  # noqa: E731
    fl = lambda s: 2 * m ** 3 / s / 1e12  # noqa: E731
    rows = [
        ("saxpy 2^%d floats" % (n.bit_length() - 1), f"{ours['saxpy_s'] * 1e6:.0f} us = {bw(ours['saxpy_s']):.2f} TB/s",
         f"{cuda['saxpy_s'] * 1e6:.0f} us = {bw(cuda['saxpy_s']):.2f} TB/s", cuda["saxpy_s"] / ours["saxpy_s"], ">= 0.95"),
        (f"naive matmul n={m}", f"{ours['matmul_s'] * 1e3:.2f} ms = {fl(ours['matmul_s']):.1f} TFLOP/s"
         + ("" if ours["matmul_ok"] else " (WRONG RESULT)"),
         f"{cuda['matmul_s'] * 1e3:.2f} ms = {fl(cuda['matmul_s']):.1f} TFLOP/s", cuda["matmul_s"] / ours["matmul_s"],
         ">= 0.9"),
        ("launch + synchronize (fast path)", f"{ours['launch_s'] * 1e6:.1f} us", f"{cuda['launch_s'] * 1e6:.1f} us",
         cuda["launch_s"] / ours["launch_s"], ">= 0.67 (<= 1.5x CUDA)"),
        ("launch + synchronize (submit)", f"{ours['launch_submit_s'] * 1e6:.1f} us", f"{cuda['launch_s'] * 1e6:.1f} us",
         cuda["launch_s"] / ours["launch_submit_s"], "(the general path, for comparison)"),
        ("100 kernels eagerly, per kernel", f"{ours['eager_s'] * 1e6:.2f} us", f"{cuda['eager_s'] * 1e6:.2f} us",
         cuda["eager_s"] / ours["eager_s"], ""),
        ("graph replay, per node", f"{ours['graph_s'] * 1e6:.2f} us", f"{cuda['graph_s'] * 1e6:.2f} us",
         cuda["graph_s"] / ours["graph_s"], ">= 0.83 (<= 1.2x CUDA graph)"),
    ]
    print(f"{'figure':34} {'minisycl':28} {label:30} {'CUDA/ours':>9}  target")
    for name, a, b, ratio, target in rows:
        print(f"{name:34} {a:28} {b:30} {ratio:9.2f}  {target}")
    print(f"graph building: {ours['graph_method']}")
    print(f"graph replay vs eager submission: {ours['eager_s'] / ours['graph_s']:.1f}x cheaper (target >= 4x)")
    print(f"first launch (lower + PTX + driver JIT): {ours['first_s'] * 1e3:.1f} ms; cached launch (PTX from disk, "
          f"driver JIT): {ours['cached_s'] * 1e3:.1f} ms; warm launch: {ours['warm_s'] * 1e6:.0f} us")
    t = args.tiled
    tf = lambda s: 2 * t ** 3 / s / 1e12  # noqa: E731
    for key, what in (("tiled", "docs/language.md's, 16x16 tiles"), ("tiled8", "128x128 tiles, 8x8 per work-item")):
        print(f"tiled matmul n={t} ({what}): {ours[key + '_s'] * 1e3:.2f} ms = {tf(ours[key + '_s']):.1f} TFLOP/s"
              f"{'' if ours[key + '_ok'] else ' (WRONG RESULT)'}; cuBLAS: {cuda['cublas_tflops']:.1f} TFLOP/s "
              f"({tf(ours[key + '_s']) / cuda['cublas_tflops']:.2f}x); target >= 10 TFLOP/s")
    if "tiled_cuda_tflops" in cuda:
        print(f"tiled matmul n={t}, docs/language.md's kernel written in CUDA (NVRTC): {cuda['tiled_cuda_tflops']:.1f} "
              f"TFLOP/s; ours/CUDA {tf(ours['tiled_s']) / cuda['tiled_cuda_tflops']:.2f}")
    if not args.no_suite:
        suite_figures(gpu)
    return 0


if __name__ == "__main__":
    sys.exit(main())
