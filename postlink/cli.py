"""``minisycl post-link``: upstream ``sycl-post-link``'s flags around ``split_module``."""
from __future__ import annotations

from types import SimpleNamespace

import click

from ..passes.support.cli import run_guarded
from ..passes.support.ir_contract import SYCL_EXPLICIT_SIMD
from .options import PostLinkCommand, click_options


def _with_optional_sets(images, opts) -> None:
    """Add the sets the ``-emit-*`` flags ask for (and the devicelib mask) to each
    image, in upstream's set order.  A dummy image takes its real image's sets:
    upstream computes a dummy's properties from the unmodified module."""
    from .properties import in_upstream_order, optional_sets
    last = None
    for im in images:
        extra = last if im.dummy and last is not None else optional_sets(im.module, im.entry_points, opts)
        last = extra
        im.properties = in_upstream_order(im.properties, extra)


def _esimd_functions(module) -> list[str]:
    return [n for n, f in module.functions.items() if SYCL_EXPLICIT_SIMD in f.metadata]


_IR_ONLY_CONFLICTS = (("symbols", "-symbols"), ("properties", "-properties"), ("param_info", "-emit-param-info"),
                      ("program_metadata", "-emit-program-metadata"), ("kernel_names", "-emit-kernel-names"),
                      ("exported", "-emit-exported-symbols"), ("imported", "-emit-imported-symbols"),
                      ("split_esimd", "-split-esimd"), ("imports", "-imports"),
                      ("default_spec_images", "-generate-device-image-default-spec-consts"))


@click.command("post-link", cls=PostLinkCommand)
@click.argument("input", default="-")
@click_options
def post_link_cmd(input, **options):
    """Split a device module (.ll/.bc; '-' for stdin) into device images and write
    sycl-post-link's file table, images, .prop and .sym files.  TARGET in -o is
    a device config's name or the path of a device-config YAML file.

    \b
    Every option of upstream's sycl-post-link is here (postlink/options.py):
    those marked [not implemented by minisycl: refused] are errors, those
    marked [ESIMD only: ...] act on ESIMD code, which minisycl refuses."""
    run_guarded(_post_link, input, SimpleNamespace(**options))


def _ir_only_conflicts(a) -> None:
    """Upstream's refusals of -ir-output-only with the options that write more than one file."""
    from ..passes.support.diagnostics import UserError
    for key, flag in _IR_ONLY_CONFLICTS:
        if getattr(a, key):
            raise UserError(f"{flag} can't be used with -ir-output-only")
    if a.split not in ("auto", "none"):
        raise UserError(f"-split={a.split} can't be used with -ir-output-only")


def _table_specs(outputs, input):
    """One ``TableSpec`` per ``-o [TARGET,]FILE`` (a target: a device config's
    name or YAML path), and the inputs (the module and any YAML files)."""
    from . import TableSpec
    from ..device_configs.targets import ConfigError, is_config_path, load_target, target_names
    known = set(target_names())
    tables, inputs = [], [input]
    for out in outputs:
        target, _, table = out.rpartition(",")
        if is_config_path(target) and target.endswith((".yaml", ".yml")):   # a device-config file
            config = load_target(target)
            inputs.append(target)
            tables.append(TableSpec(table, config.name, config))
            continue
        if "/" in target or "\\" in target:        # it names .prop files
            raise ConfigError(f"invalid target name '{target}' in -o {out}")
        tables.append(TableSpec(table, target or None, load_target(target) if target in known else None))
    return tables, inputs


def _refuse_esimd(module) -> None:
    from ..passes.support.diagnostics import UserError
    esimd = _esimd_functions(module)
    if esimd:
        raise UserError(f"'{esimd[0]}' is an ESIMD function (!{SYCL_EXPLICIT_SIMD}): minisycl has no ESIMD support")


