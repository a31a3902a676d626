"""Six kernels written twice, in our kernel language and in CUDA C (issue 31 point 5).

``bench_gpu.py`` times each pair on an NVIDIA GPU in one run: ours through the
runtime, CUDA's compiled by NVRTC (CuPy's ``RawModule``), the same sizes and
launch shapes, and checks both results against each other and NumPy;
``tests/runtime/test_nvrtc_suite_kernels.py`` runs our half on every device
present, at small sizes, against NumPy, so the kernels the bench times are
checked in CI.

The kernels are the textbook ones, written the same way in both languages:
saxpy, the naive matrix product (one work-item per output), the tiled matrix
product (16x16 tiles in work-group memory, two barriers per tile), a
work-group reduction (a tree in work-group memory, one partial sum per group
of 256), a work-group inclusive scan (Hillis-Steele, double-buffered, blocks
of 256) and a 5-point stencil (the mean of the four neighbours, borders
copied).  Reduction and scan are on ints, so every result is exact; the
float kernels are compared with a tolerance (a GPU compiler may contract
``a * b + c`` to an FMA, NumPy does not).

Each ``Case`` says how to make its inputs for a size, what NumPy gives, how
to launch ours (``launch``: a queue, the kernel, the device allocations) and
CUDA's (``grid``, ``block``, argument order).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

KSL = """
kernel suite_saxpy(id<1> i, float a, float* x, float* y, float* out) { out[i] = a * x[i] + y[i]; }

kernel suite_matmul(id<2> ij, int n, float* a, float* b, float* c) {
  int i = (int)ij[0];
  int j = (int)ij[1];
  float s = 0.0f;
  for (int k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
  c[i * n + j] = s;
}

kernel suite_tiled(nd_item<2> it, int n, float* a, float* b, float* c) [[reqd_work_group_size(16, 16)]] {
  local float ta[16][16];
  local float tb[16][16];
  int r = (int)it.get_global_id(0);
  int col = (int)it.get_global_id(1);
  int lr = (int)it.get_local_id(0);
  int lc = (int)it.get_local_id(1);
  float acc = 0.0f;
  for (int t = 0; t < n / 16; t++) {
    ta[lr][lc] = a[r * n + t * 16 + lc];
    tb[lr][lc] = b[(t * 16 + lr) * n + col];
    group_barrier(it);
    for (int k = 0; k < 16; k++) acc += ta[lr][k] * tb[k][lc];
    group_barrier(it);
  }
  c[r * n + col] = acc;
}

kernel suite_reduce(nd_item<1> it, int* x, int* partial) [[reqd_work_group_size(256)]] {
  local int t[256];
  int l = (int)it.get_local_id(0);
  t[l] = x[it.get_global_id(0)];
  group_barrier(it);
  for (int s = 128; s > 0; s = s / 2) {
    if (l < s) t[l] = t[l] + t[l + s];
    group_barrier(it);
  }
  if (l == 0) partial[it.get_group(0)] = t[0];
}

kernel suite_scan(nd_item<1> it, int* x, int* y) [[reqd_work_group_size(256)]] {
  local int t[2][256];
  int l = (int)it.get_local_id(0);
  int cur = 0;
  t[0][l] = x[it.get_global_id(0)];
  group_barrier(it);
  for (int off = 1; off < 256; off = off * 2) {
    int v = t[cur][l];
    if (l >= off) v = v + t[cur][l - off];
    t[1 - cur][l] = v;
    cur = 1 - cur;
    group_barrier(it);
  }
  y[it.get_global_id(0)] = t[cur][l];
}

kernel suite_stencil(id<2> ij, int n, float* a, float* b) {
  int i = (int)ij[0];
  int j = (int)ij[1];
  if (i == 0 || j == 0 || i == n - 1 || j == n - 1) {
    b[i * n + j] = a[i * n + j];
  } else {
    b[i * n + j] = (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1]) * 0.25f;
  }
}
"""

#: the same kernels in CUDA C, for NVRTC; thread x is our last dimension (as our launches map it)
CUDA = r"""
extern "C" __global__ void suite_saxpy(float a, const float* x, const float* y, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}

