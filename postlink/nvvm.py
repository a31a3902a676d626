"""Kernel entries of ``!nvvm.annotations`` in NVPTX images (issue 32, point 5).

DPC++'s CUDA device code marks kernels with ``!nvvm.annotations`` entries
``!{ptr @k, !"kernel", i32 1}``; upstream's post-link keeps each image's
entries (``cuda-split-per-kernel.ll``).  The LLVM minisycl runs turns such
entries into the ``ptx_kernel`` calling convention when it reads a module,
leaving ``!nvvm.annotations`` without them, so an image would come out with an
empty list.  ``restore_kernel_annotations`` writes the entries back for the
image's ``ptx_kernel`` functions, in module order, after the entries LLVM left
(other kinds of annotation), when the input had ``!nvvm.annotations``: the
image says what upstream's says, and LLVM, reading the image again, finds
entries that agree with the calling convention.
"""
from __future__ import annotations

from ..passes.ir import Module, quote_name
from ..passes.support.ir_contract import NVVM_ANNOTATIONS

__all__ = ["restore_kernel_annotations"]



def restore_kernel_annotations(part: Module) -> None:
    """Add ``!{ptr @k, !"kernel", i32 1}`` to ``!nvvm.annotations`` of ``part``
    for each ``ptx_kernel`` definition that has no entry (see the module docstring)."""
    line = part.named_metadata.get(NVVM_ANNOTATIONS)
    if line is None:
        return
    present = {op.split()[-1] for ops in part.named_metadata_operands(NVVM_ANNOTATIONS) for op in ops[:1]}
    kernels = [n for n, f in part.functions.items()
               if not f.is_declaration and f.calling_conv == "ptx_kernel" and "@" + quote_name(n) not in present]
    if not kernels:
        return
    refs = line[line.index("!{") + 2:line.rindex("}")].strip()
    refs = [r.strip() for r in refs.split(",") if r.strip()]
    number = max(part.metadata, default=-1) + 1
    for name in kernels:
        part.metadata[number] = f'!{number} = !{{ptr @{quote_name(name)}, !"kernel", i32 1}}'
        refs.append(f"!{number}")
        number += 1
    part.named_metadata[NVVM_ANNOTATIONS] = f"!{NVVM_ANNOTATIONS} = !{{{', '.join(refs)}}}"
