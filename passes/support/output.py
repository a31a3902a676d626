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

Before anything is written, ``write_files`` checks the whole planned set
(``check_outputs``): no output may be one of the command's inputs or another
of its outputs.  Paths are compared as files, not strings: by device and inode
(``os.stat``, links followed) when the file exists, else by the real path
(links followed) it would be created at, so ``a.ksl``, ``./a.ksl`` and a link
to it are one file.  Only regular files (and paths not there yet) take part:
writing a device, a FIFO or standard output destroys nothing, so
``--host-output /dev/null -o /dev/null`` stays usable.  Every command writes
through ``write_files`` and must name its inputs (``inputs=``), so no command
can skip the check.

A path is a ``str`` (bytes that are not UTF-8 carried as surrogates, as
``os.fsdecode`` and click give them) or ``bytes``; text data is encoded with
``surrogateescape`` so a file name written into a table keeps its bytes.
``shown`` prints a path safely in a message.  Every ``OSError`` raised here
names the user's path, never a temporary file.
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile

__all__ = ["write_output", "write_files", "destination", "check_outputs", "shown"]


def write_output(path: str, data: bytes | str, *, inputs) -> None:
    """Write one output (see the module docstring)."""
    write_files([(path, data)], inputs=inputs)


def write_files(outputs: list[tuple[str, bytes | str]], *, inputs) -> None:
    """Write several outputs all or nothing, after ``check_outputs(paths, inputs)``
    (see the module docstring)."""
    check_outputs([path for path, _ in outputs], inputs)
    outputs = [(os.fsdecode(path), data) for path, data in outputs]
    replaced, in_place = [], []
    folders: dict[str, str] = {}            # each folder resolved once (post-link writes thousands of files)
    for path, data in outputs:
        raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
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


def check_outputs(outputs, inputs) -> None:
    """``UserError`` naming both paths if an output is one of ``inputs`` or the
    same file as another output (see the module docstring); ``-`` (standard
    input or output) and files that are not regular take no part."""
    from .diagnostics import UserError
    seen: dict[object, tuple[str, str]] = {}
    for role, paths in (("input", inputs), ("output", outputs)):
        for path in paths:
            key = _identity(path)
            if key is None:
                continue
            if key in seen:
                other_role, other = seen[key]
                if role == "output":
                    why = "it would destroy the input" if other_role == "input" else "both would be lost but one"
                    raise UserError(f"output {shown(path)} is the same file as {other_role} {shown(other)}: "
                                    f"refusing to write it ({why})")
                continue                    # the same input twice is fine
            seen[key] = (role, path)


def _identity(path) -> object | None:
    """What names a file: (device, inode) when it exists, its real path when not;
    ``None`` for ``-`` and files that are not regular (written in place)."""
    path = os.fsdecode(path)
    if path == "-":
        return None
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return ("path", os.path.realpath(path))
    except (OSError, ValueError):
        return None                         # unreadable: ``destination`` reports it when written
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def shown(path, quote: bool = True) -> str:
    """``path`` for a message: bytes that are not UTF-8 and control characters as
    escapes (``'\\xff.ll'``), whatever the terminal; quoted unless ``quote`` is false."""
    out = []
    for ch in os.fsdecode(path):
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:        # a byte that is not UTF-8 (surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code < 0x20 or code == 0x7F or 0xD800 <= code <= 0xDFFF:
            out.append(ch.encode("unicode_escape").decode("ascii"))
        elif quote and ch in "'\\":
            out.append("\\" + ch)
        else:
            out.append(ch)
    text = "".join(out)
    return f"'{text}'" if quote else text


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
