"""Specialization constants at run time: each constant's place in the buffer of
values, Python values checked and encoded into it, and read back.

The build lowers reads in emulation mode (``postlink/spec_constants.py``): a
kernel that takes a ``kernel_handler`` reads its constants from a buffer, the
handler's pointer, laid out as the image's ``[SYCL/specialization constants]``
says (per constant ``(id, 0, size)``, then ``(0xFFFFFFFF, size, padding)``
when the next constant is aligned further) and initialised with
``[SYCL/specialization constants default values]``.  The IR type of each
constant comes from the image's ``!sycl.specialization-constants-default-values``
(one node per constant, a ``[N x i8] zeroinitializer`` node for each padding).

A value is checked against that type, so a wrong one is ``errc::invalid``
naming the constant: a scalar as a kernel argument of that type is
(``arguments.slot``: integers that fit, real numbers, ``bool`` for ``i1``); a
struct as a tuple or list of its fields, an array as a list of its elements
(nested alike), or either as exactly ``size`` bytes (``bytes``, a NumPy array
or record).  Reading one back gives the same shapes: a number, a tuple, a list.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass

import numpy as np

from ..passes.ir import Layout, LayoutError, escaped_bytes, split_operands, split_type
from ..postlink.propertyset import PropertySets, u32_values
from .arguments import slot
from .errors import errc, exception
from ..passes.support.ir_contract import SIGNATURE_ATTRIBUTE, SPEC_CONSTANTS, SPEC_CONSTANTS_DEFAULTS

__all__ = ["REPLACED_WITH_DEFAULT", "SpecConstant", "SpecTable", "SPEC_GLOBAL",
           "spec_global", "fold_handler_parameters"]

REPLACED_WITH_DEFAULT = "specConstsReplacedWithDefault"
_PADDING = 0xFFFFFFFF
_DEFAULTS_MD = "sycl.specialization-constants-default-values"


@dataclass(frozen=True)
class SpecConstant:
    """One constant: its symbolic id, place in the buffer and LLVM type."""
    name: str
    offset: int
    size: int
    type: str


class SpecTable:
    """The specialization constants of one image: name -> ``SpecConstant``, and the default buffer."""

    def __init__(self, constants: dict[str, SpecConstant], defaults: bytes, layout: Layout):
        self.constants, self.defaults, self.layout = constants, defaults, layout

    @classmethod
    def of_image(cls, properties: PropertySets, view) -> "SpecTable":
        """The table of an image from its properties and its IR (``view``: its ``Module``)."""
        entries = properties.sets.get(SPEC_CONSTANTS, {})
        raw = properties.get(SPEC_CONSTANTS_DEFAULTS, "all")
        defaults = PropertySets.payload(raw) if raw is not None else b""
        nodes = view.named_metadata_operands(_DEFAULTS_MD) if entries else []
        constants: dict[str, SpecConstant] = {}
        offset, node = 0, 0
        for name, (_, value) in entries.items():
            words = u32_values(value)
            triples = [tuple(words[i:i + 3]) for i in range(0, len(words) - 2, 3)]
            if not triples or node >= len(nodes):
                raise exception(errc.invalid, f"specialization constant '{name}': its descriptors do not match the "
                                              f"image's default values")
            size = triples[0][2]
            ty = split_type(nodes[node][0])[0].strip() if nodes[node] else "i8"
            constants[name] = SpecConstant(name, offset, size, ty)
            node += 1
            padding = sum(t[2] for t in triples[1:] if t[0] == _PADDING)
            if padding:
                node += 1                       # the [N x i8] node of the padding
            offset += size + padding
        if offset > len(defaults):
            raise exception(errc.invalid, "the image's specialization constants do not fit their default values")
        return cls(constants, defaults, Layout(view.types))

    def find(self, name: str) -> SpecConstant | None:
        """A constant by symbolic id or source name (a static one's id ends in ``___<name>``)."""
        found = self.constants.get(name)
        if found is None:
            found = next((c for n, c in self.constants.items() if n.endswith("___" + name)), None)
        return found

    # -- values -------------------------------------------------------------------------

    def encode(self, sc: SpecConstant, value) -> bytes:
        """``value`` as the ``sc.size`` bytes of the buffer, or ``errc::invalid`` naming the constant."""
        where = f"specialization constant '{sc.name}' ({_source_type(sc.type)})"
        try:
            return self._encode(sc.type, value, where)
        except LayoutError as err:
            raise exception(errc.invalid, f"{where}: {err}") from None

    def _encode(self, ty: str, value, where: str) -> bytes:
        size = self.layout.store_size(ty)
        raw = _raw_bytes(value)
        if raw is not None:
            if len(raw) != size:
                raise exception(errc.invalid, f"{where}: the value is {len(raw)} bytes, the constant {size}")
            return raw
        body = self.layout.resolve(ty)
        if not self.layout.is_aggregate(ty):
            bits = slot(body, value, where)
            return int(bits).to_bytes(8, "little")[:size]
        fields = self.layout.field_offsets(ty)
        if not isinstance(value, (list, tuple)):
            shape = "an array" if body.startswith("[") else "a struct"
            raise exception(errc.invalid, f"{where}: the constant is {shape} of {len(fields)} elements: give a list "
                                          f"or tuple of them, or {size} bytes; got {type(value).__name__}")
        if len(value) != len(fields):
            raise exception(errc.invalid, f"{where}: {len(value)} elements given, the constant has {len(fields)}")
        out = bytearray(self.layout.size_align(ty)[0])
        for i, ((fty, off), v) in enumerate(zip(fields, value)):
            part = self._encode(fty, v, f"{where}, element {i}")
            out[off:off + len(part)] = part
        return bytes(out[:size])

    def decode(self, sc: SpecConstant, data: bytes):
        return self._decode(sc.type, data)

    def _decode(self, ty: str, data: bytes):
        body = self.layout.resolve(ty)
        if not self.layout.is_aggregate(ty):
            if body == "i1":
                return bool(data[0])
            if body in ("half", "float", "double"):
                return struct.unpack({"half": "<e", "float": "<f", "double": "<d"}[body], data[:len(data)])[0]
            return int.from_bytes(data, "little", signed=True)
        items = [self._decode(fty, data[off:off + self.layout.store_size(fty)])
                 for fty, off in self.layout.field_offsets(ty)]
        return items if body.startswith("[") or (body.startswith("<") and not body.startswith("<{")) else tuple(items)

    def buffer(self, values: dict[str, bytes]) -> bytes:
        """The buffer with ``values`` (name -> encoded bytes) over the defaults."""
        out = bytearray(self.defaults)
        for name, data in values.items():
            sc = self.constants[name]
            out[sc.offset:sc.offset + sc.size] = data
        return bytes(out)


def _raw_bytes(value) -> bytes | None:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, np.ndarray) or (isinstance(value, np.generic) and value.dtype.kind == "V"):
        return np.ascontiguousarray(value).tobytes()
    return None