def _post_link(input, a) -> None:
    """The command's work (``a``: the options, by their table names)."""
    from ..passes.ir import load
    from . import split_module, write_table_groups
    from .aot_filter import aot_tables
    from ..passes.support.progress import Progress
    from .options import refuse_unimplemented
    from .properties import EmitOptions
    from .spec_constants import apply_spec_constants
    refuse_unimplemented(vars(a))
    allow_deps = a.allow_deps or a.allow_deps_old
    opts = EmitOptions(param_info=a.param_info, exported_symbols=a.exported, kernel_names=a.kernel_names,
                       imported_symbols=a.imported, program_metadata=a.program_metadata, allow_dependencies=allow_deps)
    if a.ir_only:
        _ir_only_conflicts(a)
    # upstream: one split; each -o [TARGET,]FILE gets a table of the images
    # its target can run (a target with no device config keeps them all)
    tables, inputs = _table_specs(a.outputs, input)
    with Progress("post-link", 4, quiet=a.quiet) as progress:
        progress.step("reading", count=0)
        module = load(input)
        if a.ir_only:
            progress.step("writing")
            _write_ir_only(module, tables[0].table, a, inputs)
            return
        _refuse_esimd(module)
        progress.step("splitting")
        # the design's AOT flow for each target when there are virtual functions (aot_filter.aot_tables)
        shared, aot = aot_tables(module, tables)
        splits = [(None, shared)] if shared else []
        splits += [(config, specs) for config, specs in aot.values()]
        groups = []
        for config, specs in splits:
            images = split_module(module, mode=a.split, only_kernels=a.only_kernels, device_globals=a.device_globals,
                                  vf_keys=a.vf_keys, target=config, serialize="text" if a.text_ir else "bitcode")
            images = apply_spec_constants(images, a.spec_const, a.default_spec_images)
            _with_optional_sets(images, opts)
            groups.append((images, specs))
        progress.step("properties")
        progress.step("writing")
        # a set asked for by an -emit-* flag is written even without -properties (upstream's
        # emit_imported_symbols.ll reads the .prop; older upstream always wrote .prop files)
        asked = a.param_info or a.program_metadata or a.kernel_names or a.exported or a.imported
        write_table_groups(groups, out_dir=a.out_dir, text_ir=a.text_ir, properties=a.properties or asked,
                           symbols=a.symbols, imports=a.imports, inputs=inputs)


def _write_ir_only(module, path: str, a, inputs) -> None:
    """``-ir-output-only``: the module cleaned up as one image (what is not reached
    from an entry point goes) to ``path``; an input that must be split into more
    than one image (virtual-function sets are outlined) is upstream's error.
    Bitcode to a terminal needs ``-f``, as upstream's."""
    import sys
    from ..passes.support.diagnostics import UserError
    from ..passes.support.output import write_output
    from ..passes.ir import verify_and_serialize
    from . import split_module
    _refuse_esimd(module)
    if path in ("-", "/dev/stdout") and not a.text_ir and not a.force and sys.stdout.isatty():
        raise UserError("refusing to write bitcode to a terminal: give -S for text, or -f")
    from .grouping import WHOLE
    images = split_module(module, mode=WHOLE, only_kernels=a.only_kernels, device_globals=a.device_globals)
    if len(images) > 1:
        raise UserError("some modules had to be split, '-ir-output-only' can't be used")
    if a.spec_const is not None:
        from .spec_constants import MODES, lower_spec_constants
        lower_spec_constants(images[0].module, MODES[a.spec_const])
    write_output(path, verify_and_serialize([images[0].module], bitcode=not a.text_ir)[0], inputs=inputs)


@click.command("build")
@click.argument("sources", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True,
              help="The bundle file to write (with --stop-after: that stage's products).")
@click.option("--split", type=click.Choice(["kernel", "source", "auto", "none"]), default="auto", show_default=True,
              help="Device code split mode.")
@click.option("--target", "targets", multiple=True, metavar="NAME|FILE.yaml",
              help="Also build AOT images for this device config (repeatable): a name (see device_configs/) "
                   "or the path of a device-config YAML file.")
