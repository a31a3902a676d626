"""Shared pytest fixtures."""
import pytest

from minisycl.frontend import CompileError, compile_source


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
