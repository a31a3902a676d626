"""Several processes and other libraries (issue 33 point 4), beside their engines in one run:

(a) all-reduce bus bandwidth, ``comm.all_reduce`` (``runtime/distributed.py``) beside
    torch.distributed's NCCL all-reduce on GPUs (when torch imports), or mpi4py's
    ``Allreduce`` on NumPy arrays on CPU devices; sizes up to ``--max-bytes``
    (1 GiB on GPUs by default).  Bus bandwidth = bytes x 2 (n - 1) / n / time, as
    nccl-tests reports it; each figure is the best of ``--rounds`` rounds of
    ``--iters`` back-to-back operations, ours and theirs interleaved (A B A B).
    Target on GPUs: at least 0.95x torch at 1 GiB, on 2 and on 4 GPUs.
(b) the heat stencil's weak scaling (``examples/heat.py``): the same strip per rank
    run by every rank alone (``MPI.COMM_SELF``, all at once) and by all ranks
    together; efficiency = time alone / time together (target >= 90% from 1 to 4 GPUs).
(c) a peer-to-peer copy between two GPUs of this process (rank 0, when it sees two):
    ``queue.memcpy`` beside CuPy's ``memcpyPeer`` of the same size (target >= 0.9x).
(d) DLPack export and import, per call: ``np.from_dlpack(usm)`` / ``torch.from_dlpack(usm)``
    (export, and the consumer's release) and ``sycl.from_dlpack(array)`` (import), beside
    the same library importing its own array (target: under 5 us); ``bench_dlpack.py``
    times the NumPy form alone, without MPI.

GPU parts are skipped without a GPU (or torch/CuPy).  Only rank 0 prints.

    mpiexec -n 2 python bench/bench_distributed.py                        # CPU devices, MPI
    NCCL_NVLS_ENABLE=0 mpiexec -n 4 python bench/bench_distributed.py     # a GPU per rank, NCCL
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import socket
import sys
import time

import numpy as np

from minisycl import runtime as sycl

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _heat():
    spec = importlib.util.spec_from_file_location("heat_example", os.path.join(ROOT, "examples", "heat.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def say(comm, *text) -> None:
    if comm.rank == 0:
        print(*text, flush=True)


def timed(fn, iters: int, sync) -> float:
    """Seconds per call of ``fn`` over ``iters`` back-to-back calls, then ``sync()``."""
    sync()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    sync()
    return (time.perf_counter() - t0) / iters


def torch_group(comm, q):
    """torch.distributed's NCCL group over the same ranks and GPUs, or None without torch."""
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        return None
    from mpi4py import MPI
    world = MPI.COMM_WORLD
    port = None
    if world.Get_rank() == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    port = world.bcast(port, root=0)
    torch.cuda.set_device(q.device.ordinal)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=world.Get_rank(),
                            world_size=world.Get_size())
    return torch, dist


