"""Prefix sums with the group algorithms: a block scan per work-group, then the
blocks' offsets; checked against numpy.cumsum."""
import os

import numpy as np

from minisycl import runtime as sycl

HERE = os.path.dirname(os.path.abspath(__file__))
prog = sycl.build_program([os.path.join(HERE, "scan.ksl")])
q = sycl.queue()
block, blocks = 256, 64
n = block * blocks
x, out, sums, offsets = (sycl.malloc_shared(size, np.int32, q) for size in (n, n, blocks, blocks))
np.asarray(x)[:] = np.random.default_rng(1).integers(0, 10, n)
q.parallel_for(prog.kernel("scan_blocks"), sycl.nd_range(n, block), x, out, sums).wait()
q.parallel_for(prog.kernel("scan_block_sums"), sycl.nd_range(blocks, blocks), sums, offsets).wait()
q.parallel_for(prog.kernel("add_offsets"), sycl.nd_range(n, block), out, offsets).wait()
print(f"scan == numpy.cumsum: {np.array_equal(np.asarray(out), np.cumsum(np.asarray(x)))}")
sub, sub_max = sycl.malloc_shared(n, np.int32, q), sycl.malloc_shared(n, np.int32, q)
q.parallel_for(prog.kernel("sub_group_scan"), sycl.nd_range(n, block), x, sub, sub_max).wait()
size = q.device.sub_group_sizes[0]
pieces = np.asarray(x).reshape(-1, size)
ok = np.array_equal(np.asarray(sub).reshape(-1, size), np.cumsum(pieces, axis=1)) and \
    np.array_equal(np.asarray(sub_max).reshape(-1, size), np.repeat(pieces.max(axis=1, keepdims=True), size, axis=1))
print(f"sub-group scans (size {size}) == numpy: {ok}", flush=True)
