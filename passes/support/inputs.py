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

__all__ = ["read_input", "check_input", "NOT_REGULAR"]

#: What a path that is not a regular file is called in messages.
NOT_REGULAR = {stat.S_IFDIR: "a directory", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
               stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket"}


#: How much of a file that reports size 0 (``/proc``, ``/sys``) is read.
_UNSIZED = 1 << 26


def _refusal(mode: int, what: str, path) -> OSError:
    """The error for a path that is not a regular file: the OS's own for a
    directory (``Is a directory``), else what the path is."""
    if stat.S_ISDIR(mode):
        return IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    kind = NOT_REGULAR.get(stat.S_IFMT(mode), "a special file")
    return OSError(errno.EINVAL, f"is {kind}, not a regular file ({what} expected)", path)


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
            raise _refusal(st.st_mode, what, path)
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


def check_input(path: str | bytes, what: str = "file") -> None:
    """Raise the ``OSError`` that ``read_input`` would for a path that is
    missing or not a regular file, without opening it: commands check all
    their inputs before they start work."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise _refusal(st.st_mode, what, path)
