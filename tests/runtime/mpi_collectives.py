"""Run under ``mpiexec -n N`` by ``test_distributed.py`` (and by hand on the GPU
machine: ``mpiexec -n 2 python tests/runtime/mpi_collectives.py``).

``all`` (default): every collective and send/receive against NumPy's answer,
ordered with kernels by events, as command-graph nodes, and the mismatches that
must raise ``errc::runtime`` on every rank; prints ``OK rank r`` at the end.
``timeout``: rank 1 never comes; rank 0 must raise ``errc::runtime`` within the
communicator's timeout (1 s here) and prints ``TIMEOUT ...``.
``die``: rank 1 exits in the middle; the job must end (never hang).
``ci``: ``all``, then the two examples (``examples/distributed_sum.py``,
``examples/heat.py``) with small sizes in the same processes (one start of
Python and MPI per rank for the three: CI's time)."""
import os
import sys
import time

import numpy as np

from minisycl import runtime as sycl

KSL = """
kernel iota(id<1> i, float* x, float base) { x[i] = base + (float)i; }
kernel twice(id<1> i, float* x) { x[i] = 2.0f * x[i]; }
"""


def program(rank: int):
    import tempfile
    d = tempfile.mkdtemp(prefix=f"mpi{rank}-")
    path = os.path.join(d, "c.ksl")
    with open(path, "w") as fh:
        fh.write(KSL)
    return sycl.build_program([path])


def host(q, x):
    out = np.empty(x.count, x.dtype)
    q.memcpy(out, x, out.nbytes).wait()
    return out


def put(q, x, values):
    a = np.ascontiguousarray(values, dtype=x.dtype)
    q.memcpy(x, a, a.nbytes).wait()


def expect_runtime(fn, *words):
    try:
        fn()
    except sycl.exception as err:
        assert err.code() == sycl.errc.runtime, str(err)
        for w in words:
            assert w in str(err), str(err)
        return str(err)
    raise AssertionError(f"expected errc::runtime ({words})")


