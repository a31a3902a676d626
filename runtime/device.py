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

import enum
import functools
import os
import warnings

import numpy as np

from ..passes.support import knobs
from ..device_configs.aspects import Aspect
from ..device_configs.targets import ConfigError, TargetInfo, load_all
from .errors import errc, exception
from .validate import register_kind, require_device

__all__ = ["device", "context", "get_devices", "default_device", "default_context", "aspect", "HOST_CPU",
           "RUNTIME_ASPECTS", "config_problems", "select_devices", "DEVICE_TYPES", "BACKENDS", "info", "CPU_MAX_WORK_GROUP_SIZE",
           "peer_access", "register_config_backend"]

aspect = Aspect            # sycl::aspect is the compiler's aspect table, the same object
HOST_CPU = "minisycl_cpu"
_GPU_PREFIXES = ("intel_gpu", "nvidia_gpu", "amd_gpu")

#: What this runtime implements on every device, whatever the config lists:
#: the three USM allocation kinds and atomics on host and shared allocations
#: (``memory.py``), profiling queues, command graphs with update
#: (``graph/``) and virtual functions.  Not system allocations: a kernel
#: argument must be a USM allocation.
RUNTIME_ASPECTS = frozenset({
    Aspect.usm_device_allocations, Aspect.usm_host_allocations, Aspect.usm_shared_allocations,
    Aspect.usm_atomic_host_allocations, Aspect.usm_atomic_shared_allocations, Aspect.queue_profiling,
    Aspect.ext_oneapi_graph, Aspect.ext_oneapi_limited_graph, Aspect.ext_oneapi_virtual_functions,
})


#: the largest work-group a CPU device runs: a kernel with barriers or group functions
#: keeps its values that live across them in per-work-item arrays on the stack of the
#: thread running the group (``passes/work_item_loops.py``), so a group is bounded; 8192
#: is also what DPC++'s CPU device reports.  ``work_groups.launch`` refuses more
#: (``errc::nd_range``), as SYCL asks of a local range above ``max_work_group_size``.
CPU_MAX_WORK_GROUP_SIZE = 8192


class info:  # noqa: N801 - SYCL's name: ``sycl::info``
    """SYCL's information descriptors, as names: ``dev.get_info(sycl.info.device.name)``
    (or the plain string ``"name"``)."""

    class device:  # noqa: N801 - ``sycl::info::device``
        name = "name"
        vendor = "vendor"
        driver_version = "driver_version"
        device_type = "device_type"
        max_work_group_size = "max_work_group_size"
        max_compute_units = "max_compute_units"
        global_mem_size = "global_mem_size"
        local_mem_size = "local_mem_size"
        sub_group_sizes = "sub_group_sizes"

    #: every ``info.device`` name, in the order ``minisycl devices -v`` prints them
    DEVICE = ("name", "vendor", "driver_version", "device_type", "max_work_group_size", "max_compute_units",
              "global_mem_size", "local_mem_size", "sub_group_sizes")


@functools.lru_cache(maxsize=None)
def _host_cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else LLVM's name for the host CPU."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Processor") and value.strip():
                    return value.strip()
    except OSError:
        pass
    import llvmlite.binding as llvm
    return llvm.get_host_cpu_name()


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def _device_type(config: TargetInfo) -> Aspect:
    """``gpu`` for the GPU targets (by their list, else their DPC++ name), ``cpu`` otherwise."""
    if "gpu" in config.aspects or ("cpu" not in config.aspects and config.name.startswith(_GPU_PREFIXES)):
        return Aspect.gpu
    return Aspect.cpu


class peer_access(str, enum.Enum):  # noqa: N801 - SYCL's name: ``sycl::ext::oneapi::peer_access``
    """What ``device.ext_oneapi_can_access_peer`` asks (equal to its name as a string)."""
    access_supported = "access_supported"
    atomics_supported = "atomics_supported"


#: the back end of the devices of the device configs (``host_backend.py`` registers it:
#: this module cannot import it, the back end builds on queues that import devices)
_CONFIG_BACKEND: list = []


