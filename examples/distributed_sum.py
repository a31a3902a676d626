"""A data-parallel reduction over MPI ranks: ``mpiexec -n 4 python examples/distributed_sum.py [n]``.

Each rank sums the squares of its share of 0 .. n-1 with a kernel and a
``sycl.reduction`` on its own device (a GPU per rank where there are GPUs), then
one ``all_reduce`` (NCCL on GPUs, MPI on CPU devices) combines the partial sums;
every rank checks the total against the closed form."""
import os
import sys

import numpy as np

from minisycl import runtime as sycl

HERE = os.path.dirname(os.path.abspath(__file__))
n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
q = sycl.queue(sycl.distributed.local_device(), in_order=True)
comm = sycl.distributed.communicator(q)
prog = sycl.build_program([os.path.join(HERE, "distributed.ksl")])

first = n * comm.rank // comm.size               # this rank's share: first .. last - 1
last = n * (comm.rank + 1) // comm.size
partial = sycl.malloc_device(1, np.float64, q)
e = q.parallel_for(prog.kernel("sum_squares"), last - first, first,
                   sycl.reduction(partial, sycl.plus, initialize_to_identity=True))
comm.all_reduce(partial, op=sycl.plus, depends_on=[e]).wait()   # the sum of every rank's partial, in place

total = np.empty(1, np.float64)
q.memcpy(total, partial, 8).wait()
exact = (n - 1) * n * (2 * n - 1) // 6
assert abs(total[0] - exact) <= 1e-9 * exact, (total[0], exact)
if comm.rank == 0:
    print(f"sum of squares below {n} over {comm.size} ranks: {total[0]:.6e} (exact {exact:.6e})", flush=True)
