"""Every environment variable minisycl reads, in one place (practice 6).

``VARIABLES`` is the one list: each variable with what it does.  The README's
table of environment variables is checked against it
(``tests/test_docs.py``), and nothing else in the code base - the tests and
benches included - reads ``os.environ`` (checked there too: tests may only
*set* variables for the processes they start).
"""
from __future__ import annotations

import os

#: name -> what it does (the README's table says the same; the test compares them)
VARIABLES: dict[str, str] = {
    "MINISYCL_DEBUG": "`1`: internal errors show Python's traceback instead of a short report",
    "MINISYCL_DEVICE": "the runtime's default device: a name (`minisycl devices`), a type with an optional "
                       "index (`cpu`, `gpu`, `gpu:1`, `accelerator`), or `backend:index` / `*:type` as in "
                       "`ONEAPI_DEVICE_SELECTOR` (`cuda:0`, `opencl:*`, `*:gpu`)",
    "MINISYCL_CACHE_DIR": "where compiled programs and the analysed grammar are kept between processes "
                          "(default `$XDG_CACHE_HOME/minisycl`, else `~/.cache/minisycl`; `off` disables it)",
    "XDG_CACHE_HOME": "the base of the default `MINISYCL_CACHE_DIR`",
    "MINISYCL_VERIFY_EACH": "`1`: verify the IR with LLVM after every pass (the test suite sets it)",
    "MINISYCL_VERIFY_THREADS": "`1`: the IR tools hand LLVM all their work on the calling thread "
                               "(default 2: LLVM verifies on a second thread while Python goes on, and `opt` begins its "
                               "passes on LLVM's own printing before LLVM's verdict on it)",
    "MINISYCL_FRONTEND_WORKERS": "processes that tokenize, parse, check and emit one large source's bodies (default: the "
                                 "cores this process may use that the load average leaves free, at most 8; `1`: "
                                 "the serial way; a source with fewer than 100 bodies per worker uses fewer)",
    "MINISYCL_DEVICE_CONFIGS": "a folder of device-config YAML files used instead of the packaged "
                               "`device_configs/` (targets and runtime devices alike)",
    "MINISYCL_CUDA_LIBDEVICE": "the path of CUDA's `libdevice.10.bc` for GPU math (`off`: never use it); "
                               "unset, it is looked for under `CUDA_HOME` and the usual install places",
    "CUDA_HOME": "a CUDA toolkit's folder, where libdevice is looked for",
    "CUDA_PATH": "the same as `CUDA_HOME` when that is unset",
    "MINISYCL_CHECK_HOST_ACCESS": "`1`: the CPU device refuses host reads of USM that SYCL leaves undefined "
                                  "(before a wait; `malloc_device` memory), as a GPU would show them (the "
                                  "runtime tests set it)",
    "MINISYCL_REGEN_GOLDEN": "tests: `1` rewrites the front end's golden outputs instead of comparing them",
    "MINISYCL_DIFF_EXAMPLES": "tests: how many generated modules the differential tests try (default 200 "
                              "for post-link, 100 for opt)",
    "MINISYCL_DIFF_SHRINK": "tests: `1` lets the differential tests shrink a failing example",
    "FUZZ_VERBOSE": "tests: non-empty shows the fuzzed child processes' standard error",
    "MINISYCL_COLLECTIVE_TIMEOUT": "seconds a collective or send/receive of `runtime.distributed` waits for the "
                                   "other ranks before it raises `errc::runtime` (default 60)",
    "NCCL_NVLS_ENABLE": "NCCL's NVLink multicast (NVLS); `runtime.distributed` sets it to `0` when unset, before "
                        "NCCL loads (multicast must stay off on the shared GPU machines)",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "torch's multicast; set to `1` when unset, with `NCCL_NVLS_ENABLE`",
    "NVSHMEM_DISABLE_NVLS": "NVSHMEM's multicast; set to `1` when unset, with `NCCL_NVLS_ENABLE`",
    "MINISYCL_FUZZ_EXAMPLES": "tests: how many cases each generator of bad and random inputs tries (the fuzz and "
                              "property tests; each has its own CI default); a long run sets it high",
}


def _get(name: str) -> str | None:
    assert name in VARIABLES, f"{name} is not in knobs.VARIABLES"
    return os.environ.get(name)


def _flag(name: str) -> bool:
    return (_get(name) or "") not in ("", "0")


def debug() -> bool:
    """MINISYCL_DEBUG=1: show Python tracebacks for internal errors instead of a short report."""
    return _flag("MINISYCL_DEBUG")


CHECK_HOST_ACCESS = "MINISYCL_CHECK_HOST_ACCESS"


