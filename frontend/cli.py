"""``minisycl compile``: kernel-language sources to one LLVM IR module."""
from __future__ import annotations

import os

import click

from ..passes.support.cli import run_guarded
from ..passes.support.output import write_output


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
