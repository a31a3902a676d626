"""``minisycl build``: sources → bundle, every stage of ``architecture.md`` in order.

    compile each source (frontend)  → link (passes.link)
    → split-if-device, propagate-aspects, analyze-virtual-functions (passes)
    → JIT images (split_module), and per ``--target`` AOT images compiled to
      native objects for this machine's CPU (the device the target's runtime
      device runs on), one process per image, in parallel
    → Bundle (images, properties, host module, kernel signatures, device globals)
"""
from __future__ import annotations

import ctypes
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Callable

import llvmlite.binding as llvm

from ..frontend import compile_files
from ..passes import parse_pipeline
from ..passes.ir import Module, load, parse_text, render, split_operands
from ..passes.link import link
from ..passes.manager import PassContext, PassManager
from .bundle import Bundle, BundleImage
from ..device_configs.targets import load_target
from .properties import is_image_scope
from .split import split_module


def lower_for_cpu(bitcode: bytes) -> bytes:
    """The image with its work-group kernels lowered (``lower-work-groups``), or as it is."""
    from ..passes.ir.bridge import parse_bitcode
    from ..passes.work_item_loops import lower_work_groups
    module = Module.parse(str(parse_bitcode(bitcode)))
    if not lower_work_groups(module):
        return bitcode
    return render([module], bitcode=True)[0]

__all__ = ["build", "compile_native", "PIPELINE"]

PIPELINE = "split-if-device,propagate-aspects,analyze-virtual-functions"


def _for_this_cpu(mod, **machine_options):
    """Retarget a (SPIR) module to this machine's CPU, where every runtime device
    runs; returns the target machine."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    mod.triple = llvm.get_process_triple()
    machine = llvm.Target.from_triple(mod.triple).create_target_machine(**machine_options)
    mod.data_layout = str(machine.target_data)
    return machine


def compile_native(bitcode: bytes) -> bytes:
    """Native object code for this machine's CPU from an image's bitcode (that
    this build just wrote: trusted, so LLVM's reader runs in process; see
    ``passes/ir/bridge.py`` for bitcode from elsewhere)."""
    bitcode = lower_for_cpu(bitcode)        # hook: work-group kernels run a group per call (work_item_loops.py)
    mod = llvm.parse_bitcode(bitcode, context=llvm.create_context())
    return _for_this_cpu(mod, opt=2, reloc="pic", codemodel="default").emit_object(mod)


def _element_size(value_type: str, size: int) -> int:
    """``sizeof(remove_all_extents_t<T>)`` from the LLVM type of ``T``: the size
    divided by every array extent (``[4 x [2 x float]]`` → size / 8)."""
    count, rest = 1, value_type.strip()
    while rest.startswith("["):
        n, _, rest = rest[1:].partition(" x ")
        count *= int(n)
        rest = rest[:-1].strip()
    return max(size // max(count, 1), 1)


def _initial_bytes(module: Module, name: str, image_scope: bool, size: int) -> bytes:
    """The initial value of ``T`` as bytes: LLVM lays out the global's initialiser
    for this CPU (the runtime's devices) and we read it back."""
    ctx = llvm.create_context()
    mod = llvm.parse_assembly(module.extract([name]).text(), context=ctx)
    engine = llvm.create_mcjit_compiler(mod, _for_this_cpu(mod))
    try:
        engine.finalize_object()
        addr = engine.get_global_value_address(name)
        return ctypes.string_at(addr + (0 if image_scope else 8), size)
    finally:
        engine.close()          # before its context goes (see runtime/jit.py)
        del ctx


def _device_global_table(module: Module) -> dict[str, dict]:
    """unique id → what the runtime needs to know of each device global."""
    table = {}
    for name in module.globals_with("sycl-device-global-size"):
        g = module.globals[name]
        attrs = module.global_attributes(name)
        size = int(attrs["sycl-device-global-size"])
        scope = is_image_scope(attrs)
        fields = split_operands(g.value_type.strip()[1:-1]) if g.value_type.startswith("{") else [g.value_type]
        value_type = fields[-1]
        table[attrs.get("sycl-unique-id") or name] = {
            "name": name,
            "size": size,
            "element_size": _element_size(value_type, size),
            "device_image_scope": scope,
            "host_access": int(attrs.get("sycl-host-access") or 2),
            "init_mode": attrs.get("sycl-init-mode"),
            "implement_in_csr": attrs.get("sycl-implement-in-csr"),
            "init": "" if g.is_declaration else _initial_bytes(module, name, scope, size).hex(),
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
        if path.endswith((".ll", ".bc")):          # device IR as DPC++ spells it (e.g. hand-written)
            modules.append(load(path))
            continue
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
