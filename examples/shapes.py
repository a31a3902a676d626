"""Build shapes.ksl, then construct shapes in one kernel and compute their areas in another,
on the default device and on a GPU without fp64 (where 'precise' is refused)."""
import os
import sys

import numpy as np

from minisycl import runtime as sycl

HERE = os.path.dirname(os.path.abspath(__file__))
prog = sycl.build_program([os.path.join(HERE, "shapes.ksl")])
n = 6
for name in [sys.argv[1]] if len(sys.argv) > 1 else [sycl.default_device().name, "intel_gpu_tgllp"]:
    q = sycl.queue(name)
    shapes = sycl.malloc_shared(n, prog.dtype("Shape"), q)   # n objects: the class's layout from the bundle
    out = sycl.malloc_shared(n, np.float32, q)
    made = q.parallel_for(prog.kernel("make_shapes"), n, shapes)
    q.parallel_for(prog.kernel("areas"), n, shapes, out, depends_on=[made]).wait()
    print(f"{name}: areas = {[round(float(a), 3) for a in np.asarray(out)]}")
    print(f"{name}: sides = {np.asarray(shapes)['side'].tolist()} (sizeof(Shape) = {prog.sizeof('Shape')})")
    precise = sycl.malloc_shared(1, np.float64, q)
    try:
        q.single_task(prog.kernel("precise"), shapes, precise).wait()
        print(f"{name}: precise area of shape 0 = {precise[0]}")
    except sycl.exception as err:
        print(f"{name}: precise: {err.code().name}: {err}")
