"""Count multiples of 3 with a device_global counter (initialised to 1000)."""
import os

import numpy as np

from minisycl import runtime as sycl

HERE = os.path.dirname(os.path.abspath(__file__))
prog = sycl.build_program([os.path.join(HERE, "counter.ksl")], split="kernel")   # two images, one counter
q = sycl.queue()
n = 30000
data = sycl.malloc_shared(n, np.int32, q)
np.asarray(data)[:] = np.arange(n)
counted = q.parallel_for(prog.kernel("count"), n, data)
out = sycl.malloc_shared(1, np.int64, q)
q.single_task(prog.kernel("report"), out, depends_on=[counted]).wait()   # an out-of-order queue: say the order
print(f"hits = {out[0]} (expected {1000 + (n + 2) // 3})")
