"""Shared pytest fixtures.

Every test runs with ``MINISYCL_CHECK_HOST_ACCESS=1`` (set before the runtime
is imported, and inherited by the processes tests start): the CPU device then
refuses host reads that SYCL leaves undefined and a GPU would get wrong
(``runtime/host_access.py``), so a test that passes here reads its results as
it must on every device."""
import os

os.environ["MINISYCL_CHECK_HOST_ACCESS"] = "1"

import pytest  # noqa: E402

from minisycl.frontend import CompileError, compile_source  # noqa: E402


@pytest.fixture
def compile_ok():
    def run(src, name="t.ksl"):
        return compile_source(src, name)
    return run


@pytest.fixture
def compile_err():
    """Compile expecting errors; returns the rendered diagnostics."""
    def run(src, name="t.ksl"):
        with pytest.raises(CompileError) as info:
            compile_source(src, name)
        return info.value.render()
    return run


@pytest.fixture(scope="session", autouse=True)
def _private_jit_cache(tmp_path_factory):
    """The runtime's disk cache of compiled programs goes to a temporary folder,
    never to the user's ~/.cache, during tests."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MINISYCL_CACHE_DIR", str(tmp_path_factory.mktemp("jit-cache")))
        yield
