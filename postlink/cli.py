"""``minisycl post-link``: upstream ``sycl-post-link``'s flags around ``split_module``."""
from __future__ import annotations

import click

from ..frontend.driver import run_guarded


@click.command("post-link")
@click.argument("input", default="-")
@click.option("-split", "--split", "split", type=click.Choice(["kernel", "source", "auto", "none"]), default="none",
              show_default=True, help="Device code split mode.")
@click.option("-properties", "--properties", "properties", is_flag=True, help="Write .prop files.")
@click.option("-symbols", "--symbols", "symbols", is_flag=True, help="Write .sym files (entry points).")
@click.option("-S", "text_ir", is_flag=True, help="Write images as LLVM IR text (.ll) instead of bitcode.")
@click.option("-device-globals", "--device-globals", "device_globals", is_flag=True,
              help="Write [SYCL/device globals] and check device_image_scope.")
@click.option("-emit-only-kernels-as-entry-points", "--emit-only-kernels-as-entry-points", "only_kernels",
              is_flag=True, help="Only kernels (and virtual functions) are entry points.")
@click.option("-o", "outputs", multiple=True, required=True, metavar="[TARGET,]FILE.table",
              help="Output table (repeatable; the images are shared); with TARGET, only the images "
                   "that device config can run.")
@click.option("-out-dir", "--out-dir", "out_dir", default=None, help="Directory for the images (default: the table's).")
@click.option("--vf-keys", type=click.Choice(["design", "upstream"]), default="design", show_default=True,
              help="Virtual-function property keys: the design's calls-/creates-virtual-functions-set, "
                   "or upstream's uses-virtual-functions-set.")
def post_link_cmd(input, split, properties, symbols, text_ir, device_globals, only_kernels, outputs, out_dir, vf_keys):
    """Split a device module (.ll/.bc; '-' for stdin) into device images and write
    sycl-post-link's file table, images, .prop and .sym files."""
    def body():
        from ..passes.ir import load
        from . import TableSpec, split_module, write_tables
        from .device_config import ConfigError, load_target, target_names
        # upstream: one split; each -o [TARGET,]FILE gets a table of the images
        # its target can run (a target with no device config keeps them all)
        known = set(target_names())
        tables = []
        for out in outputs:
            target, _, table = out.rpartition(",")
            if "/" in target or "\\" in target:        # it names .prop files
                raise ConfigError(f"invalid target name '{target}' in -o {out}")
            tables.append(TableSpec(table, target or None, load_target(target) if target in known else None))
        module = load(input)
        images = split_module(module, mode=split, only_kernels=only_kernels, device_globals=device_globals,
                              vf_keys=vf_keys)
        write_tables(images, tables, out_dir=out_dir, text_ir=text_ir, properties=properties, symbols=symbols)
    run_guarded(body)


@click.command("build")
@click.argument("sources", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, help="The bundle file to write.")
@click.option("--split", type=click.Choice(["kernel", "source", "auto", "none"]), default="auto", show_default=True,
              help="Device code split mode.")
@click.option("--target", "targets", multiple=True, metavar="NAME",
              help="Also build AOT images for this device config (repeatable); see device_configs/.")
@click.option("-j", "--jobs", type=int, default=None, help="Parallel AOT compile jobs (default: CPU count).")
def build_cmd(sources, output, split, targets, jobs):
    """Compile, link, run the passes and the post-link step, and write one bundle."""
    def body():
        import os
        import sys
        import time
        from ..frontend.driver import write_output
        from .build import build
        for s in sources:
            if not os.path.isfile(s):
                raise OSError(2, "no such file", s)
        start, bar = time.monotonic(), []

        def progress(done, total):
            # a progress bar on stderr, only on a terminal and only once it takes a moment
            if not bar and sys.stderr.isatty() and time.monotonic() - start > 0.5:
                bar.append(click.progressbar(length=total, label="AOT images", file=sys.stderr))
                bar[0].__enter__()
                bar[0].update(done - 1)
            if bar:
                bar[0].update(1)

        try:
            bundle, warnings = build(list(sources), split=split, targets=list(targets), progress=progress, jobs=jobs)
        finally:
            if bar:
                bar[0].__exit__(None, None, None)
        sources_text = {}
        for w in warnings:
            click.echo(w.render(sources_text), err=True)
        write_output(output, bundle.to_bytes())
    run_guarded(body)


@click.command("inspect")
@click.argument("bundle_path", metavar="BUNDLE")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def inspect_cmd(bundle_path, as_json):
    """Print a bundle's images, entry points and properties."""
    def body():
        import json
        from .bundle import Bundle
        from .inspect import describe, render_text
        info = describe(Bundle.read(bundle_path))
        click.echo(json.dumps(info, indent=2, sort_keys=True) if as_json else render_text(bundle_path, info))
    run_guarded(body)
