"""Multiply two matrices with the tiled kernel (work-group memory and barriers),
check it against the naive kernel and NumPy, and sum the result with sycl.reduction."""
import os

import numpy as np

from minisycl import runtime as sycl

HERE = os.path.dirname(os.path.abspath(__file__))
prog = sycl.build_program([os.path.join(HERE, "tiled_matmul.ksl")])
q = sycl.queue()
n = 128
rng = np.random.default_rng(0)
a, b, c, naive = (sycl.malloc_shared(n * n, np.float32, q) for _ in range(4))
np.asarray(a)[:] = rng.random(n * n, dtype=np.float32)
np.asarray(b)[:] = rng.random(n * n, dtype=np.float32)
q.parallel_for(prog.kernel("tiled_matmul"), sycl.nd_range((n, n), (16, 16)), a, b, c, n).wait()
q.parallel_for(prog.kernel("naive_matmul"), sycl.range(n, n), a, b, naive, n).wait()
ref = np.asarray(a).reshape(n, n) @ np.asarray(b).reshape(n, n)
total = sycl.malloc_shared(1, np.float32, q)
q.parallel_for(prog.kernel("total"), sycl.range(n * n), c, sycl.reduction(total, sycl.plus, initialize_to_identity=True)).wait()
print(f"tiled == numpy: {np.allclose(np.asarray(c).reshape(n, n), ref, rtol=1e-4)}")
print(f"tiled == naive: {np.allclose(np.asarray(c), np.asarray(naive), rtol=1e-5)}")
print(f"sum of c: {float(np.asarray(total)[0]):.6g} (numpy {float(ref.sum()):.6g})", flush=True)
