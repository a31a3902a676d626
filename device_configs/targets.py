"""Device configurations (AOT targets and runtime devices) from ``device_configs/*.yaml``.

One YAML file per target, named like DPC++'s ``DeviceConfigFile.td`` entries
(``intel_gpu_pvc``, ``nvidia_gpu_sm_80``...), with the keys of
``DeviceConfigFile.md``: ``aspects``, ``may_support_other_aspects``,
``sub-group-sizes``, ``aot-toolchain``, ``aot-toolchain-ocloc-device``, plus
minisycl's ``runtime-device: true`` for the targets the runtime offers as devices
and ``local-mem-size`` (bytes of work-group memory, ``info::device::local_mem_size``;
65536 when absent, DPC++'s usual value for Intel GPUs).
Aspect names are checked against the one aspect table (``frontend/aspects.py``);
every problem is reported as ``file:line:col: error: ...`` from the YAML marks.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import yaml

from . import aspects as aspect_table
from ..passes.support.diagnostics import UserError

__all__ = ["TargetInfo", "ConfigError", "load_target", "load_file", "target_names", "CONFIG_DIR"]

CONFIG_DIR = os.path.dirname(os.path.abspath(__file__))
_KEYS = {"aspects", "may_support_other_aspects", "sub-group-sizes", "aot-toolchain", "aot-toolchain-ocloc-device",
         "runtime-device", "local-mem-size"}
DEFAULT_LOCAL_MEM_SIZE = 65536


class ConfigError(UserError):
    """A device config file is missing or malformed, or a target is unknown."""


@dataclass(frozen=True)
class TargetInfo:
    name: str
    aspects: tuple[str, ...]
    may_support_other_aspects: bool = False
    sub_group_sizes: tuple[int, ...] = ()
    aot_toolchain: str = ""
    aot_toolchain_options: str = ""
    #: minisycl's own key: the runtime offers a device that behaves like this target
    runtime_device: bool = False
    path: str = ""
    #: minisycl's own key: bytes of work-group memory per work-group
    local_mem_size: int = DEFAULT_LOCAL_MEM_SIZE

    def supports(self, aspect_names) -> bool:
        return set(aspect_names) <= set(self.aspects)


def _config_dir() -> str:
    if os.path.isdir(CONFIG_DIR):
        return CONFIG_DIR
    from importlib import resources
    return str(resources.files("minisycl.device_configs"))


def target_names() -> list[str]:
    return sorted(f[:-5] for f in os.listdir(_config_dir()) if f.endswith(".yaml"))


@functools.lru_cache(maxsize=None)
def load_target(name: str) -> TargetInfo:
    """The config of target ``name``; an unknown name lists the known ones."""
    path = os.path.join(_config_dir(), name + ".yaml")
    if not os.path.isfile(path):
        raise ConfigError(f"unknown target '{name}'; known targets: {', '.join(target_names())}")
    return load_file(path, name)


def load_file(path: str, name: str | None = None) -> TargetInfo:
    name = name or os.path.splitext(os.path.basename(path))[0]
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        node = yaml.compose(text)
    except OSError as err:
        raise ConfigError(f"{path}: {err.strerror}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else path
        raise ConfigError(f"{where}: error: invalid YAML: {getattr(err, 'problem', err)}") from None

    def fail(n, message):
        raise ConfigError(f"{path}:{n.start_mark.line + 1}:{n.start_mark.column + 1}: error: {message}")

    if node is None or not isinstance(node, yaml.MappingNode):
        raise ConfigError(f"{path}:1:1: error: a device config is a mapping of keys to values")
    fields: dict = {}
    for key_node, value in node.value:
        key = key_node.value
        if key not in _KEYS:
            fail(key_node, f"unknown key '{key}' (expected one of: {', '.join(sorted(_KEYS))})")
        if key == "aspects":
            if not isinstance(value, yaml.SequenceNode):
                fail(value, "'aspects' must be a list of aspect names")
            names = []
            for item in value.value:
                if aspect_table.lookup(item.value) is None:
                    fail(item, f"unknown aspect '{item.value}' in 'aspects'")
                names.append(aspect_table.lookup(item.value).name)
            fields["aspects"] = tuple(names)
        elif key == "sub-group-sizes":
            if not isinstance(value, yaml.SequenceNode) or not all(v.value.isdigit() for v in value.value):
                fail(value, "'sub-group-sizes' must be a list of positive integers")
            fields["sub_group_sizes"] = tuple(int(v.value) for v in value.value)
        elif key in ("may_support_other_aspects", "runtime-device"):
            if value.value not in ("true", "false"):
                fail(value, f"'{key}' must be true or false")
            fields[key.replace("-", "_")] = value.value == "true"
        elif key == "local-mem-size":
            if not isinstance(value, yaml.ScalarNode) or not value.value.isdigit() or int(value.value) == 0:
                fail(value, "'local-mem-size' must be a positive integer (bytes)")
            fields["local_mem_size"] = int(value.value)
        elif key == "aot-toolchain":
            fields["aot_toolchain"] = value.value
        else:
            fields["aot_toolchain_options"] = f"-device {value.value}"
    if "aspects" not in fields:
        raise ConfigError(f"{path}:1:1: error: missing required key 'aspects'")
    return TargetInfo(name=name, path=path, **fields)
