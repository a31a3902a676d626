"""Reading the files a user names, with a bound.

Every reader of a path a user gives (sources, IR, bundles, tables, ``.prop``
and ``.sym`` files, device configs) opens it through ``read_input``: a
directory, a device such as ``/dev/zero``, a FIFO or a socket is refused with
a message instead of being read forever or blocking, and a regular file is
read up to a limit (the file's size as ``fstat`` gives it, and the caller's
``limit``), so one call costs time and memory bounded by the file.
"""
from __future__ import annotations

import errno
import os
import stat

__all__ = ["read_input", "is_readable_file", "NOT_REGULAR"]

#: What a path that is not a regular file is called in messages.
NOT_REGULAR = {stat.S_IFDIR: "a directory", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
               stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket"}


#: How much of a file that reports size 0 (``/proc``, ``/sys``) is read.
_UNSIZED = 1 << 26


def _kind(mode: int) -> str:
    return NOT_REGULAR.get(stat.S_IFMT(mode), "not a regular file")


def read_input(path: str | bytes, limit: int | None = None, what: str = "file") -> bytes:
    """The bytes of the regular file ``path``.  Raises ``OSError`` (with the
    path as its filename, so callers' ``err.strerror`` messages name it) when
    the file cannot be opened, is not a regular file, or holds more than
    ``limit`` bytes."""
    # O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever;
    # it is refused below, before any read.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, f"is {_kind(st.st_mode)}, not a regular {what}", path)
        if limit is not None and st.st_size > limit:
            raise OSError(errno.EFBIG, f"is {st.st_size} bytes; a {what} is at most {limit} bytes", path)
        # A regular file can grow while it is read, or report size 0 as /proc
        # files do: read what it held when opened (or, for size 0, up to
        # ``_UNSIZED``), and with a ``limit``, one byte more to see it exceeded.
        bound = st.st_size if st.st_size > 0 else _UNSIZED
        if limit is not None:
            bound = min(bound, limit + 1)
        chunks, total = [], 0
        while total < bound:
            chunk = os.read(fd, min(bound - total, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if limit is not None and total > limit:
            raise OSError(errno.EFBIG, f"is more than {limit} bytes; a {what} is at most {limit} bytes", path)
        return b"".join(chunks)
    finally:
        os.close(fd)


def is_readable_file(path: str | bytes) -> bool:
    """Whether ``path`` is a regular file (what ``read_input`` accepts), by
    ``stat`` of the path without opening it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False