def register_config_backend(make) -> None:
    """``make(device) -> Backend``: the back end of every device-config device."""
    _CONFIG_BACKEND[:] = [make]
    _scan.cache_clear()


class device:  # noqa: N801 - SYCL's name
    #: the backend as ``ONEAPI_DEVICE_SELECTOR`` names it: config devices run JIT code on this CPU
    backend = "native_cpu"

    def __init__(self, config: TargetInfo, withheld=(), impl=None):
        """``withheld``: runtime aspects this device does not report, as a backend
        without them would not (DPC++'s OpenCL backend reports no graph support).
        ``impl``: the back end that runs it (``backend.Backend``; by default the
        CPU JIT's, ``host_backend.py``)."""
        self.config = config
        self.name = config.name
        #: the back end that runs this device: every capability the runtime uses goes through it
        self.impl = impl if impl is not None else _CONFIG_BACKEND[0](self)
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

    def get_info(self, param: str):
        """``device::get_info<info::device::param>()``: ``param`` is a name of
        ``info.device`` (``name``, ``vendor``, ``driver_version``, ``device_type``,
        ``max_work_group_size``, ``max_compute_units``, ``global_mem_size``,
        ``local_mem_size``, ``sub_group_sizes``); another is ``errc::invalid``."""
        if not isinstance(param, str) or param not in info.DEVICE:
            raise exception(errc.invalid, f"get_info: {param!r} is not an info.device descriptor "
                                          f"(one of {', '.join(info.DEVICE)})")
        return getattr(self, "_info_" + param)()

    # what a device on this CPU reports; cuda/device.py overrides what the GPU knows
    def _info_name(self) -> str:
        return _host_cpu_name() if self.name == HOST_CPU else self.name

    def _info_vendor(self) -> str:
        return self.vendor

    def _info_driver_version(self) -> str:
        import llvmlite.binding as llvm
        from importlib import metadata
        try:
            ours = metadata.version("minisycl")
        except metadata.PackageNotFoundError:
            ours = "unknown"
        return f"minisycl {ours}, LLVM {'.'.join(map(str, llvm.llvm_version_info))} JIT"

    def _info_device_type(self) -> str:
        return next(name for name, a in DEVICE_TYPES.items() if a in self._aspects) \
            if any(a in self._aspects for a in DEVICE_TYPES.values()) else "custom"

    def _info_max_work_group_size(self) -> int:
        return CPU_MAX_WORK_GROUP_SIZE

    def _info_max_compute_units(self) -> int:
        from .native import WORKERS          # the threads a launch is spread over
        return WORKERS

    def _info_global_mem_size(self) -> int:
        return _physical_memory()

    def _info_local_mem_size(self) -> int:
        return self.local_mem_size

    def _info_sub_group_sizes(self) -> list[int]:
        return list(self.sub_group_sizes)

    def describe(self) -> str:
        """What ``minisycl devices`` prints after the device's type ("" for nothing)."""
        return self.impl.describe()

    # -- sycl_ext_oneapi_peer_access

    def _peer(self, peer, what: str) -> "device":
        if not isinstance(peer, device):
            raise exception(errc.invalid, f"{what} expects a device, got {type(peer).__name__}")
        return peer

    def ext_oneapi_can_access_peer(self, peer: "device", value=peer_access.access_supported) -> bool:
        """Whether this device's kernels can reach ``peer``'s device memory
        (``value``: ``peer_access.access_supported``, or ``atomics_supported`` for
        atomic operations on it too)."""
        peer = self._peer(peer, "ext_oneapi_can_access_peer")
        if value not in (peer_access.access_supported, peer_access.atomics_supported):
            raise exception(errc.invalid, f"ext_oneapi_can_access_peer: {value!r:.60} is not a peer_access value")
        return self.impl.can_access_peer(peer, atomics=value == peer_access.atomics_supported)

    def ext_oneapi_enable_peer_access(self, peer: "device") -> None:
        """Let this device's kernels use ``peer``'s device memory
        (``errc::feature_not_supported`` where ``ext_oneapi_can_access_peer`` says no)."""
        self.impl.enable_peer_access(self._peer(peer, "ext_oneapi_enable_peer_access"))

    def ext_oneapi_disable_peer_access(self, peer: "device") -> None:
        """Undo ``ext_oneapi_enable_peer_access``."""
        self.impl.disable_peer_access(self._peer(peer, "ext_oneapi_disable_peer_access"))

    def has(self, a: Aspect | str) -> bool:
        if isinstance(a, str):
            if a not in Aspect.__members__:
                raise exception(errc.invalid, f"device.has: '{a}' is not an aspect")
            a = Aspect[a]
        elif not isinstance(a, Aspect):
            raise exception(errc.invalid, f"device.has expects an aspect or its name, got {type(a).__name__}")
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
    found = tuple(device(c) for c in runtime)      # (their back end: ``host_backend.py``)
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


