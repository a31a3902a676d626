"""A kernel's signature from its IR, and whether a written signature agrees with the IR.

The signature (``passes/support/signature.py``) is what the bundle records and
the runtime packs arguments by; the IR is what the launcher loads them as.  The
two must agree, or a launch reads past its arguments or reads them as the wrong
type.  So:

* ``ir_signature(module, name)``: for a kernel that came from LLVM IR (no
  ``"minisycl-kernel-signature"``), the signature its parameter types imply:
  ``iN`` as ``iN`` (either signedness), ``half``/``float``/``double``, a
  pointer as ``void*`` in its address space (``local void*`` for
  ``addrspace(3)``), ``%"class.sycl::_V1::id.N"`` / ``nd_item.N`` first as the
  work-item, any other struct by value as ``struct NAME{SIZE}``;
* ``check_signature(module, name, sig)``: a written signature (the front
  end's) has one parameter per IR parameter, each of a kind and size the IR
  type can hold.

Anything else - a vector, ``i128``, a literal struct or array by value, a
``byval``, ``inalloca`` or ``sret`` pointer, a struct aligned beyond 8 bytes, a varargs
kernel or one that returns a value - is a ``SignatureError`` naming the
parameter, which the build reports and the runtime refuses to launch.  Struct
sizes and alignments are LLVM's for the runtime's 64-bit little-endian targets
(natural alignment, ``<{ }>`` packed), computed here from the type text.
"""
from __future__ import annotations

import re

from ..support.signature import (ADDRESS_SPACES, IR_INTEGERS, MAX_STRUCT_ALIGN, MAX_STRUCT_BYTES, Param, Signature,
                                 SignatureError, parse)
from .lexer import split_operands, split_type, unquote_name
from ..support.ir_contract import SIGNATURE_ATTRIBUTE

__all__ = ["ir_signature", "check_signature", "kernel_signature"]

_ITEM_TYPE = re.compile(r'%"class\.sycl::_V1::(id|nd_item)\.([123])"')
_HALF_TYPE = '%"class.sycl::_V1::detail::half_impl::half"'
_SCALAR_BITS = {"bool": 1, "char": 8, "uchar": 8, "short": 16, "ushort": 16, "int": 32, "uint": 32, "long": 64,
                "ulong": 64, "i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64}
_SPACE = re.compile(r"ptr(?: addrspace\((\d+)\))?")
_REFUSED_ATTRIBUTES = ("byval", "inalloca", "preallocated", "sret", "swifterror", "swiftself", "swiftasync", "nest")
_NAME = re.compile(r'%(?:"[^"]*"|[-\w.$]+)\s*$')
_SIZES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "half": 2, "float": 4, "double": 8}


def kernel_signature(module, name: str) -> Signature:
    """The signature of kernel ``name``: its written one, checked against the IR, or
    the one its IR implies."""
    written = module.function_attributes(name).get(SIGNATURE_ATTRIBUTE)
    if written is None:
        return ir_signature(module, name)
    try:
        sig = parse(written)
    except SignatureError as err:
        raise SignatureError(f"its signature '{_short(written)}': {err}") from None
    check_signature(module, name, sig)
    return sig


def _ir_params(module, name: str) -> list[tuple[str, str]]:
    fn = module.functions[name]
    if fn.return_type != "void":
        raise SignatureError(f"it returns {_short(fn.return_type)} (a kernel returns void)")
    out = []
    for i, op in enumerate(split_operands(fn.params[1:-1])):
        if op.strip() == "...":
            raise SignatureError("it takes a variable number of arguments")
        ty, rest = split_type(op)
        attrs = _NAME.sub("", re.sub(r"\([^)]*\)", "", rest))         # (a parameter may be called %byval)
        words = re.findall(r"[a-z_]+", attrs)
        bad = [w for w in words if w in _REFUSED_ATTRIBUTES]
        if bad:
            raise SignatureError(f"parameter {i + 1} ({_short(ty)}) is passed '{bad[0]}', which a launch cannot do")
        out.append((ty, rest))
    return out


def _item(module, ty: str) -> Param | None:
    m = _ITEM_TYPE.fullmatch(ty)
    if m is None:
        return None
    kind, n = m.group(1), int(m.group(2))
    want = ", ".join([f"[{n} x i64]"] * (5 if kind == "nd_item" else 1))
    body = module.types.get(ty, "").partition(" = type ")[2].strip()
    if body != f"{{ {want} }}":
        raise SignatureError(f"its work-item type {ty} is '{_short(body)}', not {{ {want} }}")
    return Param("item", kind, dims=n)


def ir_signature(module, name: str) -> Signature:
    """The signature kernel ``name``'s IR parameter types imply (module docstring)."""
    params = _ir_params(module, name)
    item = _item(module, params[0][0]) if params else None
    args = []
    for i, (ty, _) in enumerate(params[1:] if item else params, 2 if item else 1):
        if _ITEM_TYPE.fullmatch(ty):
            raise SignatureError(f"parameter {i} ({ty}): a work-item is only the first parameter")
        args.append(_param_of(module, ty, i))
    sig = Signature(item, tuple(args))
    return parse(sig.text)          # the checks every signature gets (a local pointer needs an nd_item)


