"""Itanium C++ ABI names of methods, constructors and static members, and
DPC++'s ``sycl-unique-id`` of device globals."""
from __future__ import annotations

import hashlib

_BUILTIN_TYPES = {"void": "v", "bool": "b", "char": "c", "uchar": "h", "short": "s", "ushort": "t",
                  "int": "i", "uint": "j", "long": "l", "ulong": "m", "half": "DF16_", "float": "f",
                  "double": "d"}


def mangle_type(t) -> str:
    if t.is_ptr:
        return ("PU3AS3" if t.space == 3 else "P") + mangle_type(t.pointee)
    if t.is_class:
        return t.mangled
    if t.is_item:
        return f"{len(t.kind)}{t.kind}ILi{t.dims}EE"
    if t.is_array:
        return f"A{t.count}_" + mangle_type(t.elem)
    return _BUILTIN_TYPES[str(t)]


def mangle_params(params) -> str:
    """The parameter list of a mangled function name (``v`` for none)."""
    return "".join(mangle_type(t) for _, t in params) or "v"


def method_name(cls, name: str, params) -> str:
    return f"_ZN{cls.mangled}{len(name)}{name}E{mangle_params(params)}"


def constructor_name(cls, params) -> str:
    """The base-object constructor (``C2``), the one DPC++ calls."""
    return f"_ZN{cls.mangled}C2E{mangle_params(params)}"


def static_member_name(cls, name: str) -> str:
    return f"_ZN{cls.mangled}{len(name)}{name}E"


def unique_id(file: str, name: str) -> str:
    """DPC++'s ``sycl-unique-id`` for a variable with internal linkage: a hash of
    the translation unit, three underscores, then the name."""
    return hashlib.md5(file.encode()).hexdigest()[:16] + "___" + name