#: SYCL's device types (``info::device_type``) by the aspect that marks them; ``fpga``
#: as ``ONEAPI_DEVICE_SELECTOR`` spells the accelerator type
DEVICE_TYPES = {"cpu": Aspect.cpu, "gpu": Aspect.gpu, "accelerator": Aspect.accelerator, "fpga": Aspect.accelerator}
#: backends as ``ONEAPI_DEVICE_SELECTOR`` names them: this runtime's devices are ``native_cpu``
#: (code JIT-compiled for this CPU, whatever device a config describes) or ``cuda``; the
#: others are known names that match no device here
BACKENDS = ("native_cpu", "cuda", "level_zero", "opencl", "hip")


def _typed_order(devices) -> list[device]:
    """Devices in the order a type or backend picks them: real hardware first (an
    NVIDIA GPU before a GPU config run on this CPU), then the rest as listed."""
    return sorted(devices, key=lambda d: d.backend == "native_cpu")


def _of_type(devices, word: str, spec: str) -> list[device]:
    if word == "*":
        return list(devices)
    kind = DEVICE_TYPES.get(word)
    if kind is None:
        raise exception(errc.invalid, f"device selector '{spec}': '{word}' is not a device type "
                                      f"({', '.join(DEVICE_TYPES)}) or '*'")
    return [d for d in devices if d.has(kind)]


def _index(word: str, spec: str) -> int | None:
    if not word.isdigit():
        return None
    if len(word) > 9:
        raise exception(errc.invalid, f"device selector '{spec}': device index {word} is too large")
    return int(word)


def select_devices(spec: str, devices=None) -> list[device]:
    """The devices a selector string names, best first (``MINISYCL_DEVICE``,
    ``sycl.queue("gpu")``): a device name (``minisycl devices``); a SYCL device
    type with an optional index among the devices of that type (``cpu``, ``gpu``,
    ``gpu:1``, ``accelerator``); or one term of ``ONEAPI_DEVICE_SELECTOR``,
    ``backend:device`` with backend ``native_cpu``, ``cuda``, ... or ``*`` and device
    ``*``, a type or an index among the backend's devices (``cuda:0``, ``*:gpu``,
    ``native_cpu:cpu``).  A malformed selector is ``errc::invalid``; one that
    matches nothing gives ``[]``."""
    devices = list(get_devices() if devices is None else devices)
    text = spec.strip()
    if not text:
        raise exception(errc.invalid, "empty device selector: name a device, a type (cpu, gpu, gpu:1) or "
                                      "backend:device (cuda:0, *:gpu)")
    named = [d for d in devices if d.name == text]
    if named:
        return named
    head, colon, tail = text.lower().partition(":")
    if not colon:
        return _typed_order(_of_type(devices, head, spec)) if head in DEVICE_TYPES else []
    if not head or not tail or ":" in tail:
        raise exception(errc.invalid, f"device selector '{spec}': expected 'type:index' or 'backend:device'")
    if head in DEVICE_TYPES:
        index = _index(tail, spec)
        if index is None:
            raise exception(errc.invalid, f"device selector '{spec}': after a device type comes an index")
        typed = _typed_order(_of_type(devices, head, spec))
        return typed[index:index + 1]
    if head != "*" and head not in BACKENDS:
        raise exception(errc.invalid, f"device selector '{spec}': '{head}' is not a backend "
                                      f"({', '.join(BACKENDS)}, *) or a device type ({', '.join(DEVICE_TYPES)})")
    ours = _typed_order(d for d in devices if head == "*" or d.backend == head)
    index = _index(tail, spec)
    if index is not None:
        return ours[index:index + 1]
    return _of_type(ours, tail, spec)


