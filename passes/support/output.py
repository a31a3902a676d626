"""Writing a command's outputs: all or nothing, never destroying what the user did not ask us to write.

What is at an output path decides how it is written (as ``cc -o`` and ``cp`` do):

* nothing, or a regular file: the data goes to a temporary file in the same
  folder, which is renamed over the path once every output of the command is
  written, so a failed run leaves each path as it was and never a half-written
  file.  The new file gets the mode the umask gives (``0666 & ~umask``).
* a symbolic link: it is followed (through every link); what it ends at is
  written as above, and the link itself stays.
* anything else that can be opened for writing (a character device such as
  ``/dev/null``, a FIFO, ``-`` and ``/dev/stdout``): written in place, after the
  regular files, and never replaced or removed.
* a folder, or a path whose folder is missing: an error naming the path the
  user gave; no command makes folders.

Every ``OSError`` raised here names the user's path, never a temporary file.
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile

__all__ = ["write_output", "write_files", "destination"]


def write_output(path: str, data: bytes | str) -> None:
    """Write one output (see the module docstring)."""
    write_files([(path, data)])


def write_files(outputs: list[tuple[str, bytes | str]]) -> None:
    """Write several outputs all or nothing (see the module docstring)."""
    replaced, in_place = [], []
    folders: dict[str, str] = {}            # each folder resolved once (post-link writes thousands of files)
    for path, data in outputs:
        raw = data.encode() if isinstance(data, str) else data
        with _naming(path):
            target = destination(path, folders)
        (in_place if target is None else replaced).append((path, target, raw))
    temps: list[str] = []
    done = 0
    mode = 0o666 & ~_umask() if replaced else 0
    try:
        for path, target, raw in replaced:
            with _naming(path):
                fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target) or ".", prefix=".minisycl-")
                temps.append(tmp)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(raw)
                    os.fchmod(fh.fileno(), mode)
        for (path, target, _), tmp in zip(replaced, temps):
            with _naming(path):
                os.replace(tmp, target)
            done += 1
    finally:
        for tmp in temps[done:]:
            if os.path.lexists(tmp):
                os.unlink(tmp)
    for path, _, raw in in_place:
        with _naming(path):
            if path == "-":
                sys.stdout.flush()
                sys.stdout.buffer.write(raw)
                sys.stdout.buffer.flush()
            else:
                with open(path, "wb") as fh:
                    fh.write(raw)


def destination(path: str, folders: dict[str, str] | None = None) -> str | None:
    """The file to replace for ``path`` (links followed), or None to write it in
    place; ``OSError`` naming ``path`` when it cannot be written.  ``folders``:
    the folders already resolved by this caller (folder -> its real path)."""
    if path == "-":
        return None
    try:
        st = os.stat(path)                      # follows links
    except FileNotFoundError:
        head, tail = os.path.split(path)
        if folders is not None and head in folders and tail not in ("", ".", "..") and not os.path.islink(path):
            return os.path.join(folders[head], tail)    # a new file in a folder resolved before
        target = os.path.realpath(path)         # a new file, or a dangling link's target
        folder = os.path.dirname(target)
        if not os.path.isdir(folder):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path) from None
        if folders is not None and tail not in ("", ".", "..") and target == os.path.join(folder, tail):
            folders[head] = folder
        return target
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if stat.S_ISREG(st.st_mode):
        return os.path.realpath(path)
    return None


@contextlib.contextmanager
def _naming(path: str):
    """An ``OSError`` inside names ``path`` (not a temporary file, or nothing)."""
    try:
        yield
    except OSError as err:
        if err.filename == path or err.errno is None:
            raise
        raise type(err)(err.errno, err.strerror, path) from None


def _umask() -> int:
    """The process's umask now: read from ``/proc`` where it can be, since
    ``os.umask`` can only be read by setting it (racy with other threads)."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
