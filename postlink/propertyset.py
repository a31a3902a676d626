"""Property sets and their ``.prop`` files, byte-compatible with LLVM's
``PropertySetIO`` (``docs/formats.md``, "Property sets").

A file is ``[Set name]`` lines, each followed by ``key=type|value`` lines; sets
and keys keep insertion order and the first value of a key wins.  Type 1 is a
decimal uint32, type 2 a byte array: an 8-byte little-endian *bit* count, the
payload, then LLVM's own Base64 (LSB-first, no padding), which differs from
RFC 4648 base64.
"""
from __future__ import annotations

import binascii
import functools
import re
import struct

from ..passes.support.diagnostics import UserError
from ..passes.support.numbers import parse_int

__all__ = ["encode_base64", "decode_base64", "byte_array", "PropertySets", "PropertyError",
           "u32_array", "u64_array", "string_value", "u32_values", "u64_values", "UINT32", "BYTE_ARRAY"]

UINT32, BYTE_ARRAY = 1, 2
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_NOT_BASE64 = re.compile(r"[^A-Za-z0-9+/]")


class PropertyError(UserError):
    """A malformed ``.prop`` file or value."""


# LLVM's Base64 reads every 3 bytes (24 bits) as 4 characters, lowest six bits
# first; RFC 4648 base64 (the same alphabet) reads them highest first.  So
# reversing the bytes, encoding with ``binascii`` and reversing the characters
# is LLVM's encoding, in linear time at C speed (a loop over one big integer,
# as before, was quadratic: a 1 MB value took a minute).

def encode_base64(data: bytes) -> str:
    """LLVM's ``Base64::encode``: the bytes as one little-endian number, six bits
    per character from the lowest, no padding."""
    if len(data) <= 64:
        return _encoded_small(bytes(data))
    return _encoded(data)


@functools.lru_cache(maxsize=4096)
def _encoded_small(data: bytes) -> str:
    """``encode_base64`` of a small value, remembered: the same few values (an
    aspect list, a set name) recur in the ``.prop`` file of nearly every image."""
    return _encoded(data)


def _encoded(data: bytes) -> str:
    pad = -len(data) % 3                # zero bytes above the value: characters dropped below
    text = binascii.b2a_base64(bytes(reversed(data + b"\0" * pad)), newline=False).decode("ascii")
    return text[::-1][:(len(data) * 8 + 5) // 6]


def decode_base64(text: str) -> bytes:
    if len(text) % 4 == 1:
        raise PropertyError(f"invalid base64 length {len(text)} in '{text[:20]}'")
    bad = _NOT_BASE64.search(text)
    if bad:
        raise PropertyError(f"invalid base64 character {bad.group()!r} in '{text[:20]}'")
    pad = -len(text) % 4                # 'A's are zero bits above the value
    raw = binascii.a2b_base64((text + "A" * pad)[::-1])
    return raw[::-1][:len(text) * 6 // 8]


def byte_array(payload: bytes, bits: int | None = None) -> bytes:
    """Raw property bytes: 8-byte little-endian size in bits, then the payload."""
    return struct.pack("<Q", len(payload) * 8 if bits is None else bits) + payload


def u32_array(values) -> bytes:
    return byte_array(b"".join(struct.pack("<I", v & 0xFFFFFFFF) for v in values))


def u64_array(values) -> bytes:
    return byte_array(b"".join(struct.pack("<Q", v) for v in values))


def string_value(text: str) -> bytes:
    return byte_array(text.encode())


def u32_values(raw: bytes) -> list[int]:
    """The numbers of a ``u32_array`` value (the inverse of ``u32_array``)."""
    payload = PropertySets.payload(raw)
    return list(struct.unpack(f"<{len(payload) // 4}I", payload[:len(payload) // 4 * 4]))


def u64_values(raw: bytes) -> list[int]:
    payload = PropertySets.payload(raw)
    return list(struct.unpack(f"<{len(payload) // 8}Q", payload[:len(payload) // 8 * 8]))


class PropertySets:
    """Ordered ``{set name: {key: (type, value)}}``; value is an int (type 1) or raw bytes (type 2)."""

    def __init__(self):
        self.sets: dict[str, dict[str, tuple[int, int | bytes]]] = {}

    def add(self, set_name: str, key: str, value: int | bool | bytes) -> None:
        """Add a key (first value wins, as with upstream's MapVector::insert)."""
        entries = self.sets.setdefault(set_name, {})
        if key in entries:
            return
        if isinstance(value, (bytes, bytearray)):
            entries[key] = (BYTE_ARRAY, bytes(value))
        else:
            entries[key] = (UINT32, int(value))

    def get(self, set_name: str, key: str):
        entry = self.sets.get(set_name, {}).get(key)
        return None if entry is None else entry[1]

    def __contains__(self, set_name: str) -> bool:
        return set_name in self.sets

    def text(self) -> str:
        out = []
        for name, entries in self.sets.items():
            out.append(f"[{name}]\n")
            for key, (kind, value) in entries.items():
                shown = str(value) if kind == UINT32 else encode_base64(value)
                out.append(f"{key}={kind}|{shown}\n")
        return "".join(out)

    @classmethod
    def parse(cls, text: str, source: str = "<properties>") -> "PropertySets":
        """Read a ``.prop`` file; errors name the file and line.  A uint32 is
        ASCII digits below 2**32; a byte array is LLVM Base64 of at least its
        8-byte bit count, and that count fits the bytes that follow it."""
        props, current = cls(), None
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line:
                continue
            where = f"{source}:{lineno}"
            if line.startswith("["):
                if not line.endswith("]") or len(line) < 3:
                    raise PropertyError(f"{where}: malformed set name line '{line[:80]}'")
                current = line[1:-1]
                props.sets.setdefault(current, {})
                continue
            key, eq, rest = line.partition("=")
            kind, bar, value = rest.partition("|")
            if current is None or not eq or not bar or not key or not value:
                raise PropertyError(f"{where}: malformed property line '{line[:80]}'")
            if kind == "1":
                n = parse_int(value, 10, 32)
                if n is None:
                    raise PropertyError(f"{where}: '{key[:80]}' is not a uint32: '{value[:80]}'")
                props.add(current, key, n)
            elif kind == "2":
                try:
                    raw = decode_base64(value)
                except PropertyError as err:
                    raise PropertyError(f"{where}: {err}") from None
                if len(raw) < 8:
                    raise PropertyError(f"{where}: '{key[:80]}': a byte array starts with its 8-byte size")
                bits = struct.unpack_from("<Q", raw)[0]
                if bits > (len(raw) - 8) * 8:
                    raise PropertyError(f"{where}: '{key[:80]}': size {bits} bits is more than the "
                                        f"{len(raw) - 8} bytes that follow")
                props.add(current, key, raw)
            else:
                raise PropertyError(f"{where}: unknown property type '{kind[:20]}'")
        return props

    @staticmethod
    def payload(raw: bytes) -> bytes:
        """The payload of a byte-array value (without the bit-count prefix)."""
        bits = struct.unpack_from("<Q", raw)[0]
        return raw[8:8 + (bits + 7) // 8]
