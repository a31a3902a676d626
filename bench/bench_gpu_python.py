"""The Python part of a GPU launch, measured without a GPU (issue 20 point 9).

The GPU runtime runs on ``tests/runtime/fake_cuda.py`` (a stand-in for
libcuda) with the calls of a launch and a wait (``cuLaunchKernel``,
``cuStreamSynchronize``, event calls, ``cuCtxSetCurrent``) replaced by a
function that returns at once, so what is timed is minisycl's own Python per
``single_task(nop, p).wait()``, ``parallel_for(saxpy, 2^26, 2.0, x, y).wait()`` and 100
``single_task(nop, p)`` with one wait (best of 5 runs of 20000 launches).  The GPU's own figures come from ``bench_gpu.py``.

    python bench/bench_gpu_python.py [--profile]
"""
import os
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "runtime"))
import fake_cuda  # noqa: E402

from minisycl import runtime as sycl  # noqa: E402
from minisycl.runtime.cuda import driver  # noqa: E402

KSL = "kernel nop(int* p) { }\nkernel saxpy(id<1> i, float a, float* x, float* y) { y[i] = a * x[i] + y[i]; }\n"


class _Patch:
    def setattr(self, obj, name, value, raising=True):
        setattr(obj, name, value)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    fake, dev = fake_cuda.install(_Patch())
    fake.kernels.update({"nop": (1, lambda p: None), "saxpy": (6, lambda *a: None)})
    path = os.path.join(tempfile.mkdtemp(prefix="minisycl-gpu-py-"), "k.ksl")
    with open(path, "w") as fh:
        fh.write(KSL)
    prog = sycl.build_program([path])
    q = sycl.queue(dev, in_order=True)
    p = sycl.malloc_device(1, np.int32, q)
    x, y = sycl.malloc_device(16, np.float32, q), sycl.malloc_device(16, np.float32, q)
    nop, saxpy = prog.kernel("nop"), prog.kernel("saxpy")
    n = 1 << 26
    q.single_task(nop, p).wait()
    q.parallel_for(saxpy, n, 2.0, x, y).wait()
    returns = lambda *a: 0  # noqa: E731
    for name in ("cuLaunchKernel", "cuEventRecord", "cuEventSynchronize", "cuStreamSynchronize", "cuCtxSetCurrent",
                 "cuEventCreate", "cuStreamWaitEvent"):
        driver._functions[name] = returns
    q._cu_launch = returns
    q._stream_query = returns

    def per_call(fn, count=20000):
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(count):
                fn()
            best = min(best, (time.perf_counter() - t0) / count)
        return best
    print(f"single_task(nop).wait():              {per_call(lambda: q.single_task(nop, p).wait()) * 1e6:.2f} us of Python")
    print(f"parallel_for(saxpy, 2^26).wait():     {per_call(lambda: q.parallel_for(saxpy, n, 2.0, x, y).wait()) * 1e6:.2f} us of Python")
    def eager():
        for _ in range(100):
            q.single_task(nop, p)
        q.wait()
    print(f"100 x single_task(nop), one wait:     {per_call(eager, 200) / 100 * 1e6:.2f} us of Python per kernel")
    print(f"submit(single_task(nop)).wait():      "
          f"{per_call(lambda: q.submit(lambda h: h.single_task(nop, p)).wait()) * 1e6:.2f} us of Python (general path)")
    if "--profile" in argv:
        import cProfile
        import pstats
        prof = cProfile.Profile()
        prof.runcall(lambda: [q.single_task(nop, p).wait() for _ in range(20000)])
        pstats.Stats(prof).sort_stats("tottime").print_stats(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