def check_host_access() -> bool:
    """MINISYCL_CHECK_HOST_ACCESS=1: the CPU device checks host access to USM as SYCL
    defines it (``runtime/host_access.py``)."""
    return _flag(CHECK_HOST_ACCESS)


def default_device() -> str | None:
    """MINISYCL_DEVICE: the device the runtime picks by default (a name, a type or a
    selector: ``runtime.device``)."""
    return _get("MINISYCL_DEVICE") or None


def verify_each() -> bool:
    """MINISYCL_VERIFY_EACH=1: verify the IR with LLVM after every pass (the test suite sets it)."""
    return _flag("MINISYCL_VERIFY_EACH")


def cache_dir() -> str | None:
    """MINISYCL_CACHE_DIR: where compiled programs (runtime) and the analysed
    grammar (front end) are kept between processes ("off" disables the disk
    cache); default ~/.cache/minisycl."""
    value = _get("MINISYCL_CACHE_DIR")
    if value == "off":
        return None
    return value or os.path.join(_get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "minisycl")


def verify_threads() -> int:
    """MINISYCL_VERIFY_THREADS: 1 makes the IR tools hand LLVM all their work on
    the calling thread; the default, 2, lets LLVM verify on a second thread
    while Python goes on (``passes.ir``)."""
    return 1 if (_get("MINISYCL_VERIFY_THREADS") or "").strip() == "1" else 2


def frontend_workers() -> int | None:
    """MINISYCL_FRONTEND_WORKERS: how many forked workers check and emit one large
    source's bodies (``frontend.workers``); 1 keeps the front end serial.  None
    (unset, or no positive number): the front end's default (the free cores)."""
    value = (_get("MINISYCL_FRONTEND_WORKERS") or "").strip()
    return int(value) if value.isdigit() and 0 < len(value) < 4 and int(value) > 0 else None


def device_configs_dir() -> str | None:
    """MINISYCL_DEVICE_CONFIGS: a folder of device-config YAML files used instead
    of the packaged ``device_configs/`` (targets and runtime devices alike)."""
    return _get("MINISYCL_DEVICE_CONFIGS") or None


def cuda_libdevice() -> str | None:
    """MINISYCL_CUDA_LIBDEVICE: the path of CUDA's ``libdevice.10.bc`` for GPU math
    ("off": never use libdevice); unset, the CUDA device looks under
    ``cuda_home()`` and the usual install places."""
    return _get("MINISYCL_CUDA_LIBDEVICE") or None


def cuda_home() -> str | None:
    """CUDA_HOME (or CUDA_PATH): a CUDA toolkit's folder, where libdevice is looked for."""
    return _get("CUDA_HOME") or _get("CUDA_PATH") or None


def regen_golden() -> bool:
    """MINISYCL_REGEN_GOLDEN=1 (tests): rewrite golden outputs instead of comparing."""
    return _flag("MINISYCL_REGEN_GOLDEN")


def diff_examples(default: int) -> int:
    """MINISYCL_DIFF_EXAMPLES (tests): the differential tests' example count."""
    value = (_get("MINISYCL_DIFF_EXAMPLES") or "").strip()
    return int(value) if value.isdigit() else default


def diff_shrink() -> bool:
    """MINISYCL_DIFF_SHRINK=1 (tests): let hypothesis shrink a failing differential example."""
    return _get("MINISYCL_DIFF_SHRINK") == "1"


def fuzz_examples(default: int) -> int:
    """MINISYCL_FUZZ_EXAMPLES (tests): how many cases a generator tries (``default`` in CI)."""
    value = (_get("MINISYCL_FUZZ_EXAMPLES") or "").strip()
    return int(value) if value.isdigit() and len(value) < 9 else default


def fuzz_verbose() -> bool:
    """FUZZ_VERBOSE (tests): show the fuzzed child processes' standard error."""
    return bool(_get("FUZZ_VERBOSE"))


def collective_timeout() -> float:
    """MINISYCL_COLLECTIVE_TIMEOUT: seconds a collective waits for the other ranks
    (``runtime.distributed``); default 60, a value that is not a positive number is ignored."""
    try:
        value = float((_get("MINISYCL_COLLECTIVE_TIMEOUT") or "").strip())
    except ValueError:
        return 60.0
    return value if value > 0 else 60.0


#: what keeps NVLink multicast off, set where unset before NCCL loads (``keep_multicast_off``)
MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


def keep_multicast_off() -> None:
    """Set ``MULTICAST_OFF``'s variables where they are unset (in this process, and so in
    every process it starts): NCCL, torch and NVSHMEM then never use NVLink multicast."""
    for name, value in MULTICAST_OFF.items():
        assert name in VARIABLES
        os.environ.setdefault(name, value)
