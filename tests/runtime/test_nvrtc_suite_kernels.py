"""The kernels of ``bench/bench_gpu.py``'s NVRTC suite (``bench/nvrtc_suite.py``):
our half, at small sizes, on each device present, gives NumPy's results, so
the kernels the bench times beside CUDA's are checked in CI."""
import pathlib
import sys

import numpy as np
import pytest

from minisycl import runtime as sycl

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
import nvrtc_suite  # noqa: E402


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    path = tmp_path_factory.mktemp("suite") / "suite.ksl"
    path.write_text(nvrtc_suite.KSL)
    return sycl.build_program([str(path)])


@pytest.mark.parametrize("case", nvrtc_suite.CASES, ids=lambda c: c.name)
def test_suite_kernel_gives_numpys_result(prog, case):
    size = nvrtc_suite.TEST_SIZES[case.name]
    host = case.inputs(size, np.random.default_rng(7))
    q = sycl.queue(in_order=True)
    got, _ = nvrtc_suite.run_ours(sycl, prog, q, case, size, host)
    assert nvrtc_suite.agrees(case, got, case.want(*host))


def test_the_cuda_half_names_the_same_kernels():
    """Each case's CUDA kernel is in the CUDA source under the same name, once."""
    for case in nvrtc_suite.CASES:
        assert nvrtc_suite.CUDA.count(f'extern "C" __global__ void {case.name}(') == 1
        assert nvrtc_suite.KSL.count(f"kernel {case.name}(") == 1
