"""The bundle: one file holding everything the runtime needs from a build.

Layout (all integers little-endian)::

    b"MSYCLBND"  u32 format version  u32 header length  header (JSON, UTF-8)
    blobs (image IR, native objects, host module), addressed from the header as [offset, size]
    SHA-256 of everything before it (32 bytes)

The header lists the images (entry points, ``.prop`` text, target, IR blob,
native object blob), the host module, kernel signatures and the device-global
table.  A truncated, corrupted, foreign or newer file is refused with one clear
``BundleError``; so is a whole file whose header breaks the schema
(``check_header``: every field's type, every number's bounds, nothing nested
where it should not be, blobs inside the file and starting as bitcode) or whose
properties the runtime could not read (``check_properties``).  Whether the
bitcode inside a blob is sound is LLVM's to say: the runtime reads it in a child
process when an image is first used, and ``minisycl inspect`` reads them all.
"""
from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass, field

from ..passes.support.diagnostics import UserError
from ..passes.support.signature import MAX_TEXT as MAX_SIGNATURE_TEXT, SignatureError, parse as parse_signature
from ..passes.support.inputs import read_input
from .propertyset import BYTE_ARRAY, PropertyError, PropertySets
from ..passes.support.ir_contract import (CALLS_VF_SET_KEY, CREATES_VF_SET_KEY, DEVICE_REQUIREMENTS, USES_VF_SET_KEY,
                                          VF_SET_KEY, VIRTUAL_FUNCTIONS)

__all__ = ["Bundle", "BundleImage", "BundleError", "FORMAT_VERSION", "MAGIC", "check_header", "check_properties",
           "MAX_DEVICE_GLOBAL_BYTES"]

MAGIC = b"MSYCLBND"
#: 2: kernel signatures in ``passes/support/signature.py``'s form (a struct by value
#: spelled with its size; a kernel from LLVM IR with the signature its IR implies)
FORMAT_VERSION = 2
_HEAD = struct.Struct("<8sII")


class BundleError(UserError):
    """A file that is not a valid bundle of this format version."""


@dataclass
class BundleImage:
    name: str
    entry_points: list[str]
    properties: PropertySets
    ir: bytes                         # LLVM bitcode
    target: str | None = None         # None: JIT image
    native: bytes | None = None       # AOT: native object code for the target
    dummy: bool = False


@dataclass
class Bundle:
    images: list[BundleImage] = field(default_factory=list)
    host: bytes = b""                                       # host module bitcode
    kernels: dict[str, str] = field(default_factory=dict)   # kernel -> parameter signature
    device_globals: dict[str, dict] = field(default_factory=dict)   # unique id -> facts
    split: str = "none"
    targets: list[str] = field(default_factory=list)
    layouts: dict[str, dict] = field(default_factory=dict)   # class -> {size, align, base, fields}

    def to_bytes(self) -> bytes:
        blobs: list[bytes] = []
        offset = 0

        def put(data: bytes | None):
            nonlocal offset
            if data is None:
                return None
            blobs.append(data)
            offset += len(data)
            return [offset - len(data), len(data)]

        images = [{"name": im.name, "entry_points": im.entry_points, "properties": im.properties.text(),
                   "target": im.target, "dummy": im.dummy, "ir": put(im.ir), "native": put(im.native)}
                  for im in self.images]
        header = json.dumps({"images": images, "host": put(self.host), "kernels": self.kernels,
                             "device_globals": self.device_globals, "split": self.split,
                             "targets": self.targets, "layouts": self.layouts}, sort_keys=True, separators=(",", ":")).encode()
        body = _HEAD.pack(MAGIC, FORMAT_VERSION, len(header)) + header + b"".join(blobs)
        return body + hashlib.sha256(body).digest()

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "<bundle>") -> "Bundle":
        """Read a bundle; anything but a whole, valid bundle of this version is
        one ``BundleError`` (the header is checked against ``check_header``'s
        schema before any of it is used)."""
        if len(data) < _HEAD.size + 32 or data[:8] != MAGIC:
            raise BundleError(f"{source}: not a minisycl bundle")
        _, version, hlen = _HEAD.unpack_from(data)
        if version != FORMAT_VERSION:
            raise BundleError(f"{source}: bundle format version {version} is not supported "
                              f"(this minisycl reads version {FORMAT_VERSION})")
        body, digest = data[:-32], data[-32:]
        if hashlib.sha256(body).digest() != digest:
            raise BundleError(f"{source}: bundle is truncated or corrupted (checksum mismatch)")
        if hlen > len(body) - _HEAD.size:
            raise BundleError(f"{source}: malformed bundle header (its length {hlen} runs past the file)")
        try:
            header = json.loads(body[_HEAD.size:_HEAD.size + hlen].decode("utf-8"))
        except (ValueError, RecursionError) as err:     # UnicodeDecodeError and JSONDecodeError are ValueErrors
            raise BundleError(f"{source}: malformed bundle header (not JSON: {str(err)[:120]})") from None
        blobs = memoryview(body)[_HEAD.size + hlen:]
        check_header(header, len(blobs), source, blobs)

        def get(ref):
            return None if ref is None else bytes(blobs[ref[0]:ref[0] + ref[1]])

        try:
            images = [BundleImage(im["name"], list(im["entry_points"]),
                                  PropertySets.parse(im["properties"], f"{source}: image '{im['name']}'"),
                                  get(im["ir"]), im["target"], get(im["native"]), im["dummy"])
                      for im in header["images"]]
        except PropertyError as err:
            raise BundleError(str(err)) from None
        for im in images:
            check_properties(im.properties, f"{source}: image '{im.name}'")
        return cls(images, get(header["host"]) or b"", dict(header["kernels"]), dict(header["device_globals"]),
                   header["split"], list(header["targets"]), dict(header.get("layouts") or {}))

    @classmethod
    def read(cls, path: str) -> "Bundle":
        try:
            data = read_input(path, what="bundle")
        except OSError as err:
            raise BundleError(f"{path}: {err.strerror}") from None
        return cls.from_bytes(data, path)


