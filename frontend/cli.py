"""``minisycl compile``: kernel-language sources to one LLVM IR module."""
from __future__ import annotations

import os
import sys

import click

from ..passes.support.cli import run_guarded
from ..passes.support.output import write_output


@click.command("compile")
@click.argument("sources", nargs=-1, required=True, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-o", "--output", default=None,
              help="Output file (default: first source with .ll/.bc, standard output for '-'; '-' for stdout).")
@click.option("--emit-bc", is_flag=True, help="Write LLVM bitcode instead of IR text.")
@click.option("--check", "check_only", is_flag=True, help="Only report diagnostics; write nothing.")
@click.option("--time", "show_time", is_flag=True, help="Print the time spent in each stage to stderr.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar (it shows on a terminal after a second).")
def compile_cmd(sources, output, emit_bc, check_only, show_time, quiet):
    """Compile kernel-language SOURCES (.ksl) to LLVM IR (one module, host and device code).

    Several sources are compiled separately and linked into one module;
    '-' as the only source reads it from standard input (named <stdin>).
    """
    def body():
        from ..passes.support.diagnostics import UserError
        from ..passes.support.progress import Progress
        from . import compile_files, compile_source
        if "-" in sources and len(sources) > 1:
            raise UserError("'-' (standard input) must be the only source")
        from ..passes.support.inputs import check_input
        for s in sources:
            if s != "-":
                check_input(s, "source")
        with Progress("compiling", 2, quiet=quiet) as progress:
            progress.step(", ".join(sources) if len(sources) < 4 else f"{len(sources)} sources", count=0)
            if sources == ("-",):
                text = sys.stdin.buffer.read().decode("utf-8", errors="replace")
                result = compile_source(text, "<stdin>")
            else:
                result = compile_files(list(sources))
            progress.step("writing")
            for w in result.warnings:
                click.echo(w.render(result.sources), err=True)
            if show_time:
                click.echo(" ".join(f"{k}={v}" if k == "workers" else f"{k}={v * 1000:.1f}ms"
                                    for k, v in result.timings.items()), err=True)
            if check_only:
                return
            default = "-" if sources == ("-",) else os.path.splitext(sources[0])[0] + (".bc" if emit_bc else ".ll")
            write_output(output or default, result.bitcode() if emit_bc else result.ir, inputs=sources)

    run_guarded(body)
