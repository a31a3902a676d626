"""Writing a command's outputs: all or nothing, naming the user's path on failure."""
from __future__ import annotations

import contextlib
import errno
import functools
import os
import sys
import tempfile

__all__ = ["write_output", "write_files"]


def write_output(path: str, data: bytes | str) -> None:
    """Write ``data`` atomically: a failed run never leaves a half-written file."""
    write_files([(path, data)])


def write_files(outputs: list[tuple[str, bytes | str]]) -> None:
    """Write several outputs all or nothing: each goes to a temporary file
    beside it, and only when every one is written are they renamed into place
    (``-``, standard output, last).  A failure leaves every output path as it
    was and no temporary file behind; its ``OSError`` names the output path.
    Files get the usual mode (``0666`` less the umask), as a compiler's do."""
    files = [(path, data) for path, data in outputs if path != "-"]
    temps: list[str] = []
    try:
        for path, data in files:
            with _naming(path):
                if os.path.isdir(path):
                    raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
                fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".minisycl-")
                temps.append(tmp)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data.encode() if isinstance(data, str) else data)
                os.chmod(tmp, 0o666 & ~_umask())
        for (path, _), tmp in zip(files, temps):
            with _naming(path):
                os.replace(tmp, path)
    finally:
        for tmp in temps:
            if os.path.exists(tmp):
                os.unlink(tmp)
    for path, data in outputs:
        if path == "-":
            if isinstance(data, bytes):
                sys.stdout.buffer.write(data)
            else:
                sys.stdout.write(data)


@contextlib.contextmanager
def _naming(path: str):
    """An ``OSError`` inside names ``path`` (not a temporary file, or nothing)."""
    try:
        yield
    except OSError as err:
        if err.filename == path or err.errno is None:
            raise
        raise OSError(err.errno, err.strerror, path) from None


@functools.lru_cache(maxsize=None)
def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