extern "C" __global__ void suite_matmul(int n, const float* a, const float* b, float* c) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < n) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
    c[i * n + j] = s;
  }
}

extern "C" __global__ void suite_tiled(int n, const float* a, const float* b, float* c) {
  __shared__ float ta[16][16];
  __shared__ float tb[16][16];
  int lr = threadIdx.y, lc = threadIdx.x;
  int r = blockIdx.y * 16 + lr, col = blockIdx.x * 16 + lc;
  float acc = 0.0f;
  for (int t = 0; t < n / 16; t++) {
    ta[lr][lc] = a[r * n + t * 16 + lc];
    tb[lr][lc] = b[(t * 16 + lr) * n + col];
    __syncthreads();
    for (int k = 0; k < 16; k++) acc += ta[lr][k] * tb[k][lc];
    __syncthreads();
  }
  c[r * n + col] = acc;
}

extern "C" __global__ void suite_reduce(const int* x, int* partial) {
  __shared__ int t[256];
  int l = threadIdx.x;
  t[l] = x[blockIdx.x * 256 + l];
  __syncthreads();
  for (int s = 128; s > 0; s = s / 2) {
    if (l < s) t[l] = t[l] + t[l + s];
    __syncthreads();
  }
  if (l == 0) partial[blockIdx.x] = t[0];
}

extern "C" __global__ void suite_scan(const int* x, int* y) {
  __shared__ int t[2][256];
  int l = threadIdx.x;
  int cur = 0;
  t[0][l] = x[blockIdx.x * 256 + l];
  __syncthreads();
  for (int off = 1; off < 256; off = off * 2) {
    int v = t[cur][l];
    if (l >= off) v = v + t[cur][l - off];
    t[1 - cur][l] = v;
    cur = 1 - cur;
    __syncthreads();
  }
  y[blockIdx.x * 256 + l] = t[cur][l];
}

