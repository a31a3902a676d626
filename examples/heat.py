"""A 2-D heat equation (Jacobi iteration) with halo exchange between MPI ranks:
``mpiexec -n 4 python examples/heat.py [nx] [rows per rank] [steps]``.

The grid is cut into horizontal strips, one per rank, each on its own device
(a GPU per rank where there are GPUs).  Each step, every rank sends its first
and last rows to its neighbours and receives theirs into its halo rows
(``sendrecv``: no rank waits for another to receive first), then runs one
Jacobi kernel.  The top edge of the whole grid is held at 1, the others at 0.
At the end rank 0 gathers the grid and compares it with NumPy's run of the same
steps on the whole grid (``--no-check`` skips it).  ``simulate`` is what
``bench/bench_distributed.py`` times for weak scaling."""
import os
import sys
import time

import numpy as np

from minisycl import runtime as sycl

HERE = os.path.dirname(os.path.abspath(__file__))


def simulate(q, comm, prog, nx: int, rows: int, steps: int):
    """``steps`` Jacobi steps of this rank's ``rows`` x ``nx`` strip: (its final
    (rows + 2) x nx block with halos, a device allocation; seconds the steps took)."""
    r, size = comm.rank, comm.size
    jacobi = prog.kernel("jacobi")
    start = np.zeros((rows + 2, nx))
    if r == 0:
        start[0, :] = 1.0                       # the whole grid's top edge is hot
    u, un = (sycl.malloc_device((rows + 2) * nx, np.float64, q) for _ in range(2))
    for grid in (u, un):
        q.memcpy(grid, start, start.nbytes).wait()
    row_bytes = nx * 8
    send_up, send_down, recv_up, recv_down = (sycl.malloc_device(nx, np.float64, q) for _ in range(4))
    up, down = r - 1, r + 1                     # neighbours (none past the edges)
    comm.barrier().wait()
    t0 = time.perf_counter()
    for _ in range(steps):
        if up >= 0:                             # first interior row up, the upper halo from above
            q.memcpy(send_up, u.ptr + row_bytes, row_bytes)
            comm.sendrecv(send_up, up, recv_up, up)
            q.memcpy(u.ptr, recv_up, row_bytes)
        if down < size:                         # last interior row down, the lower halo from below
            q.memcpy(send_down, u.ptr + rows * row_bytes, row_bytes)
            comm.sendrecv(send_down, down, recv_down, down)
            q.memcpy(u.ptr + (rows + 1) * row_bytes, recv_down, row_bytes)
        q.parallel_for(jacobi, sycl.range(rows, nx - 2), u, un, nx)
        u, un = un, u
    q.wait()
    return u, time.perf_counter() - t0


def reference(nx: int, rows: int, steps: int) -> np.ndarray:
    """The same steps on the whole grid with NumPy (interior rows)."""
    ref = np.zeros((rows + 2, nx))
    ref[0, :] = 1.0
    for _ in range(steps):
        nxt = ref.copy()
        nxt[1:-1, 1:-1] = 0.25 * (ref[:-2, 1:-1] + ref[2:, 1:-1] + ref[1:-1, :-2] + ref[1:-1, 2:])
        ref = nxt
    return ref[1:-1]


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    nx = int(args[0]) if len(args) > 0 else 64
    rows = int(args[1]) if len(args) > 1 else 32
    steps = int(args[2]) if len(args) > 2 else 50
    q = sycl.queue(sycl.distributed.local_device(), in_order=True)
    comm = sycl.distributed.communicator(q)
    prog = sycl.build_program([os.path.join(HERE, "distributed.ksl")])
    u, seconds = simulate(q, comm, prog, nx, rows, steps)

    interior = sycl.malloc_device(rows * nx, np.float64, q)     # gather the interiors on every rank
    q.memcpy(interior, u.ptr + nx * 8, rows * nx * 8).wait()
    whole = sycl.malloc_device(comm.size * rows * nx, np.float64, q)
    comm.all_gather(interior, whole).wait()
    if comm.rank == 0:
        grid = np.empty((comm.size * rows, nx))
        q.memcpy(grid, whole, grid.nbytes).wait()
        print(f"heat: {comm.size} ranks, {comm.size * rows} x {nx} grid, {steps} steps in {seconds:.3f} s: "
              f"mean temperature {grid.mean():.6f}", flush=True)
        if "--no-check" not in argv:
            err = np.abs(reference(nx, comm.size * rows, steps) - grid).max()
            assert err < 1e-12, err
            print(f"matches NumPy (max difference {err:.1e})", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
