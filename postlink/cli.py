"""``minisycl post-link``: upstream ``sycl-post-link``'s flags around ``split_module``."""
from __future__ import annotations

import click

from ..passes.support.cli import run_guarded
from ..passes.support.ir_contract import (CALLS_VF_SET_KEY, CREATES_VF_SET_KEY, DEVICE_GLOBALS, EXPORTED_SYMBOLS,
                                          IMPORTED_SYMBOLS, KERNEL_NAMES, KERNEL_PARAM_OPT, MAX_WORK_GROUP_SIZE,
                                          MISC_PROPERTIES, PROGRAM_METADATA, REQD_SUB_GROUP_SIZE_KEY,
                                          REQD_WORK_GROUP_SIZE, SPEC_CONSTANTS, SYCL_EXPLICIT_SIMD,
                                          SYCL_KERNEL_OMIT_ARGS, SYCL_OPTLEVEL, USES_VF_SET_KEY, WORK_GROUP_NUM_DIM)


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
                      ("split_esimd", "-split-esimd"),
                      ("default_spec_images", "-generate-device-image-default-spec-consts"))


@click.command("post-link")
@click.argument("input", default="-")
@click.option("-split", "--split", "split", type=click.Choice(["kernel", "source", "auto", "none"]), default="none",
              show_default=True, help="Device code split mode.")
@click.option("-properties", "--properties", "properties", is_flag=True, help="Write .prop files.")
@click.option("-symbols", "--symbols", "symbols", is_flag=True, help="Write .sym files (entry points).")
@click.option("-S", "text_ir", is_flag=True, help="Write images as LLVM IR text (.ll) instead of bitcode.")
@click.option("-device-globals", "--device-globals", "device_globals", is_flag=True,
              help=f"Write [{DEVICE_GLOBALS}] and check device_image_scope.")
@click.option("-emit-only-kernels-as-entry-points", "--emit-only-kernels-as-entry-points", "only_kernels",
              is_flag=True, help="Only kernels (and virtual functions) are entry points.")
@click.option("-emit-param-info", "--emit-param-info", "param_info", is_flag=True,
              help=f"Write [{KERNEL_PARAM_OPT}]: per kernel a bit array, bit i set when argument i was removed "
                   f"(from !{SYCL_KERNEL_OMIT_ARGS}; we remove none, so every bit is clear otherwise).")
@click.option("-emit-exported-symbols", "--emit-exported-symbols", "exported", is_flag=True,
              help=f"Write [{EXPORTED_SYMBOLS}]: the image's spir_func entry points (virtual functions excepted) "
                   "and its external device globals without device_image_scope.")
@click.option("-emit-imported-symbols", "--emit-imported-symbols", "imported", is_flag=True,
              help=f"Write [{IMPORTED_SYMBOLS}]: SYCL_EXTERNAL functions the image declares but does not define.")
@click.option("-emit-kernel-names", "--emit-kernel-names", "kernel_names", is_flag=True,
              help=f"Write [{KERNEL_NAMES}]: the image's kernels.")
@click.option("-emit-program-metadata", "--emit-program-metadata", "program_metadata", is_flag=True,
              help=f"Write [{PROGRAM_METADATA}]: <kernel>@{REQD_WORK_GROUP_SIZE}, @{REQD_SUB_GROUP_SIZE_KEY}, "
                   f"@{WORK_GROUP_NUM_DIM}, @{MAX_WORK_GROUP_SIZE} and <unique id>@global_id_mapping.")
@click.option("-allow-device-image-dependencies", "--allow-device-image-dependencies", "allow_deps", is_flag=True,
              help="Images may depend on each other: with -emit-imported-symbols, declared external "
                   "device_global variables are listed as imported too.")
@click.option("-ir-output-only", "--ir-output-only", "ir_only", is_flag=True,
              help="Write the one processed module to the -o file (no table, no split; -split=auto or none).")
@click.option("-spec-const", "--spec-const", "spec_const",
              type=click.Choice(["rt", "native", "default", "emulation"]), default=None,
              help="Lower specialization-constant reads (postlink/spec_constants.py): rt/native to "
                   "__spirv_SpecConstant(Composite) calls with numeric ids, default/emulation to loads from "
                   f"the run-time buffer; writes [{SPEC_CONSTANTS}] and its default values.")
@click.option("-generate-device-image-default-spec-consts", "--generate-device-image-default-spec-consts",
              "default_spec_images", is_flag=True,
              help="After each image that reads specialization constants, a copy with the default values "
                   f"folded in ([{MISC_PROPERTIES}] specConstsReplacedWithDefault=1).")
@click.option("-split-esimd", "--split-esimd", "split_esimd", is_flag=True,
              help="Accepted for upstream's command lines; minisycl has no ESIMD (an input with ESIMD kernels, "
                   f"!{SYCL_EXPLICIT_SIMD}, is an error with or without it).")
@click.option("-lower-esimd", "--lower-esimd", "lower_esimd", is_flag=True,
              help="Accepted for upstream's command lines; no ESIMD here (see -split-esimd).")
