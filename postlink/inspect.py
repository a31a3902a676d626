"""Readable views for ``minisycl inspect`` (text and JSON) of a bundle, of a
``sycl-post-link`` file table with the images, ``.prop`` and ``.sym`` files it
lists, and of one ``.prop`` file: property values decoded (aspect numbers with
names, strings, integers).

Every input is checked before it is shown: a bundle by its schema and each of
its bitcode blobs by LLVM in a child process (``check_bitcode``), a table's
columns and rows, each image it lists through the IR layer's ``load``, and
``.prop`` files by their parser; the first problem is one ``UserError``.
"""
from __future__ import annotations

import os
import struct

from ..device_configs.aspects import aspect_name
from ..passes.support.diagnostics import UserError
from ..passes.support.signature import parse as parse_signature
from ..passes.support.inputs import check_input, read_input
from .bundle import MAGIC, Bundle
from .propertyset import BYTE_ARRAY, PropertySets, u32_values, u64_values
from ..passes.support.ir_contract import (DEVICE_GLOBALS, FIXED_TARGET_KEY, REQD_WG_SIZE_U64_KEY,
                                          REQD_WORK_GROUP_SIZE)

__all__ = ["describe", "render_text", "check_bitcode", "read_any", "describe_table", "describe_properties",
           "TableError"]
_TABLE_COLUMNS = ("Code", "Properties", "Symbols")


class TableError(UserError):
    """A malformed ``sycl-post-link`` file table."""

_U32_KEYS = {"aspects", FIXED_TARGET_KEY, REQD_WORK_GROUP_SIZE}
_U64_KEYS = {REQD_WG_SIZE_U64_KEY}


def decode(set_name: str, key: str, kind: int, value):
    """A property value as plain data."""
    if kind != BYTE_ARRAY:
        return value
    if key in _U32_KEYS:
        nums = u32_values(value)
        return [{"value": n, "name": aspect_name(n)} for n in nums] if key in ("aspects", FIXED_TARGET_KEY) else nums
    if key in _U64_KEYS:
        return u64_values(value)
    payload = PropertySets.payload(value)
    if set_name == DEVICE_GLOBALS and len(payload) == 8:
        size, scope = struct.unpack("<II", payload)
        return {"size": size, "device_image_scope": bool(scope)}
    try:
        return payload.decode()
    except UnicodeDecodeError:
        return payload.hex()


def _decoded(props: PropertySets) -> dict:
    return {s: {k: decode(s, k, kind, v) for k, (kind, v) in entries.items()} for s, entries in props.sets.items()}


def check_bitcode(bundle: Bundle, source: str) -> None:
    """Have LLVM read and verify every image's and the host module's bitcode,
    each in a child process (corrupt bitcode behind a valid checksum is one
    error, never an abort)."""
    from ..passes.ir.loading import read_untrusted_bitcode
    blobs = [(im.ir, f"{source}: image '{im.name}'") for im in bundle.images]
    if bundle.host:
        blobs.append((bundle.host, f"{source}: host module"))
    for data, what in blobs:
        read_untrusted_bitcode(data, what, lambda text: None)