def bench_all_reduce(comm, q, args, group) -> None:
    n = comm.size
    say(comm, f"(a) all-reduce bus bandwidth, {n} ranks on {q.device.name}"
              f" (ours | {'torch.distributed NCCL' if comm.gpu else 'mpi4py Allreduce'} | ratio)")
    from mpi4py import MPI
    size = 1 << 20
    while size <= args.max_bytes:
        count = size // 4
        x, y = sycl.malloc_device(count, np.float32, q), sycl.malloc_device(count, np.float32, q)
        iters = max(2, min(args.iters, (1 << 30) // size * 4))
        ours = lambda: comm.all_reduce(x, y)                       # noqa: E731
        if comm.gpu:
            if group is None:
                theirs = sync_theirs = None
            else:
                torch, dist = group
                t = torch.ones(count, dtype=torch.float32, device="cuda")
                theirs, sync_theirs = (lambda: dist.all_reduce(t)), torch.cuda.synchronize
        else:
            a, b = np.ones(count, np.float32), np.empty(count, np.float32)
            theirs, sync_theirs = (lambda: MPI.COMM_WORLD.Allreduce(a, b)), (lambda: None)
        best_ours = best_theirs = float("inf")
        for _ in range(args.rounds):
            best_ours = min(best_ours, timed(ours, iters, q.wait))
            if theirs is not None:
                best_theirs = min(best_theirs, timed(theirs, iters, sync_theirs))
        factor = 2 * (n - 1) / n if n > 1 else 1.0
        bus = size * factor / best_ours / 1e9
        line = f"  {size / (1 << 20):8.0f} MiB  {bus:8.2f} GB/s  {best_ours * 1e3:8.3f} ms"
        if theirs is not None:
            other = size * factor / best_theirs / 1e9
            line += f"  | {other:8.2f} GB/s  {best_theirs * 1e3:8.3f} ms  | {bus / other:5.2f}x"
        say(comm, line)
        sycl.free(x)
        sycl.free(y)
        size *= 4


def bench_stencil(comm, q, args) -> None:
    from mpi4py import MPI
    heat = _heat()
    prog = sycl.build_program([os.path.join(ROOT, "examples", "distributed.ksl")])
    alone = sycl.distributed.communicator(q, MPI.COMM_SELF)
    say(comm, f"(b) heat stencil weak scaling: {args.rows} x {args.nx} doubles per rank, {args.steps} steps")
    heat.simulate(q, comm, prog, args.nx, args.rows, 2)                  # warm up (compile, NCCL)
    heat.simulate(q, alone, prog, args.nx, args.rows, 2)
    t1 = tn = float("inf")
    for _ in range(args.rounds):
        t1 = min(t1, heat.simulate(q, alone, prog, args.nx, args.rows, args.steps)[1])
        comm.barrier().wait()
        tn = min(tn, heat.simulate(q, comm, prog, args.nx, args.rows, args.steps)[1])
    slowest = max(MPI.COMM_WORLD.allgather(tn))
    alone_slowest = max(MPI.COMM_WORLD.allgather(t1))
    say(comm, f"  1 rank: {alone_slowest / args.steps * 1e3:.3f} ms/step   {comm.size} ranks: "
              f"{slowest / args.steps * 1e3:.3f} ms/step   efficiency {alone_slowest / slowest * 100:.1f}%")


def bench_peer_copy(comm, args) -> None:
    gpus = [d for d in sycl.get_devices() if d.backend == "cuda"]
    if comm.rank != 0 or len(gpus) < 2:
        say(comm, "(c) peer copy: skipped (needs two GPUs in one process)")
        return
    q0, q1 = sycl.queue(gpus[0], in_order=True), sycl.queue(gpus[1], in_order=True)
    enable = getattr(q0.device, "ext_oneapi_enable_peer_access", None)
    if enable is not None:
        enable(q1.device)
    n = args.peer_bytes
    a, b = sycl.malloc_device(n, np.uint8, q0), sycl.malloc_device(n, np.uint8, q1)
    ours = lambda: q0.memcpy(b, a, n)                              # noqa: E731
    theirs = None
    try:
        import cupy
        with cupy.cuda.Device(gpus[0].ordinal):
            ca = cupy.empty(n, cupy.uint8)
        with cupy.cuda.Device(gpus[1].ordinal):
            cb = cupy.empty(n, cupy.uint8)

        def theirs():
            cupy.cuda.runtime.memcpyPeer(cb.data.ptr, gpus[1].ordinal, ca.data.ptr, gpus[0].ordinal, n)

        def sync_theirs():
            for d in (gpus[0].ordinal, gpus[1].ordinal):
                with cupy.cuda.Device(d):
                    cupy.cuda.runtime.deviceSynchronize()
    except ImportError:
        pass
    best_ours = best_theirs = float("inf")
    for _ in range(args.rounds):
        best_ours = min(best_ours, timed(ours, 10, q0.wait))
        if theirs is not None:
            best_theirs = min(best_theirs, timed(theirs, 10, sync_theirs))
    line = f"(c) peer copy of {n >> 20} MiB {gpus[0].name} -> {gpus[1].name}: {n / best_ours / 1e9:.1f} GB/s"
    if theirs is not None:
        line += f"  | CuPy {n / best_theirs / 1e9:.1f} GB/s  | {best_theirs / best_ours:.2f}x"
    print(line, flush=True)


def bench_dlpack(comm, q, args) -> None:
    """(d): ``bench_dlpack.py``'s calls and timing (interleaved, best of 5 rounds):
    NumPy on a CPU device, torch on a GPU."""
    if comm.rank != 0:
        return
    from bench_dlpack import GOAL_US, measure, numpy_calls      # (this folder is on the path)
    n = args.dlpack_iters
    print("(d) DLPack per call (ours | the library with its own array)", flush=True)
    if q.device.backend != "cuda":
        us = measure(numpy_calls(q), n, 5)
        print(f"  export np.from_dlpack(usm)   {us['export']:6.2f} us  | np.from_dlpack(ndarray) {us['numpy']:6.2f} us",
              flush=True)
        print(f"  import sycl.from_dlpack(np)  {us['import']:6.2f} us", flush=True)
        return
    try:
        import torch
    except ImportError:
        print("  skipped on a GPU without torch", flush=True)
        return
    from minisycl.runtime.interop import native_stream
    x = sycl.malloc_device(1024, np.float32, q)
    t = torch.ones(1024, device=f"cuda:{q.device.ordinal}")
    ours_stream = native_stream(q)
    theirs = torch.cuda.current_stream(q.device.ordinal).cuda_stream
    version = (1, 0)
    us = measure({"export": lambda: torch.from_dlpack(x), "import": lambda: sycl.from_dlpack(t, q),
                  "torch": lambda: torch.from_dlpack(t),
                  "ours_capsule": lambda: x.__dlpack__(stream=theirs, max_version=version),
                  "torch_capsule": lambda: t.__dlpack__(stream=ours_stream, max_version=version)}, n, 5)
    print(f"  export torch.from_dlpack(usm)   {us['export']:6.2f} us  | torch.from_dlpack(tensor) "
          f"{us['torch']:6.2f} us", flush=True)
    print(f"  import sycl.from_dlpack(tensor) {us['import']:6.2f} us", flush=True)
    # what is ours in each: the producer's call as the consumer makes it (its stream handshake
    # included), the capsule dropped unconsumed: ours in an export; the rest of an import once the
    # tensor's own __dlpack__(stream=ours) (torch's event and stream wait) is taken out
    ours_import = us["import"] - us["torch_capsule"]
    print(f"  ours: export's __dlpack__(stream=torch's) {us['ours_capsule']:6.2f} us; import without the "
          f"tensor's __dlpack__(stream=ours) {ours_import:6.2f} us (torch's: {us['torch_capsule']:.2f} us); "
          f"goal < {GOAL_US:.0f} us each: {'met' if max(us['ours_capsule'], ours_import) < GOAL_US else 'NOT met'}",
          flush=True)
    try:
        import cupy as cp
    except ImportError:
        return
    with cp.cuda.Device(q.device.ordinal):
        c = cp.ones(1024, dtype=cp.float32)
        us = measure({"import": lambda: sycl.from_dlpack(c, q), "export": lambda: cp.from_dlpack(x),
                      "cupy_capsule": lambda: c.__dlpack__(stream=ours_stream, max_version=version)}, n, 5)
    print(f"  with CuPy: import {us['import']:6.2f} us, less CuPy's __dlpack__(stream=ours) "
          f"{us['import'] - us['cupy_capsule']:6.2f} us; export cupy.from_dlpack(usm) {us['export']:6.2f} us",
          flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--max-bytes", type=int, default=None,
                   help="largest all-reduce (default 1 GiB on GPUs, 64 MiB else)")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--nx", type=int, default=None, help="stencil columns (default 8192 on GPUs, 512 else)")
    p.add_argument("--rows", type=int, default=None, help="stencil rows per rank (default 16384 on GPUs, 256 else)")
    p.add_argument("--steps", type=int, default=None, help="stencil steps (default 200 on GPUs, 20 else)")
    p.add_argument("--peer-bytes", type=int, default=256 << 20)
    p.add_argument("--dlpack-iters", type=int, default=20000)
    p.add_argument("--only", default="abcd", help="which parts to run (letters)")
    args = p.parse_args()
    q = sycl.queue(sycl.distributed.local_device(), in_order=True)
    comm = sycl.distributed.communicator(q)
    gpu = comm.gpu
    args.max_bytes = args.max_bytes or ((1 << 30) if gpu else (64 << 20))
    args.nx = args.nx or (8192 if gpu else 512)
    args.rows = args.rows or (16384 if gpu else 256)
    args.steps = args.steps or (200 if gpu else 20)
    say(comm, f"bench_distributed: {comm.size} ranks, rank 0 on {q.device.name}")
    group = torch_group(comm, q) if gpu and "a" in args.only else None
    if "a" in args.only:
        bench_all_reduce(comm, q, args, group)
    if "b" in args.only:
        bench_stencil(comm, q, args)
    if "c" in args.only:
        bench_peer_copy(comm, args)
    if "d" in args.only:
        bench_dlpack(comm, q, args)
    comm.barrier().wait()
    if group is not None:
        group[1].destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
