"""``minisycl build``: sources → bundle, every stage of ``architecture.md`` in order.

    compile each source (frontend)  → link (passes.link)
    → split-if-device, propagate-aspects, analyze-virtual-functions (passes)
    → JIT images (split_module), and per ``--target`` AOT images compiled to
      native objects for this machine's CPU (the device the target's runtime
      device runs on), one process per image, in parallel
    → Bundle (images, properties, host module, kernel signatures, device globals)
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from typing import Callable

from ..frontend import compile_files
from ..passes import parse_pipeline
from ..passes.ir import Module, parse_text, render
from ..passes.link import link
from ..passes.manager import PassContext, PassManager
from .bundle import Bundle, BundleImage
from .device_config import load_target
from .split import split_module

__all__ = ["build", "compile_native", "PIPELINE"]

PIPELINE = "split-if-device,propagate-aspects,analyze-virtual-functions"


def compile_native(bitcode: bytes) -> bytes:
    """Native object code for this machine's CPU from an image's bitcode."""
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    mod = llvm.parse_bitcode(bitcode, context=llvm.create_context())
    mod.triple = llvm.get_process_triple()
    machine = llvm.Target.from_triple(mod.triple).create_target_machine(opt=2, reloc="pic", codemodel="default")
    mod.data_layout = str(machine.target_data)
    return machine.emit_object(mod)


def _device_global_table(module: Module) -> dict[str, dict]:
    table = {}
    for name in module.globals_with("sycl-device-global-size"):
        attrs = module.global_attributes(name)
        table[attrs.get("sycl-unique-id") or name] = {
            "name": name,
            "size": int(attrs["sycl-device-global-size"]),
            "device_image_scope": "sycl-device-image-scope" in attrs and attrs["sycl-device-image-scope"] != "false",
            "host_access": int(attrs.get("sycl-host-access") or 2),
            "init_mode": attrs.get("sycl-init-mode"),
        }
    return table


def build(sources: list[str], *, split: str = "auto", targets: list[str] = (),
          progress: Callable[[int, int], None] | None = None, jobs: int | None = None) -> tuple[Bundle, list]:
    """The bundle for ``sources`` and the warnings of every stage.  ``progress(done,
    total)`` is called as AOT images finish compiling."""
    configs = [load_target(t) for t in targets]          # unknown targets fail before any work
    warnings = []
    modules = []
    for path in sources:
        result = compile_files([path])
        warnings.extend(result.warnings)
        modules.append(parse_text(result.ir, path)[0])
    module = modules[0] if len(modules) == 1 else link(modules, name="app")
    ctx = PassManager(parse_pipeline(PIPELINE)).run(module, PassContext())
    warnings.extend(ctx.diagnostics.warnings())
    device = module
    bundle = Bundle(split=split, targets=[c.name for c in configs])
    bundle.host = render([ctx.host_module], bitcode=True)[0]
    for name, value in device.functions_with("minisycl-kernel-signature").items():
        bundle.kernels[name] = value or ""
    for name, fn in device.functions.items():
        if fn.is_kernel and not fn.is_declaration and name not in bundle.kernels:
            bundle.kernels[name] = ""
    bundle.device_globals = _device_global_table(device)
    jit = split_module(device, mode=split, device_globals=True)
    for i, (im, bc) in enumerate(zip(jit, render([im.module for im in jit], bitcode=True))):
        bundle.images.append(BundleImage(f"jit_{i}", im.entry_points, im.properties, bc, dummy=im.dummy))
    aot = []
    for cfg in configs:
        images = split_module(device, mode=split, device_globals=True, target=cfg)
        for i, (im, bc) in enumerate(zip(images, render([im.module for im in images], bitcode=True))):
            aot.append(BundleImage(f"{cfg.name}_{i}", im.entry_points, im.properties, bc, target=cfg.name))
    if aot:
        workers = max(1, min(jobs or os.cpu_count() or 1, len(aot)))
        codes = [im.ir for im in aot]
        if workers == 1:
            results = map(compile_native, codes)
            pool = None
        else:
            pool = ProcessPoolExecutor(max_workers=workers)
            results = pool.map(compile_native, codes)
        try:
            for done, (im, obj) in enumerate(zip(aot, results), 1):
                im.native = obj
                if progress:
                    progress(done, len(aot))
        finally:
            if pool is not None:
                pool.shutdown()
        bundle.images.extend(aot)
    return bundle, warnings
