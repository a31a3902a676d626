"""USM allocations end at a guard page (issue 17, point 3): a kernel that runs
past the end of its allocation stops with ``errc::runtime`` inside the kernel
guard instead of corrupting the process's heap, and the memory stays usable."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from minisycl import runtime as sycl

KSL = "kernel fillv(id<1> i, int* x, int v) { x[i] = v; }\n"


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("g")
    (d / "g.ksl").write_text(KSL)
    return sycl.build_program([str(d / "g.ksl")])


@pytest.mark.cpu_only("the guard region after each allocation is the CPU device's; a GPU kernel past its allocation writes whatever lies there or loses its context (CUDA_ERROR_ILLEGAL_ADDRESS)")
@pytest.mark.parametrize("count", [1000, 4096, 100_000])
def test_a_range_past_the_allocation_faults_in_the_kernel(prog, count):
    q = sycl.queue()
    x = sycl.malloc_shared(count, np.int32, q)
    with pytest.raises(sycl.exception) as err:
        q.parallel_for(prog.kernel("fillv"), count + 1024, x, 7).wait()
    assert err.value.code() == sycl.errc.runtime
    assert "kernel 'fillv' stopped with SIGSEGV" in str(err.value)
    q.parallel_for(prog.kernel("fillv"), count, x, 5).wait()
    assert (np.asarray(x) == 5).all()


@pytest.mark.cpu_only("the guard region after each allocation is the CPU device's; a GPU kernel past its allocation writes whatever lies there or loses its context (CUDA_ERROR_ILLEGAL_ADDRESS)")
def test_the_process_survives_and_exits_cleanly(tmp_path):
    """The scenario of the issue: before, the process died later in free()."""
    (tmp_path / "g.ksl").write_text(KSL)
    script = textwrap.dedent(f"""
        import numpy as np
        from minisycl import runtime as sycl
        prog = sycl.build_program([{str(tmp_path / "g.ksl")!r}])
        q = sycl.queue()
        for _ in range(5):      # a worker's piece starts far past the end: it must fault too
            bufs = [sycl.malloc_shared(1000, np.int32, q) for _ in range(50)]
            try:
                q.parallel_for(prog.kernel("fillv"), 1 << 20, bufs[10], 1).wait()
            except sycl.exception as e:
                print("caught", e.code())
            for b in bufs:
                sycl.free(b)
        print("done")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["caught", "errc.runtime"] * 5 + ["done"]


def test_allocations_are_aligned_zeroed_and_views_outlive_free():
    a = sycl.malloc_shared(37, np.float64)
    assert a.ptr % 64 == 0 and not np.asarray(a).any()
    view = a.array
    view[:] = 2.0
    sycl.free(a)
    assert view.sum() == 74.0           # the mapping lives while a view does


@pytest.mark.parametrize("count, dtype, code", [
    (-1, np.int32, "invalid"), (2.5, np.int32, "invalid"), (True, np.int32, "invalid"),
    (4, "not-a-type", "invalid"), (4, object, "invalid"), (1 << 60, np.float64, "memory_allocation")])
def test_bad_allocations_raise_sycl_exceptions(count, dtype, code):
    with pytest.raises(sycl.exception) as err:
        sycl.malloc_shared(count, dtype)
    assert err.value.code() == getattr(sycl.errc, code)
