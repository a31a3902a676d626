"""The build's device-global table: what the runtime needs to know of each
device global, its initial value included.

Algorithm, per global with ``"sycl-device-global-size"`` (keyed by its
``"sycl-unique-id"``, else its name):
  * size, ``device_image_scope``, host access (default 2: read-write), init
    mode and ``implement_in_csr`` come from its attributes;
  * the element size is ``sizeof(remove_all_extents_t<T>)``: the size divided
    by every array extent of ``T``'s LLVM type (``T``: the global's value
    type, or its last field when that is a struct);
  * the initial value is ``size`` bytes as LLVM lays out the initialiser for
    this CPU (the runtime's devices), read 8 bytes in (past the pointer of
    ``{ ptr, T }``) unless ``device_image_scope``: the global alone is
    extracted, compiled by MCJIT and read back from memory (empty for a
    declaration).
"""
from __future__ import annotations

import ctypes

import llvmlite.binding as llvm        # MCJIT only: modules come from the IR layer

from ..passes.ir import Module, parse_assembly, split_operands
from .native import for_this_cpu
from .properties import is_image_scope

__all__ = ["device_global_table", "element_size", "initial_bytes"]


#: the device_global properties the declaration gave (``has_property``), by IR attribute
_PROPERTY_ATTRIBUTES = {"device_image_scope": "sycl-device-image-scope", "host_access": "sycl-host-access",
                        "init_mode": "sycl-init-mode", "implement_in_csr": "sycl-implement-in-csr"}


def element_size(value_type: str, size: int) -> int:
    """``sizeof(remove_all_extents_t<T>)`` from the LLVM type of ``T``: the size
    divided by every array extent (``[4 x [2 x float]]`` → size / 8)."""
    count, rest = 1, value_type.strip()
    while rest.startswith("["):
        n, _, rest = rest[1:].partition(" x ")
        count *= int(n)
        rest = rest[:-1].strip()
    return max(size // max(count, 1), 1)


def initial_bytes(module: Module, name: str, image_scope: bool, size: int) -> bytes:
    """The initial value of ``T`` as bytes: LLVM lays out the global's initialiser
    for this CPU (the runtime's devices) and we read it back."""
    ref = parse_assembly(module.extract([name]).text())
    engine = llvm.create_mcjit_compiler(ref, for_this_cpu(ref))
    try:
        engine.finalize_object()
        addr = engine.get_global_value_address(name)
        return ctypes.string_at(addr + (0 if image_scope else 8), size)
    finally:
        engine.close()          # before the module's context goes (see runtime/jit.py)


def device_global_table(module: Module) -> dict[str, dict]:
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
            "element_size": element_size(value_type, size),
            "device_image_scope": scope,
            "host_access": int(attrs.get("sycl-host-access") or 2),
            "init_mode": attrs.get("sycl-init-mode"),
            "implement_in_csr": attrs.get("sycl-implement-in-csr"),
            "init": "" if g.is_declaration else initial_bytes(module, name, scope, size).hex(),
            "properties": [p for p, a in _PROPERTY_ATTRIBUTES.items() if a in attrs],
        }
    return table
