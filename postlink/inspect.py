"""Readable views of a bundle for ``minisycl inspect`` (text and JSON): property
values decoded (aspect numbers with names, strings, integers)."""
from __future__ import annotations

import struct

from ..device_configs.aspects import aspect_name
from .bundle import Bundle
from .propertyset import BYTE_ARRAY, PropertySets, u32_values, u64_values

_U32_KEYS = {"aspects", "fixed_target", "reqd_work_group_size"}
_U64_KEYS = {"reqd_work_group_size_uint64_t"}


def decode(set_name: str, key: str, kind: int, value):
    """A property value as plain data."""
    if kind != BYTE_ARRAY:
        return value
    if key in _U32_KEYS:
        nums = u32_values(value)
        return [{"value": n, "name": aspect_name(n)} for n in nums] if key in ("aspects", "fixed_target") else nums
    if key in _U64_KEYS:
        return u64_values(value)
    payload = PropertySets.payload(value)
    if set_name == "SYCL/device globals" and len(payload) == 8:
        size, scope = struct.unpack("<II", payload)
        return {"size": size, "device_image_scope": bool(scope)}
    try:
        return payload.decode()
    except UnicodeDecodeError:
        return payload.hex()


def describe(bundle: Bundle) -> dict:
    images = []
    for im in bundle.images:
        props = {s: {k: decode(s, k, kind, v) for k, (kind, v) in entries.items()}
                 for s, entries in im.properties.sets.items()}
        images.append({"name": im.name, "target": im.target, "dummy": im.dummy, "entry_points": im.entry_points,
                       "ir_bytes": len(im.ir), "native_bytes": len(im.native) if im.native else 0,
                       "properties": props})
    return {"split": bundle.split, "targets": bundle.targets, "host_bytes": len(bundle.host),
            "kernels": bundle.kernels, "device_globals": bundle.device_globals, "images": images}


def _show(value) -> str:
    if isinstance(value, list) and value and isinstance(value[0], dict) and "name" in value[0]:
        return ", ".join(f"{v['name']} ({v['value']})" for v in value) or "(none)"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "(none)"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def render_text(path: str, info: dict) -> str:
    out = [f"{path}: minisycl bundle, split={info['split']}, "
           f"targets: {', '.join(info['targets']) or '(JIT only)'}; host module {info['host_bytes']} bytes"]
    out.append("kernels:")
    out += [f"  {k}({sig})" for k, sig in info["kernels"].items()] or ["  (none)"]
    out.append("device globals:")
    access = {0: "read", 1: "write", 2: "read_write", 3: "none"}
    out += [f"  {uid}: {g['name']}, {g['size']} bytes, image scope {'yes' if g['device_image_scope'] else 'no'}, "
            f"host access {access.get(g['host_access'], g['host_access'])}"
            + (f", init_mode {({'0': 'reprogram', '1': 'reset'}).get(g['init_mode'], g['init_mode'])}"
               if g.get("init_mode") is not None else "")
            + (f", implement_in_csr {g['implement_in_csr']}" if g.get("implement_in_csr") is not None else "")
            for uid, g in info["device_globals"].items()] or ["  (none)"]
    out.append("images:")
    for i, im in enumerate(info["images"]):
        kind = f"AOT {im['target']}" if im["target"] else ("JIT dummy" if im["dummy"] else "JIT")
        native = f", native {im['native_bytes']} bytes" if im["native_bytes"] else ""
        out.append(f"  [{i}] {im['name']} ({kind}; IR {im['ir_bytes']} bytes{native})")
        out.append(f"      entry points: {', '.join(im['entry_points']) or '(none)'}")
        for s, entries in im["properties"].items():
            out.append(f"      [{s}]")
            out += [f"        {k} = {_show(v)}" for k, v in entries.items()]
    return "\n".join(out)