def _source_type(ty: str) -> str:
    return {"i1": "bool", "i8": "char", "i16": "short", "i32": "int", "i64": "long"}.get(ty, ty)


#: the constant global a specialised build reads its values from
SPEC_GLOBAL = "__minisycl.spec_constants"


def spec_global(spec: bytes, name: str = SPEC_GLOBAL) -> str:
    """IR of the constant global ``name`` holding a buffer of specialization constant values."""
    return f'@{name} = private unnamed_addr constant [{len(spec)} x i8] c"{escaped_bytes(spec)}", align 16\n'


def fold_handler_parameters(module, kernels, spec: bytes, global_name: str = SPEC_GLOBAL) -> list[str]:
    """For a device that calls kernels directly (no launcher: an NVIDIA GPU), make
    each kernel of ``kernels`` whose last parameter is a ``kernel_handler`` read
    ``spec`` from a constant global instead of that parameter (which stays in
    its signature, unused), so that LLVM folds the values in (the global: ``global_name``;
    one per kernel where kernels of one module read different buffers).  ``module`` is an
    IR-layer ``Module``, edited in place; returns the kernels changed."""
    changed = []
    for name in kernels:
        fn = module.functions.get(name)
        if fn is None or fn.body is None:
            continue
        signature = module.function_attributes(name).get(SIGNATURE_ATTRIBUTE) or ""
        if not signature.endswith("kernel_handler"):
            continue
        last = split_operands(fn.params[1:-1])[-1].split()
        if len(last) < 2 or not last[-1].startswith("%"):
            continue
        param = last[-1]
        body = re.sub(re.escape(param) + r"(?![-a-zA-Z$._0-9])", "@" + global_name, fn.body)
        module.functions[name] = type(fn)(name, fn.header, body)
        changed.append(name)
    if changed:
        module.add_entities(spec_global(spec, global_name))
    return changed
