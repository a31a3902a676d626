"""Native object code for the AOT images of ``minisycl build --target``.

Every runtime device runs on this machine's CPU, so an AOT image is compiled
for it: the image's bitcode (that this build just wrote: trusted, so LLVM's
reader runs in process through the IR layer's ``parse_bitcode``) is retargeted
to this machine's triple and data layout and compiled at ``-O2`` as
position-independent code.  ``compile_all`` spreads the images over worker
processes (LLVM's code generation holds the GIL of one interpreter).
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from typing import Callable

import llvmlite.binding as llvm        # target machines only: modules come from the IR layer

from ..passes.ir import Module, host_machine, module_text, parse_bitcode, verify_and_serialize
from ..passes.work_item_loops import lower_work_groups

__all__ = ["for_this_cpu", "compile_native", "compile_all", "lower_for_cpu"]


def for_this_cpu(ref, **machine_options):
    """Retarget LLVM's module ``ref`` (a SPIR module) to this machine's CPU, where
    every runtime device runs; returns the target machine."""
    machine = host_machine(**machine_options)
    ref.triple = llvm.get_process_triple()
    ref.data_layout = str(machine.target_data)
    return machine


def lower_for_cpu(bitcode: bytes) -> bytes:
    """The image with its work-group kernels lowered to one call per work-group
    (``lower-work-groups``), or the image as it is when it has none."""
    module = Module.parse(module_text(parse_bitcode(bitcode)))
    if not lower_work_groups(module):
        return bitcode
    return verify_and_serialize([module], bitcode=True)[0]


def compile_native(bitcode: bytes) -> bytes:
    """Native object code for this machine's CPU from an image's bitcode."""
    ref = parse_bitcode(lower_for_cpu(bitcode))
    return for_this_cpu(ref, opt=2, reloc="pic", codemodel="default").emit_object(ref)


def compile_all(codes: list[bytes], jobs: int | None = None,
                progress: Callable[[int, int], None] | None = None) -> list[bytes]:
    """``compile_native`` of each bitcode, in order, on up to ``jobs`` processes
    (default: the CPU count); ``progress(done, total)`` after each."""
    if not codes:
        return []
    workers = max(1, min(jobs or os.cpu_count() or 1, len(codes)))
    if workers == 1:
        results = map(compile_native, codes)
        pool = None
    else:
        pool = ProcessPoolExecutor(max_workers=workers)
        results = pool.map(compile_native, codes)
    out = []
    try:
        for done, obj in enumerate(results, 1):
            out.append(obj)
            if progress:
                progress(done, len(codes))
    finally:
        if pool is not None:
            pool.shutdown()
    return out
