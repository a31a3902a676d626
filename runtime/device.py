"""Devices: one per device config marked ``runtime-device: true``, each running
code on this machine's CPU through LLVM's JIT; ``minisycl_cpu`` is the host CPU
and the default device.

A device's aspects are its config's list plus what this runtime gives every
device (``RUNTIME_ASPECTS``) and its device type (``gpu`` or ``cpu``).  DPC++
does the same: its compile-time lists (``DeviceConfigFile.td``) name the
hardware's optional features, and ``device::has`` asks the running backend,
which adds the device type, the USM allocation kinds, graphs and the rest — so
``device_has(gpu)`` runs on ``intel_gpu_pvc`` although its list lacks ``gpu``.

A config file that is broken is skipped (``config_problems`` says why, and
``minisycl devices`` prints it); the others still give their devices."""
from __future__ import annotations

import functools
import warnings

from ..passes.support import knobs
from ..device_configs.aspects import Aspect
from ..device_configs.targets import ConfigError, TargetInfo, load_all
from .errors import errc, exception

__all__ = ["device", "context", "get_devices", "default_device", "default_context", "aspect", "HOST_CPU",
           "RUNTIME_ASPECTS", "config_problems"]

aspect = Aspect            # sycl::aspect is the compiler's aspect table, the same object
HOST_CPU = "minisycl_cpu"
_GPU_PREFIXES = ("intel_gpu", "nvidia_gpu", "amd_gpu")

#: What this runtime implements on every device, whatever the config lists:
#: the three USM allocation kinds and atomics on host and shared allocations
#: (``memory.py``), profiling queues, command graphs with update
#: (``graph.py``) and virtual functions.  Not system allocations: a kernel
#: argument must be a USM allocation.
RUNTIME_ASPECTS = frozenset({
    Aspect.usm_device_allocations, Aspect.usm_host_allocations, Aspect.usm_shared_allocations,
    Aspect.usm_atomic_host_allocations, Aspect.usm_atomic_shared_allocations, Aspect.queue_profiling,
    Aspect.ext_oneapi_graph, Aspect.ext_oneapi_limited_graph, Aspect.ext_oneapi_virtual_functions,
})


def _device_type(config: TargetInfo) -> Aspect:
    """``gpu`` for the GPU targets (by their list, else their DPC++ name), ``cpu`` otherwise."""
    if "gpu" in config.aspects or ("cpu" not in config.aspects and config.name.startswith(_GPU_PREFIXES)):
        return Aspect.gpu
    return Aspect.cpu


class device:  # noqa: N801 - SYCL's name
    def __init__(self, config: TargetInfo, withheld=()):
        """``withheld``: runtime aspects this device does not report, as a backend
        without them would not (DPC++'s OpenCL backend reports no graph support)."""
        self.config = config
        self.name = config.name
        self._aspects = (frozenset(Aspect[a] for a in config.aspects) | RUNTIME_ASPECTS | {_device_type(config)}) \
            - frozenset(Aspect[a] if isinstance(a, str) else a for a in withheld)
        if Aspect.ext_oneapi_limited_graph not in self._aspects:     # full graph support implies the limited one
            self._aspects -= {Aspect.ext_oneapi_graph}

    @property
    def vendor(self) -> str:
        prefix = self.name.split("_")[0]
        return {"intel": "Intel(R) Corporation", "nvidia": "NVIDIA Corporation",
                "amd": "Advanced Micro Devices, Inc."}.get(prefix, "minisycl (host CPU via LLVM JIT)")

    @property
    def sub_group_sizes(self) -> tuple[int, ...]:
        return self.config.sub_group_sizes

    @property
    def local_mem_size(self) -> int:
        """Bytes of work-group memory a work-group may use (the config's ``local-mem-size``)."""
        return self.config.local_mem_size

    @property
    def aspects(self) -> frozenset:
        return self._aspects

    def has(self, a: Aspect | str) -> bool:
        if isinstance(a, str):
            a = Aspect[a]
        return a in self._aspects

    def is_cpu(self) -> bool:
        return self.has(Aspect.cpu)

    def is_gpu(self) -> bool:
        return self.has(Aspect.gpu)

    def __repr__(self):
        return f"<device {self.name}>"

    def __eq__(self, other):
        return isinstance(other, device) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


