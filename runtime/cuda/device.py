"""NVIDIA GPUs as runtime devices.

``cuda_devices()`` asks the driver (``driver.load``) for its GPUs and makes
one ``cuda_device`` per GPU; without the library, without a GPU, or when
``cuInit`` fails it returns ``()`` and says nothing (``why_unavailable``
keeps the reason for ``minisycl devices -v``).

A GPU's device config is chosen by compute capability: ``nvidia_gpu_sm_<M><m>``
when that config exists (``nvidia_gpu_sm_90`` for an H100), otherwise the
highest NVIDIA config not above the GPU's capability.  The device's name is
the config's name (the first GPU of an architecture) or the name with
``@<ordinal>`` (further GPUs of the same architecture), so ``MINISYCL_DEVICE``
and selectors can name it; its aspects are the config's plus the runtime's
(as for every device).  Each device uses the GPU's primary context, retained
once and made current on the calling thread before every driver call that
needs it (``activate``).
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import threading

from ...device_configs.targets import ConfigError, load_target, target_names
from ...device_configs.aspects import Aspect
from ..backend import RUNTIME_ASPECTS, device, errc, exception, register_hardware
from . import driver
from .backend import CudaBackend

__all__ = ["cuda_device", "cuda_devices", "config_for"]

#: the context this module made current on each thread (``driver.current``)
_current = driver.current

#: CUdevice_attribute values used here
ATTR = {"max_threads_per_block": 1, "max_block_x": 2, "max_block_y": 3, "max_block_z": 4, "max_grid_x": 5,
        "max_grid_y": 6, "max_grid_z": 7, "max_shared_per_block": 8, "warp_size": 10, "multiprocessors": 16,
        "unified_addressing": 41, "cc_major": 75, "cc_minor": 76, "managed_memory": 83,
        "concurrent_managed_access": 89, "max_shared_per_block_optin": 97}


def config_for(major: int, minor: int, names=None) -> str | None:
    """The device-config name for compute capability ``major.minor``."""
    names = list(target_names() if names is None else names)
    exact = f"nvidia_gpu_sm_{major}{minor}"
    if exact in names:
        return exact
    best = None
    for n in names:
        if not n.startswith("nvidia_gpu_sm_"):
            continue
        digits = n[len("nvidia_gpu_sm_"):]
        if not digits.isdigit() or len(digits) < 2:
            continue
        cc = (int(digits[:-1]), int(digits[-1]))
        if cc <= (major, minor) and (best is None or cc > best[0]):
            best = (cc, n)
    return best[1] if best else None


class cuda_device(device):  # noqa: N801 - SYCL-style name
    """One NVIDIA GPU: ``ordinal`` is the driver's device number."""

    backend = "cuda"

    def __init__(self, config, ordinal: int, handle: int, name: str, gpu_name: str, attrs: dict, total_memory: int):
        super().__init__(config, impl=CudaBackend(self))
        self.name = name
        self.target = config.name
        self.ordinal, self.handle, self.gpu_name = ordinal, handle, gpu_name
        self.attrs, self.total_memory = attrs, total_memory
        self.compute_capability = (attrs["cc_major"], attrs["cc_minor"])
        self._aspects = (frozenset(Aspect[a] for a in config.aspects) | RUNTIME_ASPECTS | {Aspect.gpu}) - {Aspect.cpu}
        self._context = None
        self._lock = threading.Lock()
        self.lost: str | None = None       # set when a fault poisoned the context
        self._library = driver.library()     # the driver it was made with (``borrowed``)

    @property
    def vendor(self) -> str:
        return "NVIDIA Corporation"

    @property
    def sm(self) -> str:
        return f"sm_{self.compute_capability[0]}{self.compute_capability[1]}"

    @property
    def local_mem_size(self) -> int:
        """Bytes of work-group memory a work-group may use: the GPU's shared memory per
        block with opt-in (``CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN``;
        a launch above the default 48 KiB opts in, ``queue._shared_memory``)."""
        return self.attrs.get("max_shared_per_block_optin") or self.config.local_mem_size

    # -- info::device queries (device.get_info): what the driver reports for this GPU

    def _info_name(self) -> str:
        return self.gpu_name                                   # cuDeviceGetName

    def _info_driver_version(self) -> str:
        """``cuDriverGetVersion``'s number as CUDA writes it: 12080 -> ``12.8``."""
        v = self.driver_version_number()
        return f"{v // 1000}.{v % 1000 // 10}"

    def driver_version_number(self) -> int:
        """``cuDriverGetVersion``: the newest CUDA the driver supports (12080 for 12.8)."""
        v = ctypes.c_int()
        driver.call("cuDriverGetVersion", ctypes.byref(v))
        return v.value

    def _info_max_work_group_size(self) -> int:
        return self.attrs["max_threads_per_block"]             # CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK

    def _info_max_compute_units(self) -> int:
        return self.attrs["multiprocessors"]                   # CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT

    def _info_global_mem_size(self) -> int:
        return self.total_memory                               # cuDeviceTotalMem

    def _info_sub_group_sizes(self) -> list[int]:
        return [self.attrs["warp_size"]]                       # CU_DEVICE_ATTRIBUTE_WARP_SIZE

    def primary_context(self) -> ctypes.c_void_p:
        """This GPU's primary context (retained once, on first use)."""
        if self._context is None:
            with self._lock:
                if self._context is None:
                    ctx = ctypes.c_void_p()
                    driver.call("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), self.handle,
                                what=f"opening {self.name}")
                    self._context = ctx
        return self._context

    def activate(self) -> None:
        """Make this GPU's primary context current on the calling thread: the one
        place the runtime sets a current context, called before every driver call
        that acts on this GPU (with several GPUs, each call names its own)."""
        ctx = self._context if self._context is not None else self.primary_context()
        if self.lost:
            raise exception(errc.runtime, self.lost)
        if _current.context is not ctx:
            driver.call("cuCtxSetCurrent", ctx)
            _current.context = ctx

    @contextlib.contextmanager
    def borrowed(self):
        """This GPU's context current for the calls of a finalizer (``__del__``, a
        DLPack deleter), and the thread's own context current again after.

        The collector runs finalizers wherever it runs: between an ``activate()``
        and the driver call it was made for, on any thread.  A finalizer that
        left its own context current would make that call run under the wrong
        GPU (``CUDA_ERROR_INVALID_CONTEXT``, or worse, the right call on the
        wrong device), so every finalizer's driver calls go through here.

        A GPU of a driver no longer loaded (the tests' stand-in driver, swapped
        out while objects of its GPUs wait for the collector) has nothing to
        free in the driver loaded now: its handles would crash that driver, so
        then this yields ``False`` and the finalizer calls nothing (``True`` otherwise)."""
        if driver.library() is not self._library:
            yield False
            return
        before = _current.context
        self.activate()
        try:
            yield True
        finally:
            if before is not None and _current.context is not before:
                driver.query("cuCtxSetCurrent", before)
                _current.context = before

    def free_memory(self) -> int:
        self.activate()
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        driver.call("cuMemGetInfo_v2", ctypes.byref(free), ctypes.byref(total))
        return free.value

    def __eq__(self, other):
        return isinstance(other, device) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


