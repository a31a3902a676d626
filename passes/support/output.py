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

import errno
import os
import stat
import sys

__all__ = ["write_output", "write_files", "destination", "check_outputs", "shown"]


def write_output(path: str, data: bytes | str, *, inputs) -> None:
    """Write one output (see the module docstring)."""
    write_files([(path, data)], inputs=inputs)


def write_files(outputs: list[tuple[str, bytes | str]], *, inputs) -> None:
    """Write several outputs all or nothing, after ``check_outputs(paths, inputs)``
    (see the module docstring).  Each folder is resolved once (post-link
    writes thousands of files into one).  A file's data may also be a
    function that returns it, called when that file is written, in order: a
    caller writes the files whose data is ready while the rest is still being
    made (post-link's images, as LLVM writes their bitcode); an exception it
    raises leaves every path as it was, as any failure does."""
    folders = _Folders()
    check_outputs([path for path, _ in outputs], inputs, folders)
    replaced, in_place = [], []
    path = None
    try:
        for path, data in outputs:
            path = os.fsdecode(path)
            target = destination(path, folders)
            (in_place if target is None else replaced).append((path, target, data))
        path = None
        _replace_all(replaced)
        for path, _, data in in_place:
            raw = _bytes(data)
            if path == "-":
                sys.stdout.flush()
                sys.stdout.buffer.write(raw)
                sys.stdout.buffer.flush()
            else:
                with open(path, "wb") as fh:
                    fh.write(raw)
    except OSError as err:
        if path is None or not _renamed(err, path):
            raise
        raise _naming(err, path) from None


#: a temporary file: created here, never through a link, not inherited by children
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | \
    getattr(os, "O_BINARY", 0)


def _replace_all(replaced: list[tuple[str, str, object]]) -> None:
    """Each ``(path, target, data)``: ``data`` into a temporary file beside
    ``target``, then every temporary renamed over its target; on a failure
    the temporaries made are removed and no target is touched."""
    temps: list[str] = []
    done = 0
    mode = 0o666 & ~_umask() if replaced else 0
    token = os.urandom(4).hex()
    path = None
    try:
        for path, target, data in replaced:
            raw = _bytes(data)
            fd, tmp, token = _temporary(os.path.dirname(target) or ".", len(temps), token)
            temps.append(tmp)
            try:
                view = memoryview(raw)
                while view:
                    view = view[os.write(fd, view):]
                os.fchmod(fd, mode)
            finally:
                os.close(fd)
        for (path, target, _), tmp in zip(replaced, temps):
            os.replace(tmp, target)
            done += 1
    except OSError as err:
        if path is None or not _renamed(err, path):
            raise
        raise _naming(err, path) from None
    finally:
        for tmp in temps[done:]:
            if os.path.lexists(tmp):
                os.unlink(tmp)


def _bytes(data) -> bytes:
    """A file's data as bytes (text encoded keeping its bytes; a function called)."""
    if callable(data):
        data = data()
    return data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data


def _temporary(folder: str, serial: int, token: str) -> tuple[int, str, str]:
    """A new file ``.minisycl-<token>-<serial>`` in ``folder`` (mode 0600 until
    written): ``(fd, its path, the token used)``; a name taken makes a new
    token."""
    for _ in range(100):
        tmp = os.path.join(folder, f".minisycl-{token}-{serial}")
        try:
            return os.open(tmp, _TEMP_FLAGS, 0o600), tmp, token
        except FileExistsError:
            token = os.urandom(4).hex()
    raise FileExistsError(errno.EEXIST, "no unused temporary file name", os.path.join(folder, ".minisycl-*"))


def check_outputs(outputs, inputs, folders: dict[str, str] | None = None) -> None:
    """``UserError`` naming both paths if an output is one of ``inputs`` or the
    same file as another output (see the module docstring); ``-`` (standard
    input or output) and files that are not regular take no part.
    ``folders``: as for ``destination``."""
    from .diagnostics import UserError
    seen: dict[object, tuple[str, str]] = {}
    folders = {} if folders is None else folders
    for role, paths in (("input", inputs), ("output", outputs)):
        for path in paths:
            key = _identity(path, folders)
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


def _identity(path, folders: dict[str, str]) -> object | None:
    """What names a file: (device, inode) when it exists, its real path when not;
    ``None`` for ``-`` and files that are not regular (written in place)."""
    path = os.fsdecode(path)
    if path == "-":
        return None
    try:
        st = _probe(path, folders)
    except NotADirectoryError:
        st = None
    except (OSError, ValueError):
        return None                         # unreadable: ``destination`` reports it when written
    if st is None:
        return ("path", _real_path(path, folders)[0])
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
    st = _probe(path, folders)                  # follows links
    if st is None:
        target, known = _real_path(path, folders)   # a new file, or a dangling link's target
        if not known and not os.path.isdir(os.path.dirname(target)):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
        return target
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if stat.S_ISREG(st.st_mode):
        return os.path.realpath(path)
    return None


class _Folders(dict):
    """Folder as given -> its real path (an existing folder), and, in
    ``paths``, what ``_real_path`` found for each path, in ``probes`` what
    ``_probe`` found (``write_files`` asks twice: the output check, then the
    destination)."""

    def __init__(self):
        super().__init__()
        self.paths: dict[str, tuple[str, bool]] = {}
        self.probes: dict[str, os.stat_result | None] = {}


def _probe(path: str, folders) -> os.stat_result | None:
    """``os.stat(path)`` (links followed), or None where that finds no file
    (nothing there, or a dangling link); other errors raised.  With
    ``_Folders``, asked once per path, and a path where nothing is at all
    (the common case: a new output) costs one ``lstat``, which also tells
    ``_real_path`` that no link is there."""
    probes = getattr(folders, "probes", None)
    if probes is None:
        try:
            return os.stat(path)
        except FileNotFoundError:
            return None
    if path in probes:
        return probes[path]
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        probes[path] = None
        return None
    if stat.S_ISLNK(st.st_mode):
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None                     # a dangling link (not memoized: it is a link)
    probes[path] = st
    return st


def _real_path(path: str, folders: dict[str, str] | None) -> tuple[str, bool]:
    """``os.path.realpath`` of a ``path`` that names no file (or a dangling
    link), and whether its folder was known: resolved once per ``folders``
    (folder as given -> its real path, an existing folder), a plain new name
    in a known folder is that folder's real path and the name."""
    memo = getattr(folders, "paths", None)
    if memo is not None and path in memo:
        return memo[path]
    head, tail = os.path.split(path)
    if folders is not None and head in folders and tail not in ("", ".", "..") and \
            (getattr(folders, "probes", {}).get(path, 0) is None or not os.path.islink(path)):   # (nothing there)
        found = os.path.join(folders[head], tail), True
    else:
        target = os.path.realpath(path)
        folder = os.path.dirname(target)
        if folders is not None and tail not in ("", ".", "..") and target == os.path.join(folder, tail) and \
                os.path.isdir(folder):
            folders[head] = folder
        found = target, False
    if memo is not None:
        memo[path] = found
    return found


def _renamed(err: OSError, path: str) -> bool:
    """Whether ``err`` must be raised again naming ``path`` (it names another
    file, a temporary one, or none)."""
    return not (err.filename == path or err.errno is None)


def _naming(err: OSError, path: str) -> OSError:
    """``err`` naming ``path`` (not a temporary file, or nothing)."""
    return type(err)(err.errno, err.strerror, path)


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