def main_all():
    q = sycl.queue(sycl.distributed.local_device(), in_order=True)
    comm = sycl.distributed.communicator(q)
    r, n = comm.rank, comm.size
    prog = program(r)
    N = 1000

    # all_reduce after a kernel that fills the buffer (ordered by the event)
    x = sycl.malloc_device(N, np.float32, q)
    y = sycl.malloc_device(N, np.float32, q)
    e = q.parallel_for(prog.kernel("iota"), N, x, float(r))
    comm.all_reduce(x, y, op=sycl.plus, depends_on=[e]).wait()
    want = sum(np.arange(N, dtype=np.float32) + k for k in range(n))
    assert np.array_equal(host(q, y), want), "all_reduce"
    comm.all_reduce(x, op=sycl.maximum).wait()                     # in place
    assert np.array_equal(host(q, x), np.arange(N, dtype=np.float32) + (n - 1)), "all_reduce in place"

    for dtype in (np.int32, np.int64, np.float64, np.uint8):
        a = sycl.malloc_shared(5, dtype, q)
        put(q, a, np.arange(5) + r)
        comm.all_reduce(a, op="minimum").wait()
        assert np.array_equal(host(q, a), np.arange(5).astype(dtype)), dtype

    # broadcast of any element type
    b = sycl.malloc_device(7, np.complex64, q)
    put(q, b, (np.arange(7) + 1j * r) if r == n - 1 else np.zeros(7))
    comm.broadcast(b, root=n - 1).wait()
    assert np.array_equal(host(q, b), (np.arange(7) + 1j * (n - 1)).astype(np.complex64)), "broadcast"

    # all_gather and reduce_scatter
    s = sycl.malloc_device(3, np.int64, q)
    put(q, s, [r, 10 * r, 100 * r])
    g = sycl.malloc_device(3 * n, np.int64, q)
    comm.all_gather(s, g).wait()
    assert host(q, g).tolist() == [v for k in range(n) for v in (k, 10 * k, 100 * k)], "all_gather"
    big = sycl.malloc_device(4 * n, np.float64, q)
    put(q, big, np.arange(4 * n) * (r + 1))
    part = sycl.malloc_device(4, np.float64, q)
    comm.reduce_scatter(big, part, op=sycl.plus).wait()
    total = n * (n + 1) // 2
    assert host(q, part).tolist() == [float(v * total) for v in range(4 * r, 4 * r + 4)], "reduce_scatter"

    # send / recv in a ring (even ranks send first), and sendrecv
    out, inn = sycl.malloc_device(6, np.int32, q), sycl.malloc_device(6, np.int32, q)
    put(q, out, np.full(6, r))
    right, left = (r + 1) % n, (r - 1) % n
    if n > 1:
        if r % 2 == 0:
            comm.send(out, right).wait()
            comm.recv(inn, left).wait()
        else:
            comm.recv(inn, left).wait()
            comm.send(out, right).wait()
        assert host(q, inn).tolist() == [left] * 6, "send/recv"
    put(q, inn, np.zeros(6))
    comm.sendrecv(out, right, inn, left).wait()
    assert host(q, inn).tolist() == [left] * 6, "sendrecv"

    # other libraries' memory (NumPy on this CPU) and the graph form
    if q.device.backend != "cuda":
        h = np.full(4, float(r + 1))
        comm.all_reduce(h).wait()
        assert h.tolist() == [float(total)] * 4, "all_reduce of a NumPy array"
    z = sycl.malloc_device(N, np.float32, q)
    graph = sycl.command_graph(q)
    k = graph.add(lambda hd: hd.parallel_for(prog.kernel("iota"), N, z, 1.0))
    a = graph.add(lambda hd: comm.all_reduce(z, handler=hd), depends_on=[k])
    graph.add(lambda hd: hd.parallel_for(prog.kernel("twice"), N, z), depends_on=[a])
    assert a.get_type() == sycl.node_type.native_command
    ex = graph.finalize()
    for _ in range(2):
        q.ext_oneapi_graph(ex).wait()
        assert np.array_equal(host(q, z), 2 * n * (np.arange(N, dtype=np.float32) + 1)), "graph"

    # mismatches: every rank raises errc::runtime, and the communicator goes on
    w = sycl.malloc_device(8 if r == 0 else 9, np.float32, q)
    expect_runtime(lambda: comm.all_reduce(w).wait(), "disagree", "all_reduce of 8 elements of float32",
                   "all_reduce of 9 elements of float32")
    v = sycl.malloc_device(8, np.float32 if r == 0 else np.int32, q)
    expect_runtime(lambda: comm.all_reduce(v).wait(), "disagree", "int32")
    if r == 0:
        expect_runtime(lambda: comm.broadcast(v).wait(), "disagree", "broadcast", "all_gather")
    else:
        expect_runtime(lambda: comm.all_gather(v, sycl.malloc_device(8 * n, np.int32, q)).wait(), "disagree")
    if n > 1:
        mine = sycl.malloc_device(4 if r == 0 else 5, np.int32, q)
        expect_runtime(lambda: comm.sendrecv(mine, right, sycl.malloc_device(4, np.int32, q), left).wait(),
                       "sendrecv")
    comm.barrier().wait()
    comm.all_reduce(x).wait()                                       # still usable

    # bad arguments are errc::invalid at once
    for fn in (lambda: comm.all_reduce(x, op="xor"), lambda: comm.broadcast(x, root=n),
               lambda: comm.all_reduce(x, sycl.malloc_device(N, np.float64, q)),
               lambda: comm.all_gather(x, y), lambda: comm.all_reduce(sycl.malloc_device(4, np.float16, q))
               if q.device.backend != "cuda" else comm.all_reduce(sycl.malloc_device(4, np.bool_, q))):
        try:
            fn()
        except sycl.exception as err:
            assert err.code() == sycl.errc.invalid, str(err)
        else:
            raise AssertionError("expected errc::invalid")
    print(f"OK rank {r} of {n} on {q.device.name}", flush=True)


def main_timeout():
    q = sycl.queue()
    comm = sycl.distributed.communicator(q, timeout=1.0)
    x = sycl.malloc_shared(4, np.float32, q)
    if comm.rank == 1:
        return                                  # never comes
    start = time.monotonic()
    message = expect_runtime(lambda: comm.all_reduce(x).wait(), "waited 1 s", "MINISYCL_COLLECTIVE_TIMEOUT")
    took = time.monotonic() - start
    assert took < 10, took
    expect_runtime(lambda: comm.all_reduce(x).wait(), "broken")
    print(f"TIMEOUT after {took:.1f} s: {message}", flush=True)


def main_die():
    q = sycl.queue()
    comm = sycl.distributed.communicator(q, timeout=2.0)
    x = sycl.malloc_shared(4, np.float32, q)
    comm.all_reduce(x).wait()
    if comm.rank == 1:
        os._exit(3)
    try:
        comm.all_reduce(x).wait()
    except sycl.exception as err:
        print(f"DIED {err.code()}: {err}", flush=True)


def main_ci():
    import runpy
    main_all()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for name, argv in (("distributed_sum.py", ["100000"]), ("heat.py", ["48", "16", "30"])):
        path = os.path.join(root, "examples", name)
        sys.argv = [path, *argv]
        runpy.run_path(path, run_name="__main__")


if __name__ == "__main__":
    {"all": main_all, "timeout": main_timeout, "die": main_die,
     "ci": main_ci}[sys.argv[1] if len(sys.argv) > 1 else "all"]()
