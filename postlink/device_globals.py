"""The post-link step's two device-global rules (upstream's
``removeDeviceGlobalFromCompilerUsed`` in ``processInputModule`` and
``ModuleSplitterBase::verifyNoCrossModuleDeviceGlobalUsage``).

Algorithm:
  * Before the split (``trim_compiler_used``): device globals (globals with
    ``"sycl-device-global-size"``) leave ``@llvm.compiler.used``, and a device
    global that nothing else uses is dropped with them.  ``@llvm.used``, which
    upstream erases first, does not count as a use.  The members that stay are
    roots of every image.
  * After the split (``check_image_scope``): a defined device global with the
    ``device_image_scope`` property may be in one image only (dummies do not
    count: they stand in for their real image); a second one is upstream's
    error.
"""
from __future__ import annotations

from ..passes.ir import Module
from .image import Image, SplitError
from .properties import is_image_scope
from ..passes.support.ir_contract import DEVICE_GLOBAL_SIZE

__all__ = ["trim_compiler_used", "check_image_scope"]


def trim_compiler_used(module: Module, dgs: set[str]) -> tuple[set[str], list[str]]:
    """Device globals ``dgs`` out of ``@llvm.compiler.used`` (see the module
    docstring).  Returns (the device globals dropped, the members that stay)."""
    used = module.globals.get("llvm.compiler.used")
    if used is None:
        return set(), []
    users = module.users()
    dead = {r for r in used.refs() if r in dgs and not users.get(r, set()) - {"llvm.used", "llvm.compiler.used"}}
    return dead, [r for r in used.refs() if r not in dgs]


def check_image_scope(images: list[Image]) -> None:
    """Raise ``SplitError`` when a ``device_image_scope`` device global is
    defined in more than one (non-dummy) image."""
    seen: dict[str, int] = {}
    for im in images:
        if im.dummy:
            continue
        for name in im.module.globals_with(DEVICE_GLOBAL_SIZE):
            g = im.module.globals[name]
            attrs = im.module.global_attributes(g)
            if g.is_declaration or not is_image_scope(attrs):
                continue
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:
                raise SplitError(f"device_global variable '{name}' with property \"device_image_scope\" "
                                 f"is used in more than one device image.")
