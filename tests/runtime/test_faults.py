"""A kernel that faults raises ``exception(errc.runtime)`` and leaves the queue,
its worker threads and graphs usable; a fault outside kernels still ends the
process as it would without the runtime (issue 5, bad input)."""
import subprocess
import sys

import numpy as np
import pytest

from minisycl import runtime as sycl

KSL = """
kernel poke(int* p, long at) { p[at] = 1; }
kernel divide(id<1> i, int* x, int* y) { x[i] = x[i] / y[i]; }
kernel fillv(id<1> i, int* x, int v) { x[i] = v; }
"""
N = 1 << 20          # large enough to be split over every core


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("f")
    (d / "f.ksl").write_text(KSL)
    return sycl.build_program([str(d / "f.ksl")])


def fault(fn):
    with pytest.raises(sycl.exception) as err:
        fn()
    assert err.value.code() == sycl.errc.runtime
    return str(err.value)


@pytest.mark.cpu_only("a kernel's invalid access is caught by the CPU device's fault guard; on a GPU it is CUDA_ERROR_ILLEGAL_ADDRESS, which loses the context for the rest of the process (tests/gpu/test_gpu.py tests that)")
def test_invalid_access_in_single_task(prog):
    q = sycl.queue()
    p = sycl.malloc_shared(4, np.int32, q)
    msg = fault(lambda: q.single_task(prog.kernel("poke"), p, 1 << 40))
    assert "kernel 'poke' stopped with SIGSEGV: invalid memory access at address 0x" in msg, msg
    for _ in range(3):      # the same thread faults again and is caught again
        fault(lambda: q.single_task(prog.kernel("poke"), p, -(1 << 40)))
    q.single_task(prog.kernel("poke"), p, 2).wait()
    assert list(p) == [0, 0, 1, 0]


@pytest.mark.cpu_only("integer division by zero traps on this CPU (SIGFPE); it does not trap on a GPU")
@pytest.mark.parametrize("where", [0, N - 1], ids=["first-piece", "last-piece"])
def test_division_by_zero_in_any_piece_of_a_parallel_for(prog, where):
    """The first share is a worker thread's, the last the caller's (unless another
    thread claims its blocks first); either way the fault is reported once and the
    other threads stop taking blocks."""
    q = sycl.queue()
    x, y = sycl.malloc_shared(N, np.int32, q), sycl.malloc_shared(N, np.int32, q)
    np.asarray(x)[:] = 12
    np.asarray(y)[:] = 3
    y[where] = 0
    msg = fault(lambda: q.parallel_for(prog.kernel("divide"), N, x, y))
    assert "kernel 'divide' stopped with SIGFPE: arithmetic fault (integer division by zero" in msg, msg
    q.parallel_for(prog.kernel("fillv"), N, x, 7).wait()
    assert (np.asarray(x) == 7).all()
    y[where] = 7
    q.parallel_for(prog.kernel("divide"), N, x, y).wait()
    assert x[where] == 1 and np.asarray(x)[N // 2] == 2


@pytest.mark.cpu_only("a kernel's invalid access is caught by the CPU device's fault guard; on a GPU it is CUDA_ERROR_ILLEGAL_ADDRESS, which loses the context for the rest of the process (tests/gpu/test_gpu.py tests that)")
def test_fault_in_a_graph_replay(prog):
    q = sycl.queue()
    x = sycl.malloc_shared(16, np.int32, q)
    g = sycl.command_graph(q.get_context(), q.get_device())
    at = sycl.dynamic_parameter(g, 1 << 40)
    g.add(lambda h: h.single_task(prog.kernel("poke"), x, at))
    g.add(lambda h: h.parallel_for(prog.kernel("fillv"), 16, x, 5))
    exe = g.finalize(updatable=True)
    msg = fault(lambda: q.ext_oneapi_graph(exe))
    assert "kernel 'poke' stopped with SIGSEGV" in msg
    at.update(3)
    exe.update(g.nodes[0])
    q.ext_oneapi_graph(exe).wait()
    assert list(x) == [5] * 16


@pytest.mark.cpu_only("a kernel's invalid access is caught by the CPU device's fault guard (see above)")
def test_a_fault_inside_a_plan_names_its_kernel(prog):
    """A plan's entries run under one guard: the entry that faulted is told apart
    from those before and after it, and the plan runs again once fixed."""
    q = sycl.queue()
    x = sycl.malloc_shared(16, np.int32, q)
    g = sycl.command_graph(q.get_context(), q.get_device())
    at = sycl.dynamic_parameter(g, 1 << 40)
    first = g.add(lambda h: h.parallel_for(prog.kernel("fillv"), 16, x, 1))
    poke = g.add(lambda h: h.single_task(prog.kernel("poke"), x, at), depends_on=[first])
    g.add(lambda h: h.parallel_for(prog.kernel("fillv"), 8, x, 5), depends_on=[poke])
    exe = g.finalize(updatable=True)
    for _ in range(2):                      # refused each time, the guard left as it was
        msg = fault(lambda: q.ext_oneapi_graph(exe))
        assert "kernel 'poke' stopped with SIGSEGV" in msg, msg
    assert list(x) == [1] * 16              # the entry after the fault did not run
    at.update(3)
    exe.update(poke)
    q.ext_oneapi_graph(exe).wait()
    assert list(x) == [5] * 8 + [1] * 8


def test_a_fault_outside_kernels_still_ends_the_process(prog):
    """Python's faulthandler, installed before the runtime, still reports it."""
    code = ("import ctypes, faulthandler, numpy as np\n"
            "faulthandler.enable()\n"
            "from minisycl import runtime as sycl\n"
            "q = sycl.queue(); p = sycl.malloc_shared(1, np.int32, q)\n"
            f"prog = sycl.build_program([{prog.name!r}])\n"
            "q.single_task(prog.kernel('poke'), p, 0)\n"
            "print('kernel ran', flush=True)\n"
            "ctypes.string_at(8)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "kernel ran" in run.stdout
    assert run.returncode == -11, (run.returncode, run.stderr)
    assert "Fatal Python error: Segmentation fault" in run.stderr


@pytest.mark.cpu_only("about the CPU device's native launch library")
def test_without_native_support_kernels_run_on_the_calling_thread(prog, monkeypatch):
    """Where the guards are not available (not Linux x86-64/AArch64), launches and
    graph plans still run, unguarded."""
    from minisycl.runtime import native
    monkeypatch.setattr(native, "_native", lambda: None)
    q = sycl.queue()
    x = sycl.malloc_shared(N, np.int32, q)
    q.parallel_for(prog.kernel("fillv"), N, x, 4).wait()
    assert (np.asarray(x) == 4).all()
    g = sycl.command_graph(q.get_context(), q.get_device())
    g.add(lambda h: h.parallel_for(prog.kernel("fillv"), 16, x, 9))
    q.ext_oneapi_graph(g.finalize()).wait()
    assert list(x[:17]) == [9] * 16 + [4]
