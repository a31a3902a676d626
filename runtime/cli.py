"""``minisycl devices`` (like ``sycl-ls``) and ``minisycl run`` (a host script with a bundle)."""
from __future__ import annotations

import runpy
import sys

import click

from ..passes.support.cli import run_guarded
from .device import default_device, get_devices
from .errors import exception


@click.command("devices")
@click.option("-v", "--verbose", is_flag=True, help="Also list each device's aspects and sub-group sizes.")
def devices_cmd(verbose):
    """List the devices the runtime offers (MINISYCL_DEVICE picks the default)."""
    def body():
        default = default_device()
        for i, d in enumerate(get_devices()):
            mark = "*" if d == default else " "
            click.echo(f"{mark}[minisycl:{i}] {d.name}: {d.vendor}"
                       f" ({'cpu' if d.is_cpu() else 'gpu' if d.is_gpu() else 'device'})")
            if verbose:
                click.echo(f"      aspects: {', '.join(sorted(a.name for a in d.aspects)) or '(none)'}")
                click.echo(f"      sub-group sizes: {', '.join(map(str, d.sub_group_sizes)) or '(none)'}")
    run_guarded(body)


@click.command("run", context_settings={"ignore_unknown_options": True})
@click.argument("script", type=click.Path(exists=True, dir_okay=False))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def run_cmd(script, args):
    """Run a Python host SCRIPT (it loads bundles with minisycl.runtime.load_bundle).
    Runtime exceptions are reported as one line and exit status 1."""
    def body():
        sys.argv = [script, *args]
        try:
            runpy.run_path(script, run_name="__main__")
        except exception as err:
            click.echo(f"minisycl: error: {err.code().name}: {err}", err=True)
            sys.exit(1)
    run_guarded(body)
