"""Devices: one per device config marked ``runtime-device: true``, each running
code on this machine's CPU through LLVM's JIT and reporting exactly its config's
aspects; ``minisycl_cpu`` is the host CPU and the default device."""
from __future__ import annotations

import functools

from ..passes.support import knobs
from ..device_configs.aspects import Aspect
from ..device_configs.targets import TargetInfo, load_target, target_names
from .errors import errc, exception

__all__ = ["device", "context", "get_devices", "default_device", "default_context", "aspect", "HOST_CPU"]

aspect = Aspect            # sycl::aspect is the compiler's aspect table, the same object
HOST_CPU = "minisycl_cpu"


class device:  # noqa: N801 - SYCL's name
    def __init__(self, config: TargetInfo):
        self.config = config
        self.name = config.name
        self._aspects = frozenset(Aspect[a] for a in config.aspects)

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
        return self.has(Aspect.gpu) or self.name.startswith(("intel_gpu", "nvidia_gpu", "amd_gpu"))

    def __repr__(self):
        return f"<device {self.name}>"

    def __eq__(self, other):
        return isinstance(other, device) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


@functools.lru_cache(maxsize=None)
def get_devices() -> tuple[device, ...]:
    """The host CPU first, then every config marked as a runtime device."""
    names = [HOST_CPU] + [n for n in target_names() if n != HOST_CPU and load_target(n).runtime_device]
    return tuple(device(load_target(n)) for n in names)


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
    name = selector or knobs.default_device() or HOST_CPU
    for d in devices:
        if d.name == name:
            return d
    raise exception(errc.runtime, f"no device named '{name}'; devices: {', '.join(d.name for d in devices)}")


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