def _attr(handle: int, key: str) -> int:
    v = ctypes.c_int()
    driver.call("cuDeviceGetAttribute", ctypes.byref(v), ATTR[key], handle)
    return v.value


@functools.lru_cache(maxsize=None)
def cuda_devices() -> tuple[cuda_device, ...]:
    """One device per GPU the driver reports; ``()`` when there is none."""
    if driver.load() is None:
        return ()
    try:
        count = ctypes.c_int()
        driver.call("cuDeviceGetCount", ctypes.byref(count))
        out, seen = [], {}
        for ordinal in range(count.value):
            handle = ctypes.c_int()
            driver.call("cuDeviceGet", ctypes.byref(handle), ordinal)
            raw = ctypes.create_string_buffer(256)
            driver.call("cuDeviceGetName", raw, 256, handle.value)
            attrs = {k: _attr(handle.value, k) for k in ATTR}
            total = ctypes.c_size_t()
            driver.call("cuDeviceTotalMem_v2", ctypes.byref(total), handle.value)
            name = config_for(attrs["cc_major"], attrs["cc_minor"])
            if name is None:
                continue                    # older than every config we have
            try:
                config = load_target(name)
            except ConfigError:
                continue                    # a broken config: skipped, and warned of by get_devices
            n = seen.get(name, 0)
            seen[name] = n + 1
            out.append(cuda_device(config, ordinal, handle.value, name if n == 0 else f"{name}@{n}",
                                   raw.value.decode(errors="replace"), attrs, total.value))
        return tuple(out)
    except (exception, ConfigError):
        return ()


register_hardware(cuda_devices)
