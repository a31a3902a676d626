"""Scale-out on MPI (issue 33 point 3): the collectives script and the two
examples under ``mpiexec -n 2`` (the CPU path, as CI runs it; on the GPU
machine the same commands take the NCCL path), a rank that never comes
(``errc::runtime`` within the timeout) and a rank that dies (the job ends).
Each run has a limit: a hang fails the test instead of stalling CI."""
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "tests", "runtime", "mpi_collectives.py")

pytestmark = pytest.mark.cpu_only("mpiexec runs its own processes on the default device")
mpi4py = pytest.importorskip("mpi4py", reason="pip install 'minisycl[mpi]' (mpi4py, mpich)")
MPIEXEC = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or shutil.which("mpiexec")
if MPIEXEC is None:
    pytest.skip("no mpiexec (pip install mpich)", allow_module_level=True)


def mpiexec(*args, ranks: int = 2, limit: float = 120):
    env = dict(os.environ, MINISYCL_DEVICE="minisycl_cpu", NCCL_NVLS_ENABLE="0")
    return subprocess.run([MPIEXEC, "-n", str(ranks), sys.executable, *args], capture_output=True, text=True,
                          timeout=limit, env=env, cwd=ROOT)


def test_collectives_and_examples_on_two_ranks():
    """The collectives script, then both examples in the same two processes (``ci`` mode)."""
    out = mpiexec(SCRIPT, "ci")
    assert out.returncode == 0, out.stdout + out.stderr
    # (mpiexec merges the ranks' output: a line of one may run into another's)
    assert sorted(re.findall(r"OK rank \d of \d on minisycl_cpu", out.stdout)) == \
        ["OK rank 0 of 2 on minisycl_cpu", "OK rank 1 of 2 on minisycl_cpu"]
    assert "sum of squares below 100000 over 2 ranks" in out.stdout     # examples/distributed_sum.py
    assert "matches NumPy" in out.stdout and "2 ranks, 32 x 48 grid" in out.stdout     # examples/heat.py


def test_a_rank_that_never_comes_is_a_runtime_error_within_the_timeout():
    out = mpiexec(SCRIPT, "timeout", limit=60)
    assert "TIMEOUT after" in out.stdout, out.stdout + out.stderr
    assert "waited 1 s for the other ranks" in out.stdout
    assert out.returncode != 0                  # MPI_Abort at exit: MPI_Finalize would wait for ever


def test_a_rank_that_dies_ends_the_job():
    out = mpiexec(SCRIPT, "die", limit=60)
    assert out.returncode != 0, out.stdout + out.stderr
