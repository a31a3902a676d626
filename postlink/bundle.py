"""The bundle: one file holding everything the runtime needs from a build.

Layout (all integers little-endian)::

    b"MSYCLBND"  u32 format version  u32 header length  header (JSON, UTF-8)
    blobs (image IR, native objects, host module), addressed from the header as [offset, size]
    SHA-256 of everything before it (32 bytes)

The header lists the images (entry points, ``.prop`` text, target, IR blob,
native object blob), the host module, kernel signatures and the device-global
table.  A truncated, corrupted, foreign or newer file is refused with one clear
``BundleError``.
"""
from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass, field

from ..passes.support.diagnostics import UserError
from .propertyset import PropertySets

__all__ = ["Bundle", "BundleImage", "BundleError", "FORMAT_VERSION", "MAGIC"]

MAGIC = b"MSYCLBND"
FORMAT_VERSION = 1
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
                             "targets": self.targets}, sort_keys=True, separators=(",", ":")).encode()
        body = _HEAD.pack(MAGIC, FORMAT_VERSION, len(header)) + header + b"".join(blobs)
        return body + hashlib.sha256(body).digest()

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "<bundle>") -> "Bundle":
        if len(data) < _HEAD.size + 32 or data[:8] != MAGIC:
            raise BundleError(f"{source}: not a minisycl bundle")
        _, version, hlen = _HEAD.unpack_from(data)
        if version != FORMAT_VERSION:
            raise BundleError(f"{source}: bundle format version {version} is not supported "
                              f"(this minisycl reads version {FORMAT_VERSION})")
        body, digest = data[:-32], data[-32:]
        if hashlib.sha256(body).digest() != digest:
            raise BundleError(f"{source}: bundle is truncated or corrupted (checksum mismatch)")
        try:
            header = json.loads(body[_HEAD.size:_HEAD.size + hlen])
            blobs = body[_HEAD.size + hlen:]

            def get(ref):
                if ref is None:
                    return None
                start, size = ref
                if start < 0 or start + size > len(blobs):
                    raise ValueError("blob outside the file")
                return bytes(blobs[start:start + size])

            images = [BundleImage(im["name"], list(im["entry_points"]),
                                  PropertySets.parse(im["properties"], f"{source}:{im['name']}"),
                                  get(im["ir"]), im.get("target"), get(im.get("native")), bool(im.get("dummy")))
                      for im in header["images"]]
            return cls(images, get(header["host"]) or b"", dict(header["kernels"]), dict(header["device_globals"]),
                       header.get("split", "none"), list(header.get("targets", [])))
        except (ValueError, KeyError, TypeError) as err:
            raise BundleError(f"{source}: malformed bundle header ({err})") from None

    @classmethod
    def read(cls, path: str) -> "Bundle":
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as err:
            raise BundleError(f"{path}: {err.strerror}") from None
        return cls.from_bytes(data, path)