def default_device(selector=None) -> device:
    """``selector``: a device, a selector string (``select_devices``: a name, a
    type such as ``gpu`` or ``gpu:1``, ``cuda:0``, ``*:gpu``), or a callable
    scoring devices (SYCL's device selectors: the highest non-negative score
    wins).  Otherwise ``MINISYCL_DEVICE``, otherwise the host CPU."""
    if isinstance(selector, device):
        return selector
    require_device(selector, "device selector", optional=True)
    devices = get_devices()
    if callable(selector):
        scored = [(_score(selector, d), i, d) for i, d in enumerate(devices)]
        scored = [s for s in scored if s[0] >= 0]
        if not scored:
            raise exception(errc.runtime, "No device of requested type available.")
        return max(scored, key=lambda s: (s[0], -s[1]))[2]
    from_env = selector is None and knobs.default_device() is not None
    name = selector if selector is not None else (knobs.default_device() or HOST_CPU)
    if isinstance(name, str):
        found = select_devices(name, devices)
        if found:
            return found[0]
    known = ", ".join(d.name for d in devices) or "none"
    broken = [str(p) for p in config_problems() if f"{name}.yaml:" in str(p)]
    why = f" (its config is broken: {broken[0]})" if broken else ""
    selector_like = isinstance(name, str) and (":" in name or name.strip().lower() in DEVICE_TYPES)
    what = "selects no device" if selector_like else "is not a device"
    if from_env:
        # DPC++ with a device selector that matches nothing: errc::runtime
        raise exception(errc.runtime, f"No device of requested type available: MINISYCL_DEVICE names "
                                      f"'{name}', which {what}{why}; devices: {known}")
    if selector_like:
        raise exception(errc.runtime, f"No device of requested type available: '{name}' selects no device; "
                                      f"devices: {known}")
    raise exception(errc.runtime, f"no device named '{name}'{why}; devices: {known}")


def _score(selector, d: device) -> int:
    """A device selector's score of ``d``: an integer (SYCL's selectors return ``int``)."""
    score = selector(d)
    if isinstance(score, (bool, np.bool_)) or not isinstance(score, (int, np.integer)):
        raise exception(errc.invalid, f"a device selector must return an integer score, got "
                                      f"{type(score).__name__} {score!r:.60}")
    return int(score)


class context:  # noqa: N801 - SYCL's name
    """``sycl::context``: what device-global allocations and built programs belong
    to.  Queues share one default context per device unless given another.

    ``context(devices)``: a device, a selector, or a list of devices of one
    backend (several GPUs, or several CPU devices); DPC++ refuses devices of
    different platforms in one context, and so does this (``errc::invalid``)."""

    _next = 0

    def __init__(self, dev: "device | str | list | tuple | None" = None):
        if isinstance(dev, (list, tuple)):
            if not dev:
                raise exception(errc.invalid, "a context needs at least one device")
            devices = [default_device(d) if not isinstance(d, device) else d for d in dev]
            if len({d.backend for d in devices}) > 1:
                raise exception(errc.invalid, "Can't add devices across platforms to a single context: "
                                              + ", ".join(f"{d.name} ({d.backend})" for d in devices))
            self.devices = list(dict.fromkeys(devices))
        else:
            self.devices = [default_device(dev)]
        context._next += 1
        self.id = context._next

    def get_devices(self) -> list[device]:
        return list(self.devices)

    def __repr__(self):
        return f"<context {self.id} of {', '.join(d.name for d in self.devices)}>"


register_kind("device", device)
register_kind("context", context)
_DEFAULT_CONTEXTS: dict[str, context] = {}


def default_context(dev: device) -> context:
    ctx = _DEFAULT_CONTEXTS.get(dev.name)
    if ctx is None:
        ctx = _DEFAULT_CONTEXTS[dev.name] = context(dev)
    return ctx