# -- the header's schema ---------------------------------------------------------------------

#: a device global's size is a uint32 in ``[SYCL/device globals]`` (docs/formats.md), so no larger here
MAX_DEVICE_GLOBAL_BYTES = 0xFFFFFFFF
_MAX_TEXT = 1 << 16              # a name, a signature, a target: far below this
_MAX_ITEMS = 1 << 20             # images, entry points, kernels, device globals
_SPLIT_MODES = ("kernel", "source", "auto", "none")
_BITCODE_MAGICS = (b"BC\xc0\xde", b"\xde\xc0\x17\x0b")     # raw bitcode, and the bitcode wrapper
_IMAGE_KEYS = {"name", "entry_points", "properties", "target", "dummy", "ir", "native"}
_HEADER_KEYS = {"images", "host", "kernels", "device_globals", "split", "targets", "layouts"}
_GLOBAL_KEYS = {"name", "size", "element_size", "element_type", "device_image_scope", "host_access", "init_mode",
                "implement_in_csr", "init", "properties", "relocations"}


class _Checker:
    """Checks one header; ``fail`` raises the ``BundleError`` naming the field."""

    def __init__(self, source: str, blob_size: int):
        self.source, self.blob_size = source, blob_size

    def fail(self, where: str, problem: str):
        raise BundleError(f"{self.source}: malformed bundle header: {where}: {problem}")

    def mapping(self, value, where: str, keys: set[str] | None = None, optional: set[str] = frozenset()) -> dict:
        if not isinstance(value, dict):
            self.fail(where, f"expected an object, got {_kind(value)}")
        if keys is not None:
            missing = sorted(keys - optional - value.keys())
            extra = sorted(value.keys() - keys)
            if missing:
                self.fail(where, f"missing field '{missing[0]}'")
            if extra:
                self.fail(where, f"unknown field '{extra[0][:80]}'")
        if len(value) > _MAX_ITEMS:
            self.fail(where, f"more than {_MAX_ITEMS} entries")
        return value

    def array(self, value, where: str) -> list:
        if not isinstance(value, list):
            self.fail(where, f"expected a list, got {_kind(value)}")
        if len(value) > _MAX_ITEMS:
            self.fail(where, f"more than {_MAX_ITEMS} entries")
        return value

    def text(self, value, where: str, *, empty: bool = True, limit: int = _MAX_TEXT, optional: bool = False):
        if value is None and optional:
            return None
        if not isinstance(value, str):
            self.fail(where, f"expected a string, got {_kind(value)}")
        if not value and not empty:
            self.fail(where, "is empty")
        if len(value) > limit:
            self.fail(where, f"longer than {limit} characters")
        return value

    def integer(self, value, where: str, low: int, high: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(where, f"expected an integer, got {_kind(value)}")
        if not low <= value <= high:
            self.fail(where, f"{value} is outside [{low}, {high}]")
        return value

    def flag(self, value, where: str) -> bool:
        if not isinstance(value, bool):
            self.fail(where, f"expected true or false, got {_kind(value)}")
        return value

    def blob(self, value, where: str, blobs: memoryview | None, *, bitcode: bool, optional: bool):
        if value is None and optional:
            return
        ref = self.array(value, where)
        if len(ref) != 2:
            self.fail(where, "a blob is [offset, size]")
        start = self.integer(ref[0], where + "[0]", 0, self.blob_size)
        size = self.integer(ref[1], where + "[1]", 0, self.blob_size - start)
        if bitcode and blobs is not None and size and bytes(blobs[start:start + 4]) not in _BITCODE_MAGICS:
            self.fail(where, "is not LLVM bitcode")


def _kind(value) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def check_header(header, blob_size: int, source: str = "<bundle>", blobs: memoryview | None = None) -> None:
    """Check a parsed header against the bundle schema: the fields of each
    object and nothing else, their types, integers within bounds (blob
    references inside the ``blob_size`` bytes of blobs, device globals at most
    ``MAX_DEVICE_GLOBAL_BYTES``), strings of bounded length.  Raises
    ``BundleError`` naming the first field that breaks it."""
    c = _Checker(source, blob_size)
    top = c.mapping(header, "header", _HEADER_KEYS, optional={"layouts"})
    images = c.array(top["images"], "images")
    for i, im in enumerate(images):
        where = f"images[{i}]"
        c.mapping(im, where, _IMAGE_KEYS)
        c.text(im["name"], where + ".name", empty=False)
        for j, entry in enumerate(c.array(im["entry_points"], where + ".entry_points")):
            c.text(entry, f"{where}.entry_points[{j}]", empty=False)
        c.text(im["properties"], where + ".properties", limit=1 << 30)
        c.text(im["target"], where + ".target", empty=False, optional=True)
        c.flag(im["dummy"], where + ".dummy")
        c.blob(im["ir"], where + ".ir", blobs, bitcode=True, optional=False)
        c.blob(im["native"], where + ".native", blobs, bitcode=False, optional=True)
    c.blob(top["host"], "host", blobs, bitcode=True, optional=True)
    for name, signature in c.mapping(top["kernels"], "kernels").items():
        c.text(name, "kernels", empty=False)
        try:
            parse_signature(c.text(signature, f"kernels.{name[:80]}", limit=MAX_SIGNATURE_TEXT))
        except SignatureError as err:
            c.fail(f"kernels.{name[:80]}", str(err))
    for uid, info in c.mapping(top["device_globals"], "device_globals").items():
        c.text(uid, "device_globals", empty=False)
        where = f"device_globals.{uid[:80]}"
        c.mapping(info, where, _GLOBAL_KEYS, optional={"element_size", "element_type", "init_mode", "implement_in_csr",
                                                            "init", "properties", "relocations"})
        c.text(info.get("element_type"), where + ".element_type", optional=True, limit=256)
        for i, prop in enumerate(c.array(info.get("properties") or [], where + ".properties")[:8]):
            c.text(prop, f"{where}.properties[{i}]", empty=False, limit=64)
        c.text(info["name"], where + ".name", empty=False)
        size = c.integer(info["size"], where + ".size", 0, MAX_DEVICE_GLOBAL_BYTES)
        if info.get("element_size") is not None:
            c.integer(info["element_size"], where + ".element_size", 1, max(size, 1))
        c.flag(info["device_image_scope"], where + ".device_image_scope")
        c.integer(info["host_access"], where + ".host_access", 0, 3)
        c.text(info.get("init_mode"), where + ".init_mode", optional=True, limit=64)
        c.text(info.get("implement_in_csr"), where + ".implement_in_csr", optional=True, limit=64)
        init = c.text(info.get("init"), where + ".init", optional=True, limit=2 * MAX_DEVICE_GLOBAL_BYTES)
        if init:
            if len(init) > 2 * size:
                c.fail(where + ".init", f"{len(init) // 2} bytes for a {size}-byte device global")
            try:
                bytes.fromhex(init)
            except ValueError:
                c.fail(where + ".init", "is not hexadecimal bytes")
        for i, reloc in enumerate(c.array(info.get("relocations") or [], where + ".relocations")):
            at = f"{where}.relocations[{i}]"
            if not isinstance(reloc, list) or len(reloc) != 3:
                c.fail(at, "expected [offset, symbol, addend]")
            c.integer(reloc[0], at + "[0]", 0, max(size - 8, 0))
            c.text(reloc[1], at + "[1]", empty=False)
            c.integer(reloc[2], at + "[2]", 0, 1 << 40)
    if top["split"] not in _SPLIT_MODES:
        c.fail("split", f"expected one of {', '.join(_SPLIT_MODES)}")
    for i, target in enumerate(c.array(top["targets"], "targets")):
        c.text(target, f"targets[{i}]", empty=False)
    _check_layouts(c, top.get("layouts") or {})


#: the scalar field types of a class layout (``frontend.data_layout.type_descriptor``)
LAYOUT_SCALARS = ("bool", "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "half", "float",
                  "double", "ptr")
_LAYOUT_KEYS = {"size", "align", "base", "fields"}
_MAX_CLASS_BYTES = 1 << 40
_MAX_TYPE_DEPTH = 32


def _check_layouts(c: _Checker, layouts) -> None:
    """``layouts``: class name -> ``{size, align, base: [name, offset] | null,
    fields: [[name, offset, type], ...]}``; a type is a scalar's name,
    ``["array", type, count]`` or ``["class", name]``."""
    for name, layout in c.mapping(layouts, "layouts").items():
        c.text(name, "layouts", empty=False, limit=1024)
        where = f"layouts.{name[:64]}"
        c.mapping(layout, where, _LAYOUT_KEYS)
        size = c.integer(layout["size"], where + ".size", 1, _MAX_CLASS_BYTES)
        c.integer(layout["align"], where + ".align", 1, 4096)
        if layout["base"] is not None:
            base = c.array(layout["base"], where + ".base")
            if len(base) != 2:
                c.fail(where + ".base", "expected [name, offset]")
            c.text(base[0], where + ".base[0]", empty=False, limit=1024)
            c.integer(base[1], where + ".base[1]", 0, size)
        for j, f in enumerate(c.array(layout["fields"], where + ".fields")):
            at = f"{where}.fields[{j}]"
            if not isinstance(f, list) or len(f) != 3:
                c.fail(at, "expected [name, offset, type]")
            c.text(f[0], at + "[0]", empty=False, limit=1024)
            c.integer(f[1], at + "[1]", 0, size)
            _check_field_type(c, f[2], at + "[2]", 0)


def _check_field_type(c: _Checker, ty, where: str, depth: int) -> None:
    if depth > _MAX_TYPE_DEPTH:
        c.fail(where, f"types nested more than {_MAX_TYPE_DEPTH} deep")
    if isinstance(ty, str):
        if ty not in LAYOUT_SCALARS:
            c.fail(where, f"expected one of {', '.join(LAYOUT_SCALARS)}, an array or a class")
        return
    if not isinstance(ty, list) or not ty or ty[0] not in ("array", "class"):
        c.fail(where, "expected a scalar type's name, [\"array\", type, count] or [\"class\", name]")
    if ty[0] == "class":
        if len(ty) != 2:
            c.fail(where, "expected [\"class\", name]")
        c.text(ty[1], where + "[1]", empty=False, limit=1024)
        return
    if len(ty) != 3:
        c.fail(where, "expected [\"array\", type, count]")
    c.integer(ty[2], where + "[2]", 0, _MAX_CLASS_BYTES)
    _check_field_type(c, ty[1], where + "[1]", depth + 1)


#: property sets the runtime reads from an image, and what each key's value must be
_READ_BY_RUNTIME = {(DEVICE_REQUIREMENTS, "aspects"): "u32 array",
                    **{(VIRTUAL_FUNCTIONS, key): "string"
                       for key in (VF_SET_KEY, USES_VF_SET_KEY, CALLS_VF_SET_KEY,
                                   CREATES_VF_SET_KEY)}}


def check_properties(props: PropertySets, source: str) -> None:
    """The properties the runtime reads (an image's required aspects and its
    virtual-function sets) have the form it reads them in."""
    for (set_name, key), form in _READ_BY_RUNTIME.items():
        entry = props.sets.get(set_name, {}).get(key)
        if entry is None:
            continue
        kind, value = entry
        if kind != BYTE_ARRAY:
            raise BundleError(f"{source}: [{set_name}] {key}: expected a byte array ({form})")
        payload = PropertySets.payload(value)
        if form == "u32 array" and len(payload) % 4:
            raise BundleError(f"{source}: [{set_name}] {key}: {len(payload)} bytes is not a u32 array")
        if form == "string":
            try:
                payload.decode("utf-8")
            except UnicodeDecodeError:
                raise BundleError(f"{source}: [{set_name}] {key}: not a UTF-8 string") from None
