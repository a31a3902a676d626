"""Every environment variable minisycl reads, in one place (practice 6).

Nothing else in the code base reads ``os.environ``.
"""
from __future__ import annotations

import os


def debug() -> bool:
    """MINISYCL_DEBUG=1: show Python tracebacks for internal errors instead of a short report."""
    return os.environ.get("MINISYCL_DEBUG", "") not in ("", "0")


def default_device() -> str | None:
    """MINISYCL_DEVICE: name of the device the runtime picks by default."""
    return os.environ.get("MINISYCL_DEVICE") or None


def verify_each() -> bool:
    """MINISYCL_VERIFY_EACH=1: verify the IR with LLVM after every pass (the test suite sets it)."""
    return os.environ.get("MINISYCL_VERIFY_EACH", "") not in ("", "0")


def cache_dir() -> str | None:
    """MINISYCL_CACHE_DIR: where compiled programs (runtime) and the analysed
    grammar (front end) are kept between processes ("off" disables the disk
    cache); default ~/.cache/minisycl."""
    value = os.environ.get("MINISYCL_CACHE_DIR")
    if value == "off":
        return None
    return value or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "minisycl")


def verify_threads() -> int:
    """MINISYCL_VERIFY_THREADS: 1 makes the IR tools hand LLVM all their work on
    the calling thread; the default, 2, lets LLVM verify on a second thread
    while Python goes on (``passes.ir``)."""
    value = os.environ.get("MINISYCL_VERIFY_THREADS", "")
    return 1 if value.strip() == "1" else 2


def device_configs_dir() -> str | None:
    """MINISYCL_DEVICE_CONFIGS: a folder of device-config YAML files used instead
    of the packaged ``device_configs/`` (targets and runtime devices alike)."""
    return os.environ.get("MINISYCL_DEVICE_CONFIGS") or None


def cuda_libdevice() -> str | None:
    """MINISYCL_CUDA_LIBDEVICE: the path of CUDA's ``libdevice.10.bc`` for GPU math
    ("off": never use libdevice); unset, the CUDA device looks under
    ``cuda_home()`` and the usual install places."""
    return os.environ.get("MINISYCL_CUDA_LIBDEVICE") or None


def fuzz_examples() -> int | None:
    """MINISYCL_FUZZ_EXAMPLES: how many cases each generator test (``tests/test_fuzz_*.py``)
    runs, instead of its small CI count; for a long run, e.g. 5000."""
    value = os.environ.get("MINISYCL_FUZZ_EXAMPLES", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def cuda_home() -> str | None:
    """CUDA_HOME (or CUDA_PATH): a CUDA toolkit's folder, where libdevice is looked for."""
    return os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or None
