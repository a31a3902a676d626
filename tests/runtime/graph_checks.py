"""What the graph tests share: ``refused(code, match)``, a ``pytest.raises`` for a
``sycl.exception`` that also checks its ``errc``."""
import pytest

from minisycl import runtime as sycl


def refused(code=sycl.errc.invalid, match=None):
    """``pytest.raises`` for a ``sycl.exception`` with ``code``."""
    class Check:
        def __enter__(self):
            self.ctx = pytest.raises(sycl.exception, match=match)
            self.info = self.ctx.__enter__()
            return self.info

        def __exit__(self, *exc):
            handled = self.ctx.__exit__(*exc)
            assert self.info.value.code() == code, self.info.value
            return handled
    return Check()
