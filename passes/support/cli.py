"""The ``minisycl`` command line: a thin click shell around the library.

Exit status: 0 success; 1 user error (diagnostics, bad input files);
2 usage error (click); 3 internal error (a bug in minisycl; rerun with
MINISYCL_DEBUG=1 for the traceback).

Commands are plugins (``plugins.py``): the module that defines one registers it
as an entry point in ``pyproject.toml``, and a command's module is imported only
when it is used, so ``minisycl compile`` never loads the runtime.
"""
from __future__ import annotations

import sys

import click

from . import knobs, plugins
from .diagnostics import UserError
from .gc_pause import gc_paused

INTERNAL_ERROR = 3

def commands() -> dict[str, str]:
    """command name -> "module:attribute", as the command modules registered them."""
    try:
        return plugins.registered(plugins.COMMANDS)
    except UserError as err:
        raise click.ClickException(str(err)) from None


class LazyGroup(click.Group):
    def parse_args(self, ctx, args):
        ctx.meta["minisycl.argv"] = list(args)      # for the internal-error report's command line
        return super().parse_args(ctx, args)

    def list_commands(self, ctx):
        return sorted(commands())

    def get_command(self, ctx, name):
        target = commands().get(name)
        return None if target is None else plugins.load(target)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="minisycl")
def main():
    """minisycl: a small SYCL-style toolchain (kernel language, IR passes, post-link, runtime).

    Exit status: 0 ok, 1 user error, 2 usage error, 3 internal error.
    """


def entry() -> None:
    """The ``minisycl`` console script: ``main`` with the cyclic garbage
    collector paused for the whole command (see ``gc_pause.gc_paused``)."""
    with gc_paused(freeze=True):
        main()


def run_guarded(fn, *args):
    """Run a command body: user errors → diagnostics + exit 1, bugs → short report + exit 3.

    The exit happens after the error is handled, not inside its ``except``: the
    error's frames (and the LLVM modules they hold) are released at once, not
    left in reference cycles for the collector, which may dispose of an LLVM
    context before its module."""
    from .diagnostics import CompileError, UserError, printable_lines
    try:
        return fn(*args)
    except CompileError as err:
        report, status = f"{err.render()}\n{err.summary()}", 1
    except UserError as err:
        report, status = err.render(), 1
    except OSError as err:
        from .output import shown
        report, status = f"minisycl: error: {shown(err.filename or '', quote=False)}: {err.strerror or err}", 1
    except (click.ClickException, SystemExit, KeyboardInterrupt):
        raise
    except Exception as err:  # noqa: BLE001 - the documented internal-error path
        if knobs.debug():
            raise
        report = (f"minisycl: internal error: {type(err).__name__}: {err}\n"
                  f"  reproduce with: MINISYCL_DEBUG=1 {_command_line()}")
        status = INTERNAL_ERROR
    click.echo(printable_lines(report), err=True)      # (a file name or message may hold control bytes)
    sys.exit(status)


def _command_line() -> str:
    """The command as the user can type it again (``minisycl`` and its arguments,
    quoted for the shell), whatever a command did to ``sys.argv`` since."""
    import shlex
    ctx = click.get_current_context(silent=True)
    argv = ctx.find_root().meta.get("minisycl.argv") if ctx is not None else None
    return shlex.join(["minisycl", *(argv if argv is not None else sys.argv[1:])])


if __name__ == "__main__":
    main()