@click.option("-j", "--jobs", type=int, default=None, help="Parallel AOT compile jobs (default: CPU count).")
@click.option("--stop-after", "stop_after", default="bundle", show_default=True, metavar="STAGE",
              help="Run the stages up to STAGE and write its products to -o instead of the bundle.")
@click.option("--emit", "emit", multiple=True, metavar="STAGE",
              help="Also write STAGE's products beside -o, as <stem>.<stage><ext> (repeatable); "
                   "'all': every stage before the last one run.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar (it shows on a terminal after a second).")
def build_cmd(sources, output, split, targets, jobs, stop_after, emit, quiet):
    """Compile, link, run the passes and the post-link step, and write one bundle.

    \b
    The stages, in order (STAGE for --stop-after and --emit), and what -o gets:
      compile         LLVM IR of each source (.ll; .bc when -o ends in .bc;
                      several sources: <stem>_<N><ext>)
      link            the linked module as LLVM IR
      opt             the device module after the pass pipeline, as LLVM IR
      post-link       a file table [Code|Properties|Symbols] of the device
                      images (JIT, then AOT per --target), written beside it
      device-globals  the device-global table (JSON)
      native          a file table [Code] of the AOT images' object code (.o)
      bundle          the bundle (the default)
    """
    def body():
        from ..passes.support.diagnostics import UserError
        from ..passes.support.output import write_files
        from ..passes.support.progress import Progress
        from .build import STAGE_NAMES, run_stages
        from .stage_outputs import emitted_path, product_files
        for name in (stop_after, *(e for e in emit if e != "all")):
            if name not in STAGE_NAMES:
                raise UserError(f"unknown stage '{name}' (expected one of: {', '.join(STAGE_NAMES)})")
        last = STAGE_NAMES.index(stop_after)
        wanted = set(STAGE_NAMES[:last]) if "all" in emit else set()
        for name in emit:
            if name != "all" and STAGE_NAMES.index(name) > last:
                raise UserError(f"--emit {name}: the build stops after '{stop_after}'")
            wanted.add(name)
        wanted.discard("all")
        if wanted and output == "-":
            raise UserError("--emit writes beside -o: give -o a file name, not '-'")
        from ..passes.support.inputs import check_input
        for s in sources:
            check_input(s, "source")
        with Progress("build", last + 1, quiet=quiet) as bar:
            bar.step(STAGE_NAMES[0], count=0)

            def progress(done, total):          # called as AOT images finish compiling
                bar.step(f"native: {done}/{total} AOT images", count=0)

            files = []

            def keep(stage, products):
                # a stage's products are made into files as soon as it ends: ``opt`` edits ``link``'s module
                if stage.name in wanted:
                    files.extend(product_files(stage.name, products, emitted_path(output, stage.name)))
                if stage.name == stop_after:
                    files.extend(product_files(stage.name, products, output))
                bar.step(stage.name)

            _, warnings = run_stages(list(sources), split=split, targets=list(targets), stop_after=stop_after,
                                     progress=progress, jobs=jobs, after_stage=keep)
        sources_text = {}
        for w in warnings:
            click.echo(w.render(sources_text), err=True)
        from ..device_configs.targets import is_config_path
        write_files(files, inputs=[*sources, *(t for t in targets if is_config_path(t))])
    run_guarded(body)


@click.command("inspect")
@click.argument("bundle_path", metavar="FILE")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def inspect_cmd(bundle_path, as_json):
    """Print the images, entry points and properties of a bundle (minisycl build),
    a file table (.table, minisycl post-link) or one .prop file.  Everything is
    checked first, the bitcode of a bundle's images included."""
    def body():
        import json
        from .inspect import read_any, render_any
        info = read_any(bundle_path)
        click.echo(json.dumps(info, indent=2, sort_keys=True) if as_json else render_any(bundle_path, info))
    run_guarded(body)
