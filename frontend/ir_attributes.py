"""String attributes (``"key"="value"``) for llvmlite.ir, which only knows LLVM's enum attributes.

DPC++ marks special IR with string attributes (``"sycl-module-id"``,
``"indirectly-callable"``, ``"sycl-unique-id"``, ``"virtual-call"``, ...).  LLVM's
parser accepts them inline after a function header, a call, or a global's
initialiser, and its printer folds them into ``attributes #N`` groups, so one
attribute-set class and one global-variable class cover every place they go.
"""
from __future__ import annotations

from llvmlite import ir


def _quote(text: str) -> str:
    out = []
    for ch in text:
        if ch == '"' or ch == "\\" or not (32 <= ord(ch) < 127):
            out.extend(f"\\{b:02X}" for b in ch.encode())
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def render(key: str, value: str | None = None) -> str:
    """LLVM spelling of one string attribute; ``value=None`` gives a bare ``"key"``."""
    return _quote(key) if value is None else f"{_quote(key)}={_quote(value)}"


class Attributes(ir.values.FunctionAttributes):
    """llvmlite's function attribute set, extended with string attributes."""

    def add(self, name):
        if name.startswith('"'):
            return set.add(self, name)
        return super().add(name)

    def add_string(self, key: str, value: str | None = None) -> None:
        set.add(self, render(key, value))


def string_attributes(obj) -> Attributes:
    """The attribute set of a function or call instruction, upgraded so that
    string attributes can be added to it."""
    if not isinstance(obj.attributes, Attributes):
        upgraded = Attributes()
        for a in obj.attributes:
            upgraded.add(a)
        obj.attributes = upgraded
    return obj.attributes


class GlobalVariable(ir.GlobalVariable):
    """A global variable that can carry string attributes (device globals)."""

    def __init__(self, module, typ, name, addrspace=0):
        super().__init__(module, typ, name, addrspace)
        self.string_attributes: list[str] = []

    def add_string(self, key: str, value: str | None = None) -> None:
        self.string_attributes.append(render(key, value))

    def descr(self, buf):
        super().descr(buf)
        if self.string_attributes:
            buf[-1] = buf[-1].rstrip("\n")
            buf.append(" " + " ".join(self.string_attributes) + "\n")


class Function(ir.Function):
    """llvmlite's function, printing several metadata attachments the way LLVM
    parses them (space-separated: ``!a !0 !b !1``; llvmlite puts commas between)."""

    def _stringify_metadata(self, leading_comma=False):
        return " ".join(f"!{k} {v.get_reference()}" for k, v in self.metadata.items())


class IndirectCallee:
    """A loaded function pointer with its function type, so llvmlite can emit an
    indirect ``call`` under opaque pointers."""

    def __init__(self, value, fnty):
        self.value, self.function_type, self.type = value, fnty, value.type

    def get_reference(self):
        return self.value.get_reference()
