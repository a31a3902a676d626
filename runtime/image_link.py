"""Device images -> one linked module: the steps every device back end shares.

The CPU JIT (``jit.py``) and the CUDA back end (``cuda/codegen.py``) both start
from the images a program chose (``program.images_to_link``):

1. each image's bitcode is read back as text by LLVM in a child process
   (``read_bundle_bitcode``: a bundle is a file, and corrupt bitcode can abort
   LLVM's reader), and a strong definition that an earlier image already
   provides becomes a declaration, so images that copied the same helper (or
   device global) link cleanly;
2. LLVM links them (``link_images``), its module closed before its context
   whatever is raised;
3. each kernel's signature (the bundle's: what its arguments are packed by) is
   checked against its code (``check_signatures``), and every device global is
   made external, so the runtime finds a static one by name
   (``expose_device_globals``).
"""
from __future__ import annotations

from ..passes.ir import IRError, Module, check_signature, module_text, new_context, parse_and_link, read_untrusted_bitcode
from ..passes.support.ir_contract import DEVICE_GLOBAL_SIZE
from ..passes.support.signature import SignatureError
from .errors import errc, exception

__all__ = ["read_bundle_bitcode", "link_images", "check_signatures", "expose_device_globals"]


def read_bundle_bitcode(bitcode: bytes, what: str, cut=None):
    """Bitcode from a bundle (an image or the host module), verified and printed
    by LLVM in a child process: ``cut(text)``, by default its ``Module``.
    Bitcode LLVM cannot read raises ``sycl.exception`` (``errc.invalid``) naming
    ``what``, never takes the process down."""
    try:
        return read_untrusted_bitcode(bitcode, what, cut)
    except IRError as err:
        raise exception(errc.invalid, str(err)) from None


def _declare_duplicates(modules: list[Module]) -> None:
    """Step 1: later images declare what earlier images already define."""
    defined: set[str] = set()
    for m in modules:
        for name in m.strong_definitions():
            if name in defined:
                m.make_declaration(name)
            else:
                defined.add(name)


def link_images(image_bitcodes: list[bytes], names: list[str], transform=None) -> str:
    """Steps 1-2: the IR text of the images linked by LLVM (``names`` name them in
    errors).  ``transform(module, text) -> text`` runs on LLVM's linked module
    before it is closed (the CPU's SROA)."""
    texts = [read_bundle_bitcode(bc, name) for bc, name in zip(image_bitcodes, names)]
    _declare_duplicates(texts)
    try:
        main = parse_and_link([t.text() for t in texts], new_context())
    except RuntimeError as err:
        raise exception(errc.build, f"linking device images failed: {str(err).strip()}") from None
    try:
        text = module_text(main)
        return transform(main, text) if transform is not None else text
    finally:
        # LLVM's module goes before its context, whatever is raised later (in the
        # other order the garbage collector crashes the process)
        main.close()


def check_signatures(linked: Module, signatures: dict) -> None:
    """Each kernel's signature (the bundle's: what its arguments are packed by)
    describes its code's parameters (``passes/ir/kernel_params.py``), or the kernel
    is refused (``errc::invalid``) before any launch could read its arguments
    wrongly."""
    for k, sig in signatures.items():
        if k in linked.functions and not linked.functions[k].is_declaration:
            try:
                check_signature(linked, k, sig)
            except SignatureError as err:
                raise exception(errc.invalid, f"kernel '{k}' cannot be launched: {err}") from None


def expose_device_globals(linked: Module) -> None:
    """Step 3: a static device global becomes external, so the runtime (the CPU's
    engine, ``cuModuleGetGlobal``) finds it by name."""
    for g in linked.globals_with(DEVICE_GLOBAL_SIZE):
        if linked.globals[g].linkage in ("internal", "private"):
            linked.set_linkage(g, "external")