def describe(bundle: Bundle) -> dict:
    images = []
    for im in bundle.images:
        props = _decoded(im.properties)
        images.append({"name": im.name, "target": im.target, "dummy": im.dummy, "entry_points": im.entry_points,
                       "ir_bytes": len(im.ir), "native_bytes": len(im.native) if im.native else 0,
                       "properties": props})
    return {"kind": "bundle", "split": bundle.split, "targets": bundle.targets, "host_bytes": len(bundle.host),
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
    out += [f"  {k}({', '.join(p.text for p in parse_signature(sig).params)})"
            for k, sig in info["kernels"].items()] or ["  (none)"]
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



# -- post-link's outputs ---------------------------------------------------------------------

def _read_text(path: str, what: str, errors: str = "strict") -> str:
    """The file's text; ``errors="surrogateescape"`` for text made of file names,
    which may be any bytes the OS takes (a table's rows)."""
    try:
        data = read_input(path, what=what)
    except OSError as err:
        raise OSError(err.errno, err.strerror, path) from None
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        col = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise TableError(f"{path}:{line}:{col}: not a {what} (byte 0x{data[err.start]:02x} is not UTF-8)") from None


def _listed(path: str, table: str) -> str:
    """A file a table names: as written (post-link writes paths as it was given
    them), else beside the table."""
    if os.path.isabs(path) or os.path.exists(path):
        return path
    beside = os.path.join(os.path.dirname(table), os.path.basename(path))
    return beside if os.path.exists(beside) else path


def describe_table(path: str) -> dict:
    """A file table (``[Code|Properties|Symbols]`` and a row per image) with
    what each listed file holds; every listed file must exist and be valid."""
    from ..passes.ir import load
    lines = _read_text(path, "file table", "surrogateescape").splitlines()
    if not lines or not lines[0].startswith("[") or not lines[0].endswith("]"):
        raise TableError(f"{path}:1: not a file table: expected a '[Code|...]' header line")
    columns = lines[0][1:-1].split("|")
    if columns[0] != "Code" or len(set(columns)) != len(columns) or not set(columns) <= set(_TABLE_COLUMNS):
        raise TableError(f"{path}:1: unknown table columns '{lines[0][:80]}' "
                         f"(expected Code, then Properties and/or Symbols)")
    images = []
    for lineno, line in enumerate(lines[1:], 2):
        cells = line.split("|")
        if len(cells) != len(columns) or not all(cells):
            raise TableError(f"{path}:{lineno}: expected {len(columns)} non-empty columns, got '{line[:80]}'")
        row = dict(zip(columns, (_listed(c, path) for c in cells)))
        module = load(row["Code"])
        image = {"code": cells[0], "ir_bytes": os.path.getsize(row["Code"]),
                 "functions": sum(1 for f in module.functions.values() if not f.is_declaration)}
        if "Symbols" in row:
            image["entry_points"] = [s for s in _read_text(row["Symbols"], "symbol file").splitlines() if s]
        if "Properties" in row:
            props = PropertySets.parse(_read_text(row["Properties"], "property file"), row["Properties"])
            image["properties"] = _decoded(props)
        images.append(image)
    return {"kind": "table", "columns": columns, "images": images}


def describe_properties(path: str) -> dict:
    return {"kind": "properties",
            "properties": _decoded(PropertySets.parse(_read_text(path, "property file"), path))}


def read_any(path: str) -> dict:
    """What ``minisycl inspect`` shows of ``path``: a bundle (by its magic), a
    ``.table`` or a ``.prop`` file (by their name or first line)."""
    check_input(path, "bundle, table or property file")
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(MAGIC))
    except OSError as err:
        raise OSError(err.errno, err.strerror, path) from None
    if head != MAGIC and (path.endswith(".table") or head.startswith(b"[Code")):
        return describe_table(path)
    if head != MAGIC and (path.endswith(".prop") or head.startswith(b"[")):
        return describe_properties(path)
    bundle = Bundle.read(path)
    check_bitcode(bundle, path)
    return describe(bundle)


def _render_sets(props: dict, indent: str) -> list[str]:
    out = []
    for s, entries in props.items():
        out.append(f"{indent}[{s}]")
        out += [f"{indent}  {k} = {_show(v)}" for k, v in entries.items()]
    return out


def render_any(path: str, info: dict) -> str:
    if info["kind"] == "bundle":
        return render_text(path, info)
    if info["kind"] == "properties":
        return "\n".join([f"{path}: property sets"] + (_render_sets(info["properties"], "  ") or ["  (none)"]))
    out = [f"{path}: sycl-post-link file table [{'|'.join(info['columns'])}], {len(info['images'])} image"
           f"{'s' if len(info['images']) != 1 else ''}"]
    for i, im in enumerate(info["images"]):
        out.append(f"  [{i}] {im['code']} (IR {im['ir_bytes']} bytes, {im['functions']} functions)")
        if "entry_points" in im:
            out.append(f"      entry points: {', '.join(im['entry_points']) or '(none)'}")
        out += _render_sets(im.get("properties", {}), "      ")
    return "\n".join(out)
