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
