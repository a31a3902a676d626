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
    ``{ ptr, T }``) unless ``device_image_scope``: the global and the globals
    its initialiser reaches are extracted (functions and declarations as
    placeholders), compiled by MCJIT and read back from memory (empty for a
    declaration);
  * ``relocations``: each pointer in ``T`` that holds the address of a symbol
    (a polymorphic ``T``'s vtable pointer) is ``[offset, symbol, addend]``
    and zero in ``init``: the runtime writes the symbol's address in the
    program that binds the storage (an address of the build machine would
    mean nothing there, and would make the bundle differ between builds).
"""
from __future__ import annotations

import ctypes

import llvmlite.binding as llvm        # MCJIT only: modules come from the IR layer

from ..passes.ir import Function, Global, IRError, Module, parse_assembly, quote_name, split_operands
from .native import for_this_cpu
from .properties import device_global_size, is_image_scope
from ..passes.support.ir_contract import (DEVICE_GLOBAL_SIZE, DEVICE_IMAGE_SCOPE, HOST_ACCESS, IMPLEMENT_IN_CSR,
                                          INIT_MODE, UNIQUE_ID)

__all__ = ["device_global_table", "element_size", "element_type", "initial_bytes"]


#: the device_global properties the declaration gave (``has_property``), by IR attribute
_PROPERTY_ATTRIBUTES = {"device_image_scope": DEVICE_IMAGE_SCOPE, "host_access": HOST_ACCESS,
                        "init_mode": INIT_MODE, "implement_in_csr": IMPLEMENT_IN_CSR}


def element_size(value_type: str, size: int) -> int:
    """``sizeof(remove_all_extents_t<T>)`` from the LLVM type of ``T``: the size
    divided by every array extent (``[4 x [2 x float]]`` → size / 8)."""
    count, rest = 1, value_type.strip()
    while rest.startswith("["):
        n, _, rest = rest[1:].partition(" x ")
        count *= int(n)
        rest = rest[:-1].strip()
    return max(size // max(count, 1), 1)


def element_type(value_type: str) -> str:
    """The LLVM type of ``remove_all_extents_t<T>`` (``[4 x [2 x float]]`` →
    ``float``): what ``copy`` checks a host array's element type against."""
    rest = value_type.strip()
    while rest.startswith("["):
        rest = rest[1:].partition(" x ")[2][:-1].strip()
    return rest


def _zero_initialised(g: Global, image_scope: bool, value_type: str) -> bool:
    """Whether ``T``'s initial value is written as ``zeroinitializer`` (the whole
    global's, or the ``T`` field's of ``{ ptr null, T }``): no bytes are laid out
    or stored for it, so ``device_global<int[100000000]>`` costs neither a
    400 MB compile nor a 400 MB bundle."""
    span = g.initializer()
    if span is None:
        return False
    text = g.line[span[0]:span[1]]
    if text == "zeroinitializer":
        return True
    return not image_scope and text == f"{{ ptr null, {value_type} zeroinitializer }}"


def initial_bytes(module: Module, name: str, image_scope: bool, size: int) -> tuple[bytes, list]:
    """The initial value of ``T`` as bytes, and its relocations (module
    docstring): LLVM lays out the global's initialiser for this CPU (the
    runtime's devices) and we read it back."""
    ref = parse_assembly(_layout_module(module, name).text())
    engine = llvm.create_mcjit_compiler(ref, for_this_cpu(ref))
    try:
        td = engine.target_data
        # (LLVM's getGlobalVariable skips internal globals: look through the list)
        value_type = next(g for g in ref.global_variables if g.name == name).global_value_type
        if not image_scope:
            value_type = list(value_type.elements)[-1]
        offsets = list(_pointer_offsets(value_type, td, 0))
        others = [(g.name, td.get_abi_size(g.global_value_type)) for g in ref.global_variables if g.name != name] \
            if offsets else []
        functions = [f.name for f in ref.functions] if offsets else []
        engine.finalize_object()
        start = engine.get_global_value_address(name) + (0 if image_scope else 8)
        data = bytearray(ctypes.string_at(start, size))
        symbols = sorted((engine.get_global_value_address(n), length, n) for n, length in others)
        symbols += sorted((engine.get_function_address(n), 1, n) for n in functions)
        relocations = []
        for offset in offsets:
            value = int.from_bytes(data[offset:offset + 8], "little")
            target = next(((s, n) for s, length, n in symbols if value and s <= value < s + max(length, 1)), None)
            if target is not None:
                relocations.append([offset, target[1], value - target[0]])
                data[offset:offset + 8] = bytes(8)
        return bytes(data), relocations
    finally:
        engine.close()          # before the module's context goes (see runtime/jit.py)


def _layout_module(module: Module, name: str) -> Module:
    """``name`` and every global its initialiser reaches, defined; functions
    and declared globals as placeholders (their addresses are all that is read)."""
    names = module.closure([name], skip_bodies_of=module.functions)
    part = module.extract([n for n in names if n in module.globals],
                          declare=[n for n in names if n in module.functions])
    for fn in list(part.functions):
        part.functions[fn] = Function(fn, f"define void @{quote_name(fn)}() {{", "entry:\n  unreachable\n}\n")
    for n, g in list(part.globals.items()):
        if g.is_alias:
            raise IRError(f"device global @{name}: its initial value refers to alias @{n}, which is not supported")
        if g.is_declaration:
            part.globals[n] = Global(n, f"@{quote_name(n)} = global {g.value_type} zeroinitializer")
    return part


def _pointer_offsets(ty, td, base: int):
    """Byte offsets of the pointers inside a value of LLVM type ``ty``."""
    if ty.is_pointer:
        yield base
    elif ty.is_struct:
        for i, e in enumerate(ty.elements):
            if _holds_pointer(e):
                yield from _pointer_offsets(e, td, base + td.get_element_offset(ty, i))
    elif (ty.is_array or ty.is_vector) and _holds_pointer(ty):
        elem = next(iter(ty.elements))
        step = td.get_abi_size(elem)
        for k in range(ty.element_count):
            yield from _pointer_offsets(elem, td, base + k * step)


def _holds_pointer(ty) -> bool:
    if ty.is_pointer:
        return True
    if ty.is_struct or ty.is_array or ty.is_vector:
        return any(_holds_pointer(e) for e in ty.elements)
    return False


def device_global_table(module: Module) -> dict[str, dict]:
    """unique id → what the runtime needs to know of each device global."""
    table = {}
    for name in module.globals_with(DEVICE_GLOBAL_SIZE):
        g = module.globals[name]
        attrs = module.global_attributes(name)
        size = device_global_size(name, attrs)
        scope = is_image_scope(attrs)
        fields = split_operands(g.value_type.strip()[1:-1]) if g.value_type.startswith("{") else [g.value_type]
        value_type = fields[-1]
        if g.is_declaration or _zero_initialised(g, scope, value_type):
            init, relocations = b"", []
        else:
            init, relocations = initial_bytes(module, name, scope, size)
            if not relocations and init.count(0) == len(init):
                init = b""          # all zeros: stored as none (the runtime zero-fills)
        entry = table[attrs.get(UNIQUE_ID) or name] = {
            "name": name,
            "size": size,
            "element_size": element_size(value_type, size),
            "element_type": element_type(value_type),
            "device_image_scope": scope,
            "host_access": int(attrs.get(HOST_ACCESS) or 2),
            "init_mode": attrs.get(INIT_MODE),
            "implement_in_csr": attrs.get(IMPLEMENT_IN_CSR),
            "init": init.hex(),
            "properties": [p for p, a in _PROPERTY_ATTRIBUTES.items() if a in attrs],
        }
        if relocations:
            entry["relocations"] = relocations
    return table
