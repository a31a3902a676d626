"""The ``minisycl`` command line: a thin click shell around the library.

Exit status: 0 success; 1 user error (diagnostics, bad input files);
2 usage error (click); 3 internal error (a bug in minisycl; rerun with
MINISYCL_DEBUG=1 for the traceback).

Commands of later stages register in ``COMMANDS`` as "module:attribute" and are
imported only when used, so ``minisycl compile`` never loads the runtime.
"""
from __future__ import annotations

import contextlib
import errno
import functools
import importlib
import os
import sys
import tempfile

import click

from . import knobs
from .collector import gc_paused

INTERNAL_ERROR = 3

#: command name -> "module:function" (lazy, like xDSL's pass registry)
COMMANDS = {
    "compile": "minisycl.frontend.driver:compile_cmd",
    "link": "minisycl.passes.cli:link_cmd",
    "opt": "minisycl.passes.cli:opt_cmd",
    "post-link": "minisycl.postlink.cli:post_link_cmd",
    "build": "minisycl.postlink.cli:build_cmd",
    "inspect": "minisycl.postlink.cli:inspect_cmd",
    "devices": "minisycl.runtime.cli:devices_cmd",
    "run": "minisycl.runtime.cli:run_cmd",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="minisycl")
def main():
    """minisycl: a small SYCL-style toolchain (kernel language, IR passes, post-link, runtime).

    Exit status: 0 ok, 1 user error, 2 usage error, 3 internal error.
    """


def entry() -> None:
    """The ``minisycl`` console script: ``main`` with the cyclic garbage
    collector paused for the whole command (see ``collector.gc_paused``)."""
    with gc_paused(freeze=True):
        main()


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


def run_guarded(fn, *args):
    """Run a command body: user errors → diagnostics + exit 1, bugs → short report + exit 3."""
    from .diagnostics import CompileError, UserError
    try:
        return fn(*args)
    except CompileError as err:
        click.echo(err.render(), err=True)
        n = sum(1 for d in err.diagnostics if d.severity == "error")
        click.echo(f"{n} error{'s' if n != 1 else ''} generated.", err=True)
        sys.exit(1)
    except UserError as err:
        click.echo(err.render(), err=True)
        sys.exit(1)
    except OSError as err:
        click.echo(f"minisycl: error: {err.filename or ''}: {err.strerror or err}", err=True)
        sys.exit(1)
    except (click.ClickException, SystemExit, KeyboardInterrupt):
        raise
    except Exception as err:  # noqa: BLE001 - the documented internal-error path
        if knobs.debug():
            raise
        cmd = " ".join(sys.argv)
        click.echo(f"minisycl: internal error: {type(err).__name__}: {err}\n"
                   f"  reproduce with: MINISYCL_DEBUG=1 {cmd}", err=True)
        sys.exit(INTERNAL_ERROR)


@click.command("compile")
@click.argument("sources", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--output", default=None, help="Output file (default: first source with .ll/.bc; '-' for stdout).")
@click.option("--emit-bc", is_flag=True, help="Write LLVM bitcode instead of IR text.")
@click.option("--check", "check_only", is_flag=True, help="Only report diagnostics; write nothing.")
@click.option("--time", "show_time", is_flag=True, help="Print the time spent in each stage to stderr.")
def compile_cmd(sources, output, emit_bc, check_only, show_time):
    """Compile kernel-language SOURCES (.ksl) to LLVM IR (one module, host and device code).

    Several sources are compiled separately and linked into one module.
    """
    def body():
        from . import compile_files
        for s in sources:
            if not os.path.isfile(s):
                raise OSError(2, "no such file", s)
        result = compile_files(list(sources))
        for w in result.warnings:
            click.echo(w.render(result.sources), err=True)
        if show_time:
            click.echo(" ".join(f"{k}={v * 1000:.1f}ms" for k, v in result.timings.items()), err=True)
        if check_only:
            return
        out = output or os.path.splitext(sources[0])[0] + (".bc" if emit_bc else ".ll")
        write_output(out, result.bitcode() if emit_bc else result.ir)

    run_guarded(body)


if __name__ == "__main__":
    main()
