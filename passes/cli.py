"""``minisycl link`` and ``minisycl opt``: thin shells around ``link`` and the pass manager."""
from __future__ import annotations

import click

from .support.cli import run_guarded
from .support.inputs import read_input
from .support.output import write_files


def _sources_of(diagnostics) -> dict[str, str]:
    """Source texts for rendering diagnostics with a caret (best effort)."""
    out = {}
    for d in diagnostics:
        for x in [d] + list(d.notes):
            if x.loc and x.loc.file not in out:
                try:
                    out[x.loc.file] = read_input(x.loc.file).decode("utf-8", errors="replace")
                except (OSError, ValueError):
                    pass        # a place that is no readable file is shown without its line
    return out


def _serialized(outputs: list[tuple[str, object]], emit_bc: bool) -> list[tuple[str, object]]:
    """(path, module) pairs verified by LLVM, as (path, text or bitcode): all or
    none (an error, and nothing to write, unless every module verifies)."""
    from .ir import verify_and_serialize
    return [(path, data) for (path, _), data in zip(outputs, verify_and_serialize([m for _, m in outputs], emit_bc))]


def _emit(outputs: list[tuple[str, object]], emit_bc: bool, inputs) -> None:
    """Verify and write (path, module) pairs: all or nothing (nothing is written
    unless all verify, and none is renamed into place unless all were written)."""
    write_files(_serialized(outputs, emit_bc), inputs=inputs)


@click.command("link")
@click.argument("inputs", nargs=-1, required=True)
@click.option("-o", "--output", default="-", show_default=True, help="Output file ('-' for stdout).")
@click.option("--emit-bc", is_flag=True, help="Write bitcode instead of IR text.")
def link_cmd(inputs, output, emit_bc):
    """Link LLVM IR files (.ll or .bc) into one module, resolving SYCL_EXTERNAL
    functions and device globals across files."""
    def body():
        from .ir import load
        from .link import link
        _emit([(output, link([load(p) for p in inputs]))], emit_bc, inputs)
    run_guarded(body)


class _OptCommand(click.Command):
    """``opt``'s help ends with every registered pass and its options
    (``passes.describe_passes``: read from the registry, imported only for ``--help``)."""

    def format_epilog(self, ctx, formatter):
        from . import describe_passes
        with formatter.section("Passes (registry in passes/__init__.py)"):
            rows = []
            for name, summary, options in describe_passes():
                rows.append((name, summary))
                rows.extend(("", f"  {option}") for option in options)
            formatter.write_dl(rows, col_max=28)
        super().format_epilog(ctx, formatter)


@click.command("opt", cls=_OptCommand)
@click.argument("input", default="-")
@click.option("-passes", "--passes", "pipeline", required=True, metavar="PIPELINE",
              help="Comma-separated passes, e.g. split-if-device,propagate-aspects{exclude-aspects=fp64}.")
@click.option("-o", "--output", default="-", show_default=True, help="Output file ('-' for stdout).")
@click.option("--host-output", default=None, help="Where to write the host module split-if-device produces.")
@click.option("--emit-bc", is_flag=True, help="Write bitcode instead of IR text.")
@click.option("-S", "text_output", is_flag=True, help="Write IR text (the default; accepted as in opt).")
@click.option("--print-after-all", is_flag=True, help="Print the IR after every pass (stderr).")
@click.option("--print-before-all", is_flag=True, help="Print the IR before every pass (stderr).")
@click.option("--print-after", multiple=True, metavar="PASS", help="Print the IR after PASS (stderr).")
@click.option("--print-before", multiple=True, metavar="PASS", help="Print the IR before PASS (stderr).")
@click.option("--verify-each", is_flag=True, help="Verify the IR with LLVM after every pass.")
@click.option("--time-passes", is_flag=True, help="Print the time spent in each pass (stderr).")
@click.option("--print-pipeline", is_flag=True, help="Print the canonical pipeline string and exit.")
@click.option("--emit-ptx", "ptx_cpu", default=None, metavar="SM",
              help="Write PTX for NVIDIA architecture SM (e.g. sm_90) from the result (after lower-to-nvptx).")
def opt_cmd(input, pipeline, output, host_output, emit_bc, text_output, print_after_all, print_before_all,
            print_after, print_before, verify_each, time_passes, print_pipeline, ptx_cpu):
    """Run a pipeline of IR passes over INPUT (.ll or .bc; '-' for stdin).

    A pipeline is written as LLVM's opt writes one: pass names separated by
    commas, options in braces, separated by semicolons
    (propagate-aspects{exclude-aspects=fp64;validate=false}).
    """
    def body():
        from .support import knobs
        from . import get_pass, parse_pipeline, print_pipeline as show
        from .ir import load_and_run
        from .manager import PassContext, PassManager
        passes = parse_pipeline(pipeline)
        for name in print_after + print_before:
            get_pass(name)
        if print_pipeline:
            click.echo(show(passes))
            return
        pm = PassManager(passes, verify_each=verify_each or knobs.verify_each(),
                         print_after=("all",) if print_after_all else print_after,
                         print_before=("all",) if print_before_all else print_before)

        def work(module):
            """The passes and the outputs' verification: no effect but the result
            (``load_and_run`` may start it before LLVM's verdict on the input)."""
            ctx = PassContext(verify_host_in_background=host_output is not None)
            pm.run(module, ctx)
            outputs = None
            if ptx_cpu is None and (host_output is None or ctx.host_module is not None):
                outputs = _serialized(([(host_output, ctx.host_module)] if host_output is not None else [])
                                      + [(output, module)], emit_bc)
            return module, ctx, outputs
        from .support.diagnostics import CompileError
        try:            # (no speculation where the passes print the IR: that is output)
            module, ctx, outputs = load_and_run(input, work, speculate=not (pm.print_before or pm.print_after))
        except CompileError as err:
            err.sources.update(_sources_of(err.diagnostics))
            raise
        warnings = ctx.diagnostics.warnings()
        sources = _sources_of(warnings)
        for w in warnings:
            click.echo(w.render(sources), err=True)
        if time_passes:
            click.echo(" ".join(f"{k}={v * 1000:.1f}ms" for k, v in ctx.timings.items()), err=True)
        if ptx_cpu is not None:
            from .ir import emit_ptx
            kernels = [f.name for f in module.functions.values() if f.is_kernel]
            write_files([(output, emit_ptx([module.text()], ptx_cpu, "+ptx80", keep=kernels))], inputs=[input])
            return
        if outputs is None:
            raise click.UsageError("--host-output needs split-if-device in the pipeline")
        write_files(outputs, inputs=[input])
    run_guarded(body)