@click.option("-O0", "o0", is_flag=True, help="Accepted, as -O1, -O2, -O3, -Os and -Oz: upstream uses them only "
              f"to optimise ESIMD code, which minisycl does not have. optLevel in [{MISC_PROPERTIES}] comes from "
              f"the entry points' \"{SYCL_OPTLEVEL}\" attribute, as upstream's does, not from these flags.")
@click.option("-O1", "o1", is_flag=True, hidden=True)
@click.option("-O2", "o2", is_flag=True, hidden=True)
@click.option("-O3", "o3", is_flag=True, hidden=True)
@click.option("-Os", "os_", is_flag=True, hidden=True)
@click.option("-Oz", "oz", is_flag=True, hidden=True)
@click.option("-o", "outputs", multiple=True, required=True, metavar="[TARGET,]FILE.table",
              help="Output table (repeatable; the images are shared); with TARGET, only the images "
                   "that device config can run.")
@click.option("-out-dir", "--out-dir", "out_dir", default=None, help="Directory for the images (default: the table's).")
@click.option("--vf-keys", type=click.Choice(["design", "upstream"]), default="design", show_default=True,
              help=f"Virtual-function property keys: the design's {CALLS_VF_SET_KEY}, {CREATES_VF_SET_KEY}, "
                   f"or upstream's {USES_VF_SET_KEY}.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar (it shows on a terminal after a second).")
def post_link_cmd(input, split, properties, symbols, text_ir, device_globals, only_kernels, param_info, exported,
                  imported, kernel_names, program_metadata, allow_deps, ir_only, split_esimd, outputs, out_dir,
                  vf_keys, quiet, spec_const, default_spec_images, **_accepted_only):
    """Split a device module (.ll/.bc; '-' for stdin) into device images and write
    sycl-post-link's file table, images, .prop and .sym files.  TARGET in -o is
    a device config's name or the path of a device-config YAML file."""
    # _accepted_only: -lower-esimd and -O<N>, which change nothing here
    def body():
        from ..passes.support.diagnostics import UserError
        from ..passes.ir import load
        from . import TableSpec, split_module, write_tables
        from ..device_configs.targets import ConfigError, is_config_path, load_target, target_names
        from ..passes.support.progress import Progress
        from .properties import EmitOptions
        from .spec_constants import apply_spec_constants
        opts = EmitOptions(param_info=param_info, exported_symbols=exported, kernel_names=kernel_names,
                           imported_symbols=imported, program_metadata=program_metadata, allow_dependencies=allow_deps)
        if ir_only:
            flags = {"symbols": symbols, "properties": properties, "param_info": param_info,
                     "program_metadata": program_metadata, "kernel_names": kernel_names, "exported": exported,
                     "imported": imported, "split_esimd": split_esimd,
                     "default_spec_images": default_spec_images}
            for key, flag in _IR_ONLY_CONFLICTS:
                if flags[key]:
                    raise UserError(f"{flag} can't be used with -ir-output-only")
            if split not in ("auto", "none"):
                raise UserError(f"-split={split} can't be used with -ir-output-only")
        # upstream: one split; each -o [TARGET,]FILE gets a table of the images
        # its target can run (a target with no device config keeps them all)
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
        with Progress("post-link", 4, quiet=quiet) as progress:
            progress.step("reading", count=0)
            module = load(input)
            if ir_only:
                progress.step("writing")
                _write_ir_only(module, tables[0].table, text_ir, only_kernels, device_globals, inputs, spec_const)
                return
            esimd = _esimd_functions(module)
            if esimd:
                raise UserError(f"'{esimd[0]}' is an ESIMD function (!{SYCL_EXPLICIT_SIMD}): "
                                f"minisycl has no ESIMD support")
            progress.step("splitting")
            images = split_module(module, mode=split, only_kernels=only_kernels, device_globals=device_globals,
                                  vf_keys=vf_keys, serialize="text" if text_ir else "bitcode")
            progress.step("properties")
            images = apply_spec_constants(images, spec_const, default_spec_images)
            _with_optional_sets(images, opts)
            progress.step("writing")
            write_tables(images, tables, out_dir=out_dir, text_ir=text_ir, properties=properties, symbols=symbols,
                         inputs=inputs)
    run_guarded(body)


def _write_ir_only(module, path: str, text_ir: bool, only_kernels: bool, device_globals: bool, inputs,
                   spec_const: str | None = None) -> None:
    """``-ir-output-only``: the module cleaned up as one image (what is not reached
    from an entry point goes) to ``path``; an input that must be split into more
    than one image (virtual-function sets are outlined) is upstream's error."""
    from ..passes.support.diagnostics import UserError
    from ..passes.support.output import write_output
    from ..passes.ir import verify_and_serialize
    from . import split_module
    esimd = _esimd_functions(module)
    if esimd:
        raise UserError(f"'{esimd[0]}' is an ESIMD function (!{SYCL_EXPLICIT_SIMD}): minisycl has no ESIMD support")
    images = split_module(module, mode="none", only_kernels=only_kernels, device_globals=device_globals)
    if len(images) > 1:
        raise UserError("some modules had to be split, '-ir-output-only' can't be used")
    if spec_const is not None:
        from .spec_constants import MODES, lower_spec_constants
        lower_spec_constants(images[0].module, MODES[spec_const])
    write_output(path, verify_and_serialize([images[0].module], bitcode=not text_ir)[0], inputs=inputs)


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
