"""Every option of ``minisycl post-link``, in one table (issue 32, point 7).

Each row is one option of upstream's ``sycl-post-link`` (the newest
``sycl-post-link.cpp``, plus the few older ones upstream's tests still use) or
one of minisycl's own, with what minisycl does with it:

    implemented   it does what upstream's does (``help`` says how)
    no-esimd      upstream uses it only for ESIMD code; minisycl refuses every
                  input with ESIMD code (``!sycl_explicit_simd``), so on any
                  input it accepts there is nothing for the option to act on
    refused       minisycl does not implement it: giving it is an error
                  (exit 1) saying so
    minisycl      minisycl's own (upstream has no such option)

``cli.py`` builds the command's options from this table, ``--help`` shows the
status of each, and ``refuse_unimplemented`` is the one check that stops on a
refused one.  ``tests/postlink/test_options.py`` compares the table with the
option list taken from upstream's source (``tests/postlink/data/``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import click

from ..passes.support.ir_contract import (DEVICE_GLOBALS, EXPORTED_SYMBOLS, IMPORTED_SYMBOLS, KERNEL_NAMES,
                                          KERNEL_PARAM_OPT, MAX_WORK_GROUP_SIZE, MISC_PROPERTIES, PROGRAM_METADATA,
                                          REQD_SUB_GROUP_SIZE_KEY, REQD_WORK_GROUP_SIZE, SPEC_CONSTANTS,
                                          SPIR_KERNEL_OMIT_ARGS, SYCL_KERNEL_OMIT_ARGS, SYCL_OPTLEVEL, USES_VF_SET_KEY,
                                          VIRTUAL_FUNCTIONS, WORK_GROUP_NUM_DIM)

__all__ = ["Option", "OPTIONS", "PostLinkCommand", "STATUSES", "click_options", "refuse_unimplemented", "upstream_names"]

STATUSES = ("implemented", "no-esimd", "refused", "minisycl")

_NOTE = {"no-esimd": "[ESIMD only: minisycl refuses ESIMD input, so this has nothing to act on] ",
         "refused": "[not implemented by minisycl: refused] "}


@dataclass(frozen=True)
class Option:
    """One row: the spellings (upstream's name first), the Python parameter it
    fills, its status, help, and the keyword arguments of ``click.option``."""
    names: tuple[str, ...]
    dest: str
    status: str
    help: str
    click: dict = field(default_factory=dict)
    older: bool = False         # an option of older upstream versions only

    @property
    def upstream(self) -> str | None:
        """Upstream's spelling without dashes (``None`` for minisycl's own)."""
        return None if self.status == "minisycl" else self.names[0].lstrip("-")


def _flag(name, dest, status, help, older=False):
    return Option((f"-{name}", f"--{name}") if len(name) > 2 else (f"-{name}",), dest, status, help,
                  {"is_flag": True}, older)


_OPT_LEVEL = (f"upstream passes it to its ESIMD lowering only; optLevel in [{MISC_PROPERTIES}] comes from the "
              f"entry points' \"{SYCL_OPTLEVEL}\" attribute, as upstream's does, not from this flag")

OPTIONS: tuple[Option, ...] = (
    Option(("-o",), "outputs", "implemented",
           "Output table [TARGET,]FILE.table (repeatable; the images are shared); with TARGET, only the images "
           "that device config can run.  With virtual functions in the module, a TARGET with a device config "
           "gets the design's AOT flow: images of its own, named after its first table, with no outlining, the "
           f"sets it cannot run emptied and no [{VIRTUAL_FUNCTIONS}].", {"multiple": True, "required": True, "metavar": "[TARGET,]FILE.table"}),
    Option(("-out-dir", "--out-dir"), "out_dir", "implemented",
           "Directory for the images (default: the first table's).", {"default": None}),
    _flag("S", "text_ir", "implemented", "Write images as LLVM IR text (.ll) instead of bitcode."),
    _flag("f", "force", "implemented",
          "Write bitcode to a terminal too (-ir-output-only -o -); without it that is refused, as upstream's "
          "CheckBitcodeOutputToConsole does."),
    Option(("-split", "--split"), "split", "implemented", "Device code split mode.",
           {"type": click.Choice(["kernel", "source", "auto", "none"]), "default": "none", "show_default": True}),
    _flag("symbols", "symbols", "implemented", "Write .sym files (entry points)."),
    _flag("properties", "properties", "implemented", "Write .prop files."),
    _flag("imports", "imports", "implemented",
          "Write .imported_sym files: the functions each image declares (demangled names starting with __ or "
          "_spirv excepted), and an 'Imported Symbols' table column (an older upstream option).", older=True),
    Option(("-spec-const", "--spec-const"), "spec_const", "implemented",
           "Lower specialization-constant reads (postlink/spec_constants.py): rt/native to "
           "__spirv_SpecConstant(Composite) calls with numeric ids, default/emulation to loads from the run-time "
           f"buffer; writes [{SPEC_CONSTANTS}] and its default values.",
           {"type": click.Choice(["rt", "native", "default", "emulation"]), "default": None}),
    _flag("generate-device-image-default-spec-consts", "default_spec_images", "implemented",
          "After each image that reads specialization constants, a copy with the default values folded in "
          f"([{MISC_PROPERTIES}] specConstsReplacedWithDefault=1)."),
    _flag("device-globals", "device_globals", "implemented",
          f"Write [{DEVICE_GLOBALS}] and check device_image_scope."),
    _flag("emit-only-kernels-as-entry-points", "only_kernels", "implemented",
          "Only kernels (and virtual functions) are entry points."),
    _flag("emit-param-info", "param_info", "implemented",
          f"Write [{KERNEL_PARAM_OPT}]: per kernel a bit array, bit i set when argument i was removed "
          f"(from !{SYCL_KERNEL_OMIT_ARGS} or the older !{SPIR_KERNEL_OMIT_ARGS}; we remove none, so every bit is "
          "clear otherwise)."),
    _flag("emit-program-metadata", "program_metadata", "implemented",
          f"Write [{PROGRAM_METADATA}]: <kernel>@{REQD_WORK_GROUP_SIZE}, @{REQD_SUB_GROUP_SIZE_KEY}, "
          f"@{WORK_GROUP_NUM_DIM}, @{MAX_WORK_GROUP_SIZE} and <unique id>@global_id_mapping."),
    _flag("emit-kernel-names", "kernel_names", "implemented", f"Write [{KERNEL_NAMES}]: the image's kernels."),
    _flag("emit-exported-symbols", "exported", "implemented",
          f"Write [{EXPORTED_SYMBOLS}]: the image's spir_func entry points (virtual functions excepted) and its "
          "external device globals without device_image_scope."),
    _flag("emit-imported-symbols", "imported", "implemented",
          f"Write [{IMPORTED_SYMBOLS}]: the functions the image declares and another image may define "
          "(intrinsics, __-prefixed and devicelib names excepted)."),
    _flag("allow-device-image-dependencies", "allow_deps", "implemented",
          "Images may depend on each other: with -emit-imported-symbols, declared external device_global "
          "variables are listed as imported too."),
    _flag("support-dynamic-linking", "allow_deps_old", "implemented",
          "The older name of -allow-device-image-dependencies.", older=True),
    _flag("ir-output-only", "ir_only", "implemented",
          "Write the one processed module to the -o file (no table, no split; -split=auto or none)."),
    _flag("reduce-memory-usage", "reduce_memory", "implemented",
          "Upstream shares one value map among the images to save memory (an older option); minisycl's images "
          "always share the input module's entities (Module.copy/extract share them), so this is what it does "
          "anyway and the outputs are the same either way.", older=True),
    Option(("-device-lib-dir", "--device-lib-dir"), "device_lib_dir", "refused",
           "Upstream adds its bfloat16 device libraries from this folder as images; minisycl has none",
           {"default": None, "metavar": "DIR"}),
    _flag("split-esimd", "split_esimd", "no-esimd", "Split SYCL and ESIMD entry points into separate images."),
    _flag("lower-esimd", "lower_esimd", "no-esimd", "Lower ESIMD constructs."),
    _flag("force-disable-esimd-opt", "no_esimd_opt", "no-esimd", "No optimisation of ESIMD code."),
    _flag("O0", "o0", "no-esimd", "Optimisation level 0 (as -O1, -O2, -O3, -Os, -Oz): " + _OPT_LEVEL + "."),
    _flag("O1", "o1", "no-esimd", "Optimisation level 1 (see -O0)."),
    _flag("O2", "o2", "no-esimd", "Optimisation level 2 (see -O0)."),
    _flag("O3", "o3", "no-esimd", "Optimisation level 3 (see -O0)."),
    _flag("Os", "os_", "no-esimd", "Optimise for size (see -O0)."),
    _flag("Oz", "oz", "no-esimd", "Optimise for size further (see -O0)."),
    Option(("--vf-keys",), "vf_keys", "minisycl",
           "Virtual-function property keys: the design's calls-/creates-virtual-functions-set, or upstream's "
           f"{USES_VF_SET_KEY}.",
           {"type": click.Choice(["design", "upstream"]), "default": "design", "show_default": True}),
    Option(("-q", "--quiet"), "quiet", "minisycl", "No progress bar (it shows on a terminal after a second).",
           {"is_flag": True}),
)


_BOOL_VALUES = {"true": True, "1": True, "false": False, "0": False}


class PostLinkCommand(click.Command):
    """``post-link``'s command: a flag also takes LLVM's ``cl::opt<bool>``
    spellings ``-flag=true|false|1|0`` (upstream's tests write
    ``-reduce-memory-usage=true``)."""

    def parse_args(self, ctx, args):
        flags = {name: opt for opt in OPTIONS if opt.click.get("is_flag") for name in opt.names}
        out = []
        for arg in args:
            name, eq, value = arg.partition("=")
            if eq and name in flags:
                if value.lower() not in _BOOL_VALUES:
                    raise click.BadParameter(f"'{value}' is not one of true, false, 1, 0", ctx=ctx,
                                             param_hint=f"'{name}'")
                if _BOOL_VALUES[value.lower()]:
                    out.append(name)
                continue
            out.append(arg)
        return super().parse_args(ctx, out)


def click_options(command):
    """Apply every row of ``OPTIONS`` to ``command`` as a ``click.option``."""
    for opt in reversed(OPTIONS):
        command = click.option(*opt.names, opt.dest, help=_NOTE.get(opt.status, "") + opt.help,
                               **opt.click)(command)
    return command


def refuse_unimplemented(values: dict) -> None:
    """Stop (exit 1) on a refused option that was given."""
    from ..passes.support.diagnostics import UserError
    for opt in OPTIONS:
        if opt.status == "refused" and values.get(opt.dest) not in (None, False, ()):
            raise UserError(f"{opt.names[0]}: minisycl does not implement this option of sycl-post-link "
                            f"({opt.help[0].lower() + opt.help[1:]})")


def upstream_names() -> set[str]:
    """Upstream's option names the table covers (without dashes)."""
    return {opt.upstream for opt in OPTIONS if opt.upstream}