def _param_of(module, ty: str, i: int) -> Param:
    if ty in IR_INTEGERS:
        return Param("scalar", ty)
    if ty in ("half", "float", "double") or ty == _HALF_TYPE:
        return Param("scalar", "half" if ty == _HALF_TYPE else ty)
    space = _pointer_space(ty, i)
    if space is not None:
        return Param("pointer", pointee="void", space=space)
    if ty.startswith("%"):
        size, _ = _layout(module, ty, i)
        name = unquote_name(ty[1:])
        for prefix in ("struct.", "class.", "union."):
            if name.startswith(prefix):
                name = name[len(prefix):]
                break
        if not re.fullmatch(r"[A-Za-z_$.][\w$.:]*", name, re.ASCII):
            raise SignatureError(f"parameter {i}: struct type {_short(ty)} has a name a signature cannot spell")
        return Param("struct", name, size=size)
    raise SignatureError(f"parameter {i} has type {_short(ty)}, which a kernel launch cannot pass "
                         f"(integers i1-i64, half, float, double, pointers and named structs can)")


def _pointer_space(ty: str, i: int) -> str | None:
    m = _SPACE.fullmatch(ty)
    if m is None:
        if ty.endswith("*"):
            m2 = re.search(r"addrspace\((\d+)\)\s*\*$", ty)
            n = int(m2.group(1)) if m2 else 0
        else:
            return None
    else:
        n = int(m.group(1) or 0)
    names = {v: k for k, v in ADDRESS_SPACES.items()}
    if n not in names:
        raise SignatureError(f"parameter {i} is a pointer in address space {n} (0 to 4 can be passed)")
    return names[n]


def _layout(module, ty: str, i: int, depth: int = 0) -> tuple[int, int]:
    """(size, alignment) of IR type ``ty`` for the runtime's 64-bit targets."""
    ty = ty.strip()
    if depth > 64:
        raise SignatureError(f"parameter {i}: its struct nests more than 64 levels")
    if ty in _SIZES:
        return _SIZES[ty], _SIZES[ty]
    if _SPACE.fullmatch(ty):
        return 8, 8
    if ty.startswith("%"):
        body = module.types.get(ty)
        if body is None:
            raise SignatureError(f"parameter {i}: type {_short(ty)} is not defined")
        body = body.partition(" = type ")[2].strip()
        if body == "opaque":
            raise SignatureError(f"parameter {i}: type {_short(ty)} is opaque")
        size, align = _layout(module, body, i, depth + 1)
        if align > MAX_STRUCT_ALIGN or size > MAX_STRUCT_BYTES or size == 0:
            raise SignatureError(f"parameter {i}: struct {_short(ty)} of {size} bytes aligned to {align} cannot be "
                                 f"passed by value (1 to {MAX_STRUCT_BYTES} bytes, alignment at most "
                                 f"{MAX_STRUCT_ALIGN})")
        return size, align
    m = re.fullmatch(r"\[(\d{1,12}) x (.*)\]", ty, re.S)
    if m:
        size, align = _layout(module, m.group(2), i, depth + 1)
        return size * int(m.group(1)), align
    packed = ty.startswith("<{") and ty.endswith("}>")
    if packed or (ty.startswith("{") and ty.endswith("}")):
        inner = ty[2:-2] if packed else ty[1:-1]
        offset, align = 0, 1
        for field in split_operands(inner) if inner.strip() else []:
            s, a = _layout(module, field, i, depth + 1)
            a = 1 if packed else a
            offset = (offset + a - 1) // a * a + s
            align = max(align, a)
            if offset > MAX_STRUCT_BYTES:
                break
        return (offset + align - 1) // align * align, align
    raise SignatureError(f"parameter {i}: a struct holding {_short(ty)} cannot be passed by value")


def check_signature(module, name: str, sig: Signature) -> None:
    """``SignatureError`` unless ``sig`` describes kernel ``name``'s IR parameters."""
    params = _ir_params(module, name)
    count = len(sig.params) + sig.handler
    if len(params) != count:
        raise SignatureError(f"its signature has {count} parameters ({_short(sig.text)}) but its code "
                             f"takes {len(params)}")
    if sig.handler and not params[-1][0].startswith("ptr"):
        raise SignatureError(f"its last parameter is a kernel_handler but {_short(params[-1][0])} in its code")
    for i, (p, (ty, _)) in enumerate(zip(sig.params, params), 1):
        problem = _disagreement(module, p, ty, i)
        if problem:
            raise SignatureError(f"parameter {i} is '{p.text}' in its signature but {_short(ty)} in its code"
                                 f"{': ' + problem if problem is not True else ''}")


def _disagreement(module, p: Param, ty: str, i: int):
    """None when IR type ``ty`` can hold parameter ``p``; else True or why not."""
    if p.kind == "item":
        m = _ITEM_TYPE.fullmatch(ty)
        if m is None or m.group(1) != p.name or int(m.group(2)) != p.dims:
            return True
        _item(module, ty)
        return None
    if p.kind == "scalar":
        if p.name in _SCALAR_BITS:
            return None if ty == f"i{_SCALAR_BITS[p.name]}" else True
        return None if ty == p.name or (p.name == "half" and ty == _HALF_TYPE) else True
    if p.kind in ("pointer", "reducer"):
        want = p.space if p.kind == "pointer" else ""
        try:
            space = _pointer_space(ty, i)
        except SignatureError as err:
            return str(err)
        return None if space == want else True
    if p.kind == "struct":
        if not ty.startswith("%") or _ITEM_TYPE.fullmatch(ty) or ty == _HALF_TYPE:
            return True
        size, _ = _layout(module, ty, i)
        return None if size == p.size else f"{size} bytes, not {p.size}"
    return True


def _short(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "..."