@functools.lru_cache(maxsize=None)
def _scan() -> tuple[tuple[device, ...], tuple[ConfigError, ...]]:
    try:
        configs, problems = load_all()
    except ConfigError as err:          # the folder itself cannot be read
        return (), (err,)
    runtime = [c for c in configs if c.runtime_device or c.name == HOST_CPU]
    runtime.sort(key=lambda c: (c.name != HOST_CPU, c.name))
    found = tuple(device(c) for c in runtime)
    for source in _HARDWARE:
        found += tuple(source())
    for problem in problems:            # once per process: the scan is cached
        warnings.warn(f"{skipped_config(problem)}", ConfigWarning, stacklevel=3)
    return found, tuple(problems)


class ConfigWarning(UserWarning):
    """A device-config file was broken and its device skipped (``config_problems``)."""


def skipped_config(problem: ConfigError) -> str:
    """The one-line warning for a broken config file that was skipped."""
    return f"{problem.render().replace(': error: ', ': warning: ', 1)} (skipped)"


#: functions giving the devices of real hardware, after the config-file devices:
#: ``cuda/device.py`` registers the NVIDIA GPUs (none, silently, without a driver or a GPU)
_HARDWARE: list = []


def register_hardware(source) -> None:
    """Add ``source() -> devices`` to the devices ``get_devices`` lists."""
    _HARDWARE.append(source)
    _scan.cache_clear()


def get_devices() -> tuple[device, ...]:
    """The host CPU first, then every config marked as a runtime device (broken
    config files are skipped: see ``config_problems``)."""
    return _scan()[0]


def config_problems() -> tuple[ConfigError, ...]:
    """Why the device-config files that give no device were skipped."""
    return _scan()[1]


def default_device(selector=None) -> device:
    """``selector``: a device, a device name, or a callable scoring devices (SYCL's
    device selectors: the highest non-negative score wins).  Otherwise
    ``MINISYCL_DEVICE``, otherwise the host CPU."""
    devices = get_devices()
    if isinstance(selector, device):
        return selector
    if callable(selector):
        scored = [(selector(d), i, d) for i, d in enumerate(devices)]
        scored = [s for s in scored if s[0] >= 0]
        if not scored:
            raise exception(errc.runtime, "No device of requested type available.")
        return max(scored, key=lambda s: (s[0], -s[1]))[2]
    from_env = selector is None and knobs.default_device() is not None
    name = selector or knobs.default_device() or HOST_CPU
    for d in devices:
        if d.name == name:
            return d
    known = ", ".join(d.name for d in devices) or "none"
    broken = [str(p) for p in config_problems() if f"{name}.yaml:" in str(p)]
    why = f" (its config is broken: {broken[0]})" if broken else ""
    if from_env:
        # DPC++ with a device selector that matches nothing: errc::runtime
        raise exception(errc.runtime, f"No device of requested type available: MINISYCL_DEVICE names "
                                      f"'{name}', which is not a device{why}; devices: {known}")
    raise exception(errc.runtime, f"no device named '{name}'{why}; devices: {known}")


class context:  # noqa: N801 - SYCL's name
    """``sycl::context``: what device-global allocations and built programs belong
    to.  Queues share one default context per device unless given another."""

    _next = 0

    def __init__(self, dev: device | str | None = None):
        self.devices = [default_device(dev)]
        context._next += 1
        self.id = context._next

    def __repr__(self):
        return f"<context {self.id} of {', '.join(d.name for d in self.devices)}>"


_DEFAULT_CONTEXTS: dict[str, context] = {}


def default_context(dev: device) -> context:
    ctx = _DEFAULT_CONTEXTS.get(dev.name)
    if ctx is None:
        ctx = _DEFAULT_CONTEXTS[dev.name] = context(dev)
    return ctx
