"""Entries of the runtime's disk cache: checked before use, written whole.

The CPU JIT keeps object code (``<cache dir>/objects/<key>.o``) and the CUDA
back end PTX (``<cache dir>/ptx/<key>.ptx``) between processes.  LLVM's
object loader trusts an object: a truncated or damaged one aborts the process,
and it would do so on every later run until someone deleted the file.  So each
entry is a header - a magic string, the payload's length and its SHA-256 -
followed by the payload, and ``read_entry`` returns the payload only when all
three agree; anything else (a file from an older version, a truncated or
damaged one, one that cannot be read) is a miss, and the caller rebuilds and
overwrites it.  ``write_entry`` writes a temporary file beside the entry and
renames it, so a reader sees the old entry or the whole new one, never half.
A cache folder that cannot be written only costs speed.
"""
from __future__ import annotations

import hashlib
import os
import struct
import threading

__all__ = ["read_entry", "write_entry"]

_MAGIC = b"minisycl-cache-1\n"
_HEAD = struct.Struct("<Q32s")          # payload length, SHA-256 of the payload
#: entries larger than this are not read (none of ours comes near it)
_LIMIT = 1 << 31


def read_entry(path: str | None) -> bytes | None:
    """The payload of the entry at ``path``, or ``None`` (no entry, or one that
    is not whole and ours)."""
    if path is None:
        return None
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(_MAGIC) + _HEAD.size)
            if len(head) != len(_MAGIC) + _HEAD.size or not head.startswith(_MAGIC):
                return None
            size, digest = _HEAD.unpack_from(head, len(_MAGIC))
            if size > _LIMIT:
                return None
            data = fh.read(size + 1)
    except OSError:
        return None
    if len(data) != size or hashlib.sha256(data).digest() != digest:
        return None
    return data


def write_entry(path: str | None, data: bytes) -> None:
    """Store ``data`` as the entry at ``path`` (atomically; errors ignored)."""
    if path is None:
        return
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(_MAGIC + _HEAD.pack(len(data), hashlib.sha256(data).digest()) + data)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
