"""``minisycl build``: sources → bundle, as a table of stages (``STAGES``), in
the way Triton's compiler keeps its ``stages``: each stage is a name, the
function that runs it, the products it consumes and the products it makes.

    stage           consumes                     produces
    compile         sources                      modules          (frontend; one IR module per source)
    link            modules                      module           (passes.link; one source: that module)
    opt             module                       device, host     (the pass pipeline ``PIPELINE``)
    post-link       device                       images           (JIT images, then per --target AOT images)
    device-globals  device                       device_globals   (the table with initial values)
    native          images                       native           (AOT images → object code for this CPU)
    bundle          device, host, images,        bundle           (everything the runtime needs, one file)
                    native, device_globals

``run_stages`` runs the table in order and stops after a given stage (``minisycl
build --stop-after``); ``build`` runs all of it.  ``stage_outputs`` writes a
stage's products as files (``--stop-after``, ``--emit``).  A stage never
changes a product it consumes except ``opt``, whose pass pipeline edits the
linked module in place (that module is then ``device``): a caller that wants
``link``'s product as it was reads it after ``link`` (``after_stage``).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from ..device_configs.targets import TargetInfo, load_target
from ..frontend import compile_files
from ..passes import parse_pipeline
from ..passes.support.ir_contract import SIGNATURE_ATTRIBUTE
from ..passes.ir import Module, kernel_signature, load, parse_text, verify_and_serialize
from ..passes.link import link
from ..passes.manager import PassContext, PassManager
from ..passes.support.diagnostics import UserError
from ..passes.support.signature import SignatureError
from .bundle import Bundle, BundleImage
from .initial_values import device_global_table
from .native import compile_all
from .spec_constants import apply_spec_constants
from .split import SPLIT_MODES, split_module  # noqa: F401 - SPLIT_MODES for build_program

__all__ = ["build", "run_stages", "Stage", "STAGES", "STAGE_NAMES", "PIPELINE", "BuildRun"]

#: the ``opt`` stage's pass pipeline
PIPELINE = "split-if-device,propagate-aspects,analyze-virtual-functions"


@dataclass
class BuildRun:
    """The options of one build and the warnings its stages collect."""
    split: str = "auto"
    targets: list[TargetInfo] = field(default_factory=list)
    progress: Callable[[int, int], None] | None = None
    jobs: int | None = None
    warnings: list = field(default_factory=list)
    #: class name -> layout, from the front end (``frontend.data_layout.class_layouts``)
    layouts: dict = field(default_factory=dict)


def compile_sources(run: BuildRun, sources: list[str]) -> list[Module]:
    modules = []
    for path in sources:
        if path.endswith((".ll", ".bc")):          # device IR as DPC++ spells it (e.g. hand-written)
            modules.append(load(path))
            continue
        result = compile_files([path])
        run.warnings.extend(result.warnings)
        for name, layout in result.layouts.items():
            run.layouts.setdefault(name, layout)
        modules.append(parse_text(result.ir, path)[0])
    return modules


def link_modules(run: BuildRun, modules: list[Module]) -> Module:
    return modules[0] if len(modules) == 1 else link(modules, name="app")


def run_pipeline(run: BuildRun, module: Module) -> tuple[Module, Module]:
    """``PIPELINE`` on ``module`` (in place): (the device module, the host module)."""
    ctx = PassManager(parse_pipeline(PIPELINE)).run(module, PassContext())
    run.warnings.extend(ctx.diagnostics.warnings())
    return module, ctx.host_module


def post_link(run: BuildRun, device: Module) -> list[BundleImage]:
    """The JIT images (``jit_<N>``), then each target's AOT images
    (``<target>_<N>``), as bitcode with their properties.  Specialization
    constants are read from the run-time buffer (emulation: the runtime folds
    the values in when it compiles a JIT image, ``runtime/spec_constants.py``),
    and each JIT image that reads them is followed by its copy with the
    defaults folded in, which the runtime uses while no value is set."""
    images = []
    jit = apply_spec_constants(split_module(device, mode=run.split, device_globals=True, serialize="bitcode"),
                               "emulation", True)
    for i, (im, bc) in enumerate(zip(jit, verify_and_serialize([im.module for im in jit], bitcode=True))):
        images.append(BundleImage(f"jit_{i}", im.entry_points, im.properties, bc, dummy=im.dummy))
    for cfg in run.targets:
        aot = apply_spec_constants(split_module(device, mode=run.split, device_globals=True, target=cfg,
                                                serialize="bitcode"),
                                   "emulation", False)
        for i, (im, bc) in enumerate(zip(aot, verify_and_serialize([im.module for im in aot], bitcode=True))):
            images.append(BundleImage(f"{cfg.name}_{i}", im.entry_points, im.properties, bc, target=cfg.name))
    return images


def device_globals(run: BuildRun, device: Module) -> dict[str, dict]:
    return device_global_table(device)


def native_code(run: BuildRun, images: list[BundleImage]) -> dict[str, bytes]:
    """AOT image name → its object code (``native.compile_all``; ``run.progress``
    is called as images finish)."""
    aot = [im for im in images if im.target is not None]
    return dict(zip((im.name for im in aot), compile_all([im.ir for im in aot], run.jobs, run.progress)))


def kernel_signatures(device: Module) -> dict[str, str]:
    """Kernel -> its signature's text (``passes/ir/kernel_params.py``: the front end's,
    checked against the IR, or the one the IR's parameter types imply); a kernel
    whose signature cannot be represented is a ``UserError`` naming it."""
    out = {}
    written = device.functions_with(SIGNATURE_ATTRIBUTE)
    for name, fn in device.functions.items():
        if fn.is_declaration or not (fn.is_kernel or name in written):
            continue
        try:
            out[name] = kernel_signature(device, name).text
        except SignatureError as err:
            raise UserError(f"kernel '{name}' cannot be launched: {err}") from None
    return out


def make_bundle(run: BuildRun, device: Module, host: Module, images: list[BundleImage], native: dict[str, bytes],
                globals_table: dict[str, dict]) -> Bundle:
    bundle = Bundle(split=run.split, targets=[c.name for c in run.targets])
    bundle.host = verify_and_serialize([host], bitcode=True)[0]
    bundle.kernels = kernel_signatures(device)
    bundle.device_globals = globals_table
    bundle.layouts = dict(run.layouts)
    bundle.images = [replace(im, native=native[im.name]) if im.name in native else im for im in images]
    return bundle


@dataclass(frozen=True)
class Stage:
    """One row of the table: ``run(build_run, *consumed)`` returns the produced
    product (or a tuple of them, in ``produces`` order)."""
    name: str
    run: Callable
    consumes: tuple[str, ...]
    produces: tuple[str, ...]


STAGES = (
    Stage("compile", compile_sources, ("sources",), ("modules",)),
    Stage("link", link_modules, ("modules",), ("module",)),
    Stage("opt", run_pipeline, ("module",), ("device", "host")),
    Stage("post-link", post_link, ("device",), ("images",)),
    Stage("device-globals", device_globals, ("device",), ("device_globals",)),
    Stage("native", native_code, ("images",), ("native",)),
    Stage("bundle", make_bundle, ("device", "host", "images", "native", "device_globals"), ("bundle",)),
)
STAGE_NAMES = tuple(s.name for s in STAGES)


def run_stages(sources: list[str], *, split: str = "auto", targets: list[str] = (), stop_after: str = "bundle",
               progress: Callable[[int, int], None] | None = None, jobs: int | None = None,
               after_stage: Callable[[Stage, dict], None] | None = None) -> tuple[dict, list]:
    """Run ``STAGES`` in order on ``sources`` up to and including ``stop_after``;
    ``after_stage(stage, products)`` is called after each.  Returns (the
    products by name, the warnings of every stage).  Unknown targets fail
    before any work."""
    if stop_after not in STAGE_NAMES:
        raise UserError(f"unknown stage '{stop_after}' (expected one of: {', '.join(STAGE_NAMES)})")
    run = BuildRun(split, [load_target(t) for t in targets], progress, jobs)
    products: dict = {"sources": list(sources)}
    for stage in STAGES:
        made = stage.run(run, *(products[name] for name in stage.consumes))
        products.update(zip(stage.produces, made if len(stage.produces) > 1 else (made,)))
        if after_stage is not None:
            after_stage(stage, products)
        if stage.name == stop_after:
            break
    return products, run.warnings


def build(sources: list[str], *, split: str = "auto", targets: list[str] = (),
          progress: Callable[[int, int], None] | None = None, jobs: int | None = None) -> tuple[Bundle, list]:
    """The bundle for ``sources`` and the warnings of every stage.  ``progress(done,
    total)`` is called as AOT images finish compiling."""
    products, warnings = run_stages(sources, split=split, targets=targets, progress=progress, jobs=jobs)
    return products["bundle"], warnings