extern "C" __global__ void suite_stencil(int n, const float* a, float* b) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= n || j >= n) return;
  if (i == 0 || j == 0 || i == n - 1 || j == n - 1) {
    b[i * n + j] = a[i * n + j];
  } else {
    b[i * n + j] = (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1]) * 0.25f;
  }
}
"""


@dataclass(frozen=True)
class Case:
    """One kernel of the suite: ``inputs(size, rng)`` -> host arrays (the last is
    the output's shape and type, zeros); ``want(inputs)`` -> NumPy's result;
    ``ours(sycl, n, size)`` -> (range, arguments before the allocations);
    ``cuda(size)`` -> (grid, block, scalars before the allocations, scalars after);
    ``exact``: results must be equal (ints), else within ``rtol``."""

    name: str
    inputs: Callable
    want: Callable
    ours: Callable
    cuda: Callable
    what: str
    exact: bool = False
    rtol: float = 1e-5


def _square(size, rng):
    return [rng.random((size, size), dtype=np.float32), rng.random((size, size), dtype=np.float32),
            np.zeros((size, size), np.float32)]


def _ints(size, rng):
    return [rng.integers(0, 10, size, dtype=np.int32)]


SAXPY_A = 2.5

CASES = (
    Case("suite_saxpy",
         lambda n, rng: [rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32), np.zeros(n, np.float32)],
         lambda x, y, out: np.float32(SAXPY_A) * x + y,
         lambda sycl, n: (n, [SAXPY_A]),
         lambda n: (((n + 255) // 256,), (256,), [np.float32(SAXPY_A)], [np.int32(n)]),
         "saxpy, {} floats", rtol=1e-6),
    Case("suite_matmul", _square,
         lambda a, b, c: a @ b,
         lambda sycl, n: (sycl.range(n, n), [n]),
         lambda n: ((n // 32, n // 8), (32, 8), [np.int32(n)], []),
         "naive matmul, n = {}", rtol=1e-4),
    Case("suite_tiled", _square,
         lambda a, b, c: a @ b,
         lambda sycl, n: (sycl.nd_range((n, n), (16, 16)), [n]),
         lambda n: ((n // 16, n // 16), (16, 16), [np.int32(n)], []),
         "tiled matmul (16x16 work-group tiles), n = {}", rtol=1e-4),
    Case("suite_reduce",
         lambda n, rng: _ints(n, rng) + [np.zeros(n // 256, np.int32)],
         lambda x, p: x.reshape(-1, 256).sum(axis=1, dtype=np.int32),
         lambda sycl, n: (sycl.nd_range(n, 256), []),
         lambda n: ((n // 256,), (256,), [], []),
         "work-group reduction (ints), {} elements", exact=True),
    Case("suite_scan",
         lambda n, rng: _ints(n, rng) + [np.zeros(n, np.int32)],
         lambda x, y: np.cumsum(x.reshape(-1, 256), axis=1, dtype=np.int32).reshape(-1),
         lambda sycl, n: (sycl.nd_range(n, 256), []),
         lambda n: ((n // 256,), (256,), [], []),
         "work-group inclusive scan (ints), {} elements", exact=True),
    Case("suite_stencil",
         lambda n, rng: [rng.random((n, n), dtype=np.float32), np.zeros((n, n), np.float32)],
         lambda a, b: _stencil(a),
         lambda sycl, n: (sycl.range(n, n), [n]),
         lambda n: ((n // 32, n // 8), (32, 8), [np.int32(n)], []),
         "5-point stencil, {0} x {0}", rtol=1e-6),
)

#: sizes the bench times (multiples of what each launch shape needs) and the small ones the test runs
BENCH_SIZES = {"suite_saxpy": 1 << 26, "suite_matmul": 2048, "suite_tiled": 2048, "suite_reduce": 1 << 26,
               "suite_scan": 1 << 26, "suite_stencil": 8192}
TEST_SIZES = {"suite_saxpy": 1000, "suite_matmul": 32, "suite_tiled": 32, "suite_reduce": 1024,
              "suite_scan": 1024, "suite_stencil": 64}


def _stencil(a: np.ndarray) -> np.ndarray:
    out = a.copy()
    out[1:-1, 1:-1] = (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:]) * np.float32(0.25)
    return out


def agrees(case: Case, got: np.ndarray, want: np.ndarray) -> bool:
    """Whether ``got`` is ``want`` as the case compares results."""
    got, want = np.asarray(got).reshape(-1), np.asarray(want).reshape(-1)
    if case.exact:
        return bool(np.array_equal(got, want))
    return bool(np.allclose(got, want, rtol=case.rtol, atol=case.rtol))


def run_ours(sycl, prog, q, case: Case, size: int, host: list, repeat: int = 0):
    """Launch our kernel of ``case`` on ``q`` over device copies of ``host``; the
    output (the last array) back on the host, and with ``repeat`` the best time of
    ``repeat`` batches of 10 launches (seconds per launch; wall clock around the
    batch and one wait, as ``cuda_time`` times CUDA's)."""
    import time
    k = prog.kernel(case.name)
    r, scalars = case.ours(sycl, size)
    dev = []
    for h in host:
        a = sycl.malloc_device(h.size, h.dtype, q)
        q.memcpy(a, np.ascontiguousarray(h), h.nbytes)
        dev.append(a)
    q.wait()
    args = scalars + dev
    q.parallel_for(k, r, *args).wait()
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(10):
            q.parallel_for(k, r, *args)
        q.wait()
        t = (time.perf_counter() - t0) / 10
        best = t if best is None else min(best, t)
    out = np.empty_like(host[-1])
    q.memcpy(out, dev[-1], out.nbytes).wait()
    for a in dev:
        sycl.free(a, q)
    return out, best


def run_cuda(cp, module, case: Case, size: int, host: list, repeat: int):
    """The same for CUDA's kernel (CuPy, NVRTC): (output, best seconds per launch)."""
    import time
    fn = module.get_function(case.name)
    grid, block, before, after = case.cuda(size)
    dev = [cp.asarray(h) for h in host]
    args = tuple(before) + tuple(dev) + tuple(after)
    sync = cp.cuda.Device().synchronize
    fn(grid, block, args)
    sync()
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(10):
            fn(grid, block, args)
        sync()
        t = (time.perf_counter() - t0) / 10
        best = t if best is None else min(best, t)
    return cp.asnumpy(dev[-1]), best
