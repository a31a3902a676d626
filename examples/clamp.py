"""Run clamp01 on the device (kernel) and on the host (JIT-compiled host function)."""
import os

import numpy as np

from minisycl import runtime as sycl

HERE = os.path.dirname(os.path.abspath(__file__))
prog = sycl.build_program([os.path.join(HERE, "clamp.ksl")])
q = sycl.queue()
v = sycl.malloc_shared(4, np.float32, q)
np.asarray(v)[:] = [-1.0, 0.25, 0.75, 2.0]
q.parallel_for(prog.kernel("clamp_all"), 4, v).wait()
print(f"device: {np.asarray(v).tolist()}")
print(f"host: scaled(0.5) = {prog.host_function('scaled')(0.5)}", flush=True)
