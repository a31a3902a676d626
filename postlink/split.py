"""Device code split (``sycl-post-link.cpp``'s image loop over upstream's
``ModuleSplitter``; ``docs/formats.md``, "Post-link decisions"):
``split_module`` composes the stages, each a module of its own with its
algorithm in its docstring.

    ir_values.check_values           the numbers later stages read from the IR are in range
    passes.host_only_virtuals.with_vtable_stubs   a module that was not split: vtable slots
                                     of host-only virtual methods name stubs (on a copy)
    outlining.with_created_sets      kernels annotated with the sets they create
                                     objects of (on a copy: the input is never edited)
    aot_filter.emptied_virtual_functions   AOT: sets whose aspects the target lacks
    passes.entry_points              which functions are entry points
    grouping.group_entry_points      entry points into groups, in output order
    image_contents                   per group: what the image holds, Internalize
    nvvm.restore_kernel_annotations  NVPTX: the image's kernels listed in !nvvm.annotations
    outlining                        JIT: virtual functions outlined into their set images
    properties.compute_properties    the image's property sets
    dummies                          JIT: a dummy after a set image that uses aspects
    device_globals.check_image_scope a device_image_scope variable in one image only
    aot_filter.target_compatible     AOT: images the target cannot run are left out

In the AOT flow (a target: ``minisycl build --target``, and ``post-link -o
TARGET,FILE`` on a module with virtual functions) there is no outlining
and there are no dummies: every image is self-contained.
"""
from __future__ import annotations

from ..device_configs.targets import TargetInfo
from ..passes.host_only_virtuals import with_vtable_stubs
from ..passes.ir import Module
from ..passes.ir.bitcode_worker import BitcodeWorker
from .aot_filter import emptied_virtual_functions, target_compatible
from .device_globals import check_image_scope
from .dummies import dummy_image, needs_dummy
from ..passes.entry_points import entry_points
from .grouping import WHOLE, group_entry_points, group_key
from .image import Image, SplitError
from .ir_values import check_values
from .image_contents import KeptExternal, SplitContext, image_module, internalize, live_entry_points
from .outlining import export_virtual_functions, holds_virtual_functions, with_created_sets
from .nvvm import restore_kernel_annotations
from .properties import compute_properties
from ..passes.support.ir_contract import INDIRECTLY_CALLABLE

__all__ = ["Image", "SplitError", "split_module", "entry_points", "group_key", "target_compatible", "SPLIT_MODES",
           "internalize"]

SPLIT_MODES = ("kernel", "source", "auto", "none")


def split_module(module: Module, *, mode: str = "none", only_kernels: bool = False, device_globals: bool = False,
                 target: TargetInfo | None = None, vf_keys: str = "design", serialize: str | None = None
                 ) -> list[Image]:
    """The device images of ``module``, in output order (``module`` itself is
    not changed).  ``mode``: one of ``SPLIT_MODES`` (or ``grouping.WHOLE``,
    ``-ir-output-only``'s no split at all); ``target``: the AOT flow
    for that device config (else the JIT flow); ``device_globals``: write
    ``[SYCL/device globals]`` and check ``device_image_scope``.
    ``serialize`` (``"bitcode"`` or ``"text"``), for a caller that writes
    every image so: where a core is free, LLVM verifies each image (and
    writes its bitcode) as soon as the image is made, in a forked child,
    while the split goes on with the next (``Module.start_verification``,
    ``passes/ir/bitcode_worker.py``; ``verify_and_serialize`` takes the
    results).  Where none is (``BitcodeWorker.beside``), nothing is started:
    the writer has LLVM make each image's code when it writes it, one after
    another, cheaper than taking turns with a thread for one core."""
    if serialize not in (None, "bitcode", "text"):
        raise ValueError(f"serialize: expected 'bitcode', 'text' or None, got {serialize!r}")
    if mode not in SPLIT_MODES and mode != WHOLE:
        raise SplitError(f"unknown split mode '{mode}' (expected one of: {', '.join(SPLIT_MODES)})")
    jit = target is None
    check_values(module)
    module = with_created_sets(with_vtable_stubs(module))
    virtual = module.functions_with(INDIRECTLY_CALLABLE)
    emptied = set() if jit else emptied_virtual_functions(module, target, virtual)
    groups = group_entry_points(module, entry_points(module, kernels_only=only_kernels,
                                                       virtual_functions="include" if jit else "exclude"), mode, jit, virtual)
    ctx = SplitContext.of(module, virtual, jit)
    worker = BitcodeWorker()            # forks only when many images come to it
    images: list[Image] = []
    held: set[str] = set()              # what the kernel images made so far define (for the copier image)
    for key, members, vset, copier in groups:
        part = image_module(ctx, key, members, stub=emptied, copier=copier, held=held)
        members = live_entry_points(part, members)
        if vset is None and mode in ("none", WHOLE):
            held.update(n for n, f in part.functions.items() if not f.is_declaration)
            held.update(n for n, g in part.globals.items() if not g.is_declaration)
        holds_vfs = holds_virtual_functions(members, virtual, jit)
        if holds_vfs:
            export_virtual_functions(part, members, virtual)
        internalize(part, KeptExternal(members, ctx.preserved))
        restore_kernel_annotations(part)
        props = compute_properties(part, members, split=mode, with_device_globals=device_globals, jit=jit,
                                   vf_keys=vf_keys, target=target.name if target else None)
        image = Image(part, members, key, props)
        images.append(image)
        if needs_dummy(image, holds_vfs):
            images.append(dummy_image(image, virtual))
        if serialize is not None and worker.beside():
            for im in images[-2 if images[-1] is not image else -1:]:
                im.module.start_verification(bitcode=serialize == "bitcode", worker=worker)
    worker.finish()                     # (left unfinished by an error: the worker's end kills its child)
    if device_globals and len(images) > 1:
        check_image_scope(images)
    if target is not None:
        images = [im for im in images if target_compatible(im, target)]
    return images
