"""``minisycl devices`` (like ``sycl-ls``) and ``minisycl run`` (a host script with a bundle)."""
from __future__ import annotations

import os
import runpy
import sys
import warnings

import click

from ..passes.support.cli import run_guarded
from .device import ConfigWarning, config_problems, default_device, get_devices, info, skipped_config
from .errors import exception


@click.command("devices")
@click.option("-v", "--verbose", is_flag=True,
              help="Also list each device's aspects and its info::device values (device.get_info).")
def devices_cmd(verbose):
    """List the devices the runtime offers (MINISYCL_DEVICE picks the default).
    A broken device-config file is reported as a warning and skipped."""
    def body():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConfigWarning)     # shown here, as one list
            problems = config_problems()
        for problem in problems:
            click.echo(skipped_config(problem), err=True)
        try:
            default = default_device()
        except exception as err:
            click.echo(f"minisycl: error: {err}", err=True)
            raise SystemExit(1) from None
        for i, d in enumerate(get_devices()):
            mark = "*" if d == default else " "
            click.echo(f"{mark}[minisycl:{i}] {d.name}: {d.vendor}"
                       f" ({'cpu' if d.is_cpu() else 'gpu' if d.is_gpu() else 'device'})"
                       + (f" [{d.describe()}]" if d.describe() else ""))
            if verbose:
                click.echo(f"      aspects: {', '.join(sorted(a.name for a in d.aspects)) or '(none)'}")
                for param in info.DEVICE:
                    click.echo(f"      {param}: {_shown(d.get_info(param))}")
    run_guarded(body)


def _shown(value) -> str:
    return ", ".join(map(str, value)) or "(none)" if isinstance(value, list) else str(value)


def _user_traceback(err: BaseException, script: str) -> str:
    """The traceback of ``err`` from the user's script on: the frames of
    ``minisycl run`` and ``runpy`` above it are left out."""
    import traceback
    tb = err.__traceback__
    target = os.path.realpath(script)
    while tb is not None and os.path.realpath(tb.tb_frame.f_code.co_filename) != target:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(err), err, tb or err.__traceback__))


def _raised_inside_minisycl(err: BaseException) -> bool:
    """Whether the innermost frame of ``err`` is minisycl's own code (a bug of
    ours: every misuse of the API is meant to raise ``sycl.exception``)."""
    tb = err.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return False
    import sys
    packages = [os.path.realpath(p) + os.sep for name, mod in list(sys.modules.items())
                if name.startswith("minisycl.") for p in getattr(mod, "__path__", None) or []]
    return os.path.realpath(tb.tb_frame.f_code.co_filename).startswith(tuple(packages))


@click.command("run", context_settings={"ignore_unknown_options": True})
@click.argument("script", type=click.Path(exists=True, dir_okay=False))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def run_cmd(script, args):
    """Run a Python host SCRIPT (it loads bundles with minisycl.runtime.load_bundle).
    A runtime exception (sycl.exception) is reported as one line, any other
    exception of the script with the script's own traceback; both exit with
    status 1."""
    def body():
        from ..passes.support.inputs import check_input
        check_input(script, "Python script")        # runpy would read /dev/zero forever
        sys.argv = [script, *args]
        try:
            runpy.run_path(script, run_name="__main__")
        except exception as err:
            click.echo(f"minisycl: error: {err.code().name}: {err}", err=True)
            sys.exit(1)
        except (SystemExit, KeyboardInterrupt):
            raise
        except Exception as err:  # noqa: BLE001 - the user's script failed: show them where
            if _raised_inside_minisycl(err):
                raise                           # our bug: run_guarded's internal-error report
            click.echo(_user_traceback(err, script), err=True, nl=False)
            sys.exit(1)
    run_guarded(body)
