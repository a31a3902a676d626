"""Device configurations (AOT targets and runtime devices) from ``device_configs/*.yaml``.

One YAML file per target, named like DPC++'s ``DeviceConfigFile.td`` entries
(``intel_gpu_pvc``, ``nvidia_gpu_sm_80``...), with the keys of
``DeviceConfigFile.md``: ``aspects``, ``may_support_other_aspects``,
``sub-group-sizes``, ``aot-toolchain``, ``aot-toolchain-ocloc-device``, plus
minisycl's ``runtime-device: true`` for the targets the runtime offers as devices
and ``local-mem-size`` (bytes of work-group memory, ``info::device::local_mem_size``;
65536 when absent, DPC++'s usual value for Intel GPUs).
Aspect names are checked against the one aspect table (``aspects.py``).

A file is untrusted input: it must be UTF-8, a mapping without duplicate keys,
each value of its key's kind (a list of names, a list of positive integers, a
boolean, a string) and nothing nested deeper; every problem is one
``ConfigError`` rendered as ``file:line:col: error: ...`` from the YAML marks.
The folder is ``MINISYCL_DEVICE_CONFIGS`` when set, else this package's;
``load_all`` reads every file of it, keeping the broken ones' errors apart so
one bad file does not hide the others.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import yaml

from . import aspects as aspect_table
from ..passes.support import knobs
from ..passes.support.diagnostics import UserError
from ..passes.support.inputs import read_input
from ..passes.support.numbers import parse_int

__all__ = ["TargetInfo", "ConfigError", "load_target", "load_file", "load_all", "target_names", "is_config_path",
           "CONFIG_DIR"]

CONFIG_DIR = os.path.dirname(os.path.abspath(__file__))
_KEYS = {"aspects", "may_support_other_aspects", "sub-group-sizes", "aot-toolchain", "aot-toolchain-ocloc-device",
         "runtime-device", "local-mem-size"}
DEFAULT_LOCAL_MEM_SIZE = 65536
#: the largest sub-group size a config may declare (properties store it as a uint32)
MAX_SUB_GROUP_SIZE = 2**31 - 1
#: a device config is a few hundred bytes; anything far larger is not one
MAX_FILE_BYTES = 1 << 20
_PLAIN_TAGS = {"tag:yaml.org,2002:" + t for t in ("str", "int", "bool", "null", "float", "seq", "map")}


class ConfigError(UserError):
    """A device config file is missing or malformed, or a target is unknown.

    ``str()`` is the message with its ``file:line:col: error:`` prefix when it
    has a place; ``render()`` adds ``minisycl: error:`` only when it has none."""

    def __init__(self, message: str, located: bool = False):
        super().__init__(message)
        self.located = located

    def render(self) -> str:
        return str(self) if self.located else super().render()


def _error_at(path: str, line: int, col: int, message: str) -> ConfigError:
    return ConfigError(f"{path}:{line}:{col}: error: {message}", located=True)


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
    chosen = knobs.device_configs_dir()
    if chosen:
        return chosen
    if os.path.isdir(CONFIG_DIR):
        return CONFIG_DIR
    from importlib import resources
    return str(resources.files("minisycl.device_configs"))


def target_names() -> list[str]:
    try:
        return sorted(f[:-5] for f in os.listdir(_config_dir()) if f.endswith(".yaml"))
    except OSError as err:
        raise ConfigError(f"device config folder {_config_dir()}: {err.strerror}") from None


def is_config_path(target: str) -> bool:
    """Whether a ``--target`` value names a YAML file rather than a target."""
    return target.endswith((".yaml", ".yml")) or os.sep in target or "/" in target


@functools.lru_cache(maxsize=None)
def load_target(name: str) -> TargetInfo:
    """The config of target ``name``, or of the YAML file ``name`` names (a path,
    as DPC++'s ``-fsycl-device-config-file``); an unknown name lists the known ones."""
    if is_config_path(name):
        return load_file(name)
    path = os.path.join(_config_dir(), name + ".yaml")
    if not os.path.exists(path):
        raise ConfigError(f"unknown target '{name}'; known targets: {', '.join(target_names())}")
    return load_file(path, name)


def load_all() -> tuple[list[TargetInfo], list[ConfigError]]:
    """Every config of the folder, and the errors of those that are broken."""
    configs, errors = [], []
    for name in target_names():
        try:
            configs.append(load_target(name))
        except ConfigError as err:
            errors.append(err)
    return configs, errors


def _read_text(path: str) -> str:
    """The file as text; bytes that are not UTF-8 are an error at their place."""
    try:
        data = read_input(path, MAX_FILE_BYTES, "device config")
    except OSError as err:
        raise ConfigError(f"{path}: {err.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        col = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise _error_at(path, line, col, f"invalid UTF-8 byte 0x{data[err.start]:02x}") from None


def _compose(path: str, text: str):
    try:
        return yaml.compose(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise _error_at(path, line, col, f"invalid YAML: {getattr(err, 'problem', None) or err}") from None
    except RecursionError:
        raise _error_at(path, 1, 1, "invalid YAML: nested too deeply") from None


def load_file(path: str, name: str | None = None) -> TargetInfo:
    """Read and check one device config (see the module docstring)."""
    name = name or os.path.splitext(os.path.basename(path))[0]
    node = _compose(path, _read_text(path))

    def fail(n, message):
        raise _error_at(path, n.start_mark.line + 1, n.start_mark.column + 1, message)

    def scalar(n, key, what):
        if not isinstance(n, yaml.ScalarNode) or n.tag not in _PLAIN_TAGS:
            fail(n, f"'{key}' must be {what}")
        return n.value

    def items(n, key, what):
        if not isinstance(n, yaml.SequenceNode) or n.tag not in _PLAIN_TAGS:
            fail(n, f"'{key}' must be a list of {what}")
        return n.value

    if node is None or not isinstance(node, yaml.MappingNode) or node.tag not in _PLAIN_TAGS:
        raise _error_at(path, 1, 1, "a device config is a mapping of keys to values")
    fields: dict = {}
    seen: dict[str, yaml.Node] = {}
    for key_node, value in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            fail(key_node, "a key must be a plain name")
        key = key_node.value
        if key not in _KEYS:
            fail(key_node, f"unknown key '{key}' (expected one of: {', '.join(sorted(_KEYS))})")
        if key in seen:
            fail(key_node, f"duplicate key '{key}' (first given at line {seen[key].start_mark.line + 1})")
        seen[key] = key_node
        if key == "aspects":
            names = []
            for item in items(value, key, "aspect names"):
                text = scalar(item, key, "a list of aspect names")
                found = aspect_table.lookup(text)
                if found is None:
                    fail(item, f"unknown aspect '{text}' in 'aspects'")
                names.append(found.name)
            fields["aspects"] = tuple(names)
        elif key == "sub-group-sizes":
            sizes = []
            for item in items(value, key, "positive integers"):
                text = scalar(item, key, "a list of positive integers")
                n = parse_int(text)
                if n is None or not 0 < n <= MAX_SUB_GROUP_SIZE:
                    fail(item, f"'sub-group-sizes' must be a list of positive integers (at most "
                               f"{MAX_SUB_GROUP_SIZE}), not '{text[:40]}'")
                sizes.append(n)
            fields["sub_group_sizes"] = tuple(sizes)
        elif key in ("may_support_other_aspects", "runtime-device"):
            if scalar(value, key, "true or false") not in ("true", "false"):
                fail(value, f"'{key}' must be true or false")
            fields[key.replace("-", "_")] = value.value == "true"
        elif key == "local-mem-size":
            text = scalar(value, key, "a positive integer (bytes)")
            n = parse_int(text)
            if n is None or not 0 < n < 2**63:
                fail(value, f"'local-mem-size' must be a positive integer (bytes), not '{text[:40]}'")
            fields["local_mem_size"] = n
        elif key == "aot-toolchain":
            fields["aot_toolchain"] = scalar(value, key, "a string")
        else:
            fields["aot_toolchain_options"] = f"-device {scalar(value, key, 'a string')}"
    if "aspects" not in fields:
        raise _error_at(path, 1, 1, "missing required key 'aspects'")
    return TargetInfo(name=name, path=path, **fields)
