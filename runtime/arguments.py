"""Python values checked against a parameter type and put in an 8-byte slot.

Kernels and host functions take their arguments as 8-byte slots.  A value is
checked against its parameter's type first, so a wrong one is an
``exception(errc.invalid)`` naming the parameter, never a ``ctypes`` or
``struct`` error or a silently truncated number:

* integers must fit the type (``2**40`` for an ``int`` is refused, as C++'s
  narrowing rules would; an unsigned type takes no negative value);
* ``float``/``half``/``double`` take any real number that the type can hold
  (infinities and NaN included; a finite value beyond the type's range is
  refused);
* a pointer takes a USM allocation whose element type matches the pointee
  (``float`` memory for an ``int*`` is refused; integer types of the same
  width match, as do any elements for a pointer to a struct), ``None`` (a null
  pointer), or an integer address: 0 or one inside a live USM allocation.

* a struct by value (``struct P{16}``) takes its bytes: a bytes-like object of
  its size or one NumPy structured value of that size; they are copied into
  the slots after the parameters' own (``pack_slots``).

Kernel parameters are named by the types of the bundle's kernel signatures
(``passes/support/signature.py``: ``int*``, ``uint``, ``i32`` from LLVM IR,
``global void*``); host-function parameters by their IR types
(``i32``, ``ptr``), which say nothing of signedness: any value of the width fits.
"""
from __future__ import annotations

import ctypes
import struct

import numpy as np

from ..passes.support.signature import Param, Signature, parse_param

from .errors import Refused as _Refused, errc, exception
from .memory import allocation_at, usm_allocation
from .reductions import reduction_packer
from .work_groups import pack_local

__all__ = ["slot", "pack_slots", "repack_slots", "packing_plan", "element_bytes", "SCALARS", "pointer_target"]

#: source type -> NumPy type of the value
SCALARS = {"bool": np.bool_, "char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
           "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64,
           "half": np.float16, "float": np.float32, "double": np.float64}
#: parameter type (source or IR) -> ("int", low, high, bits) or ("float", bits)
_KINDS: dict[str, tuple] = {}
for _name, _kind in SCALARS.items():
    _dt = np.dtype(_kind)
    if _dt.kind == "f":
        _KINDS[_name] = ("float", _dt.itemsize * 8)
    elif _dt.kind == "b":
        _KINDS[_name] = ("int", 0, 1, 8)
    else:
        _KINDS[_name] = ("int", int(np.iinfo(_dt).min), int(np.iinfo(_dt).max), _dt.itemsize * 8)
for _bits in (8, 16, 32, 64):                       # IR integers: either signedness
    _KINDS[f"i{_bits}"] = ("int", -(1 << (_bits - 1)), (1 << _bits) - 1, _bits)
_KINDS.update({"i1": ("int", 0, 1, 1), "float": ("float", 32), "double": ("float", 64)})


def slot(ty: str, value, where: str) -> int:
    """The 8-byte slot of ``value`` for a parameter of type ``ty``; ``where`` names the parameter."""
    try:
        return _slot(ty, value)
    except _Refused as refused:
        raise exception(errc.invalid, refused.say(where)) from None


def pack_slots(params: list[str], args, slots, where, handler: bool = False, only=None) -> None:
    """``slots[i]`` for each argument; ``where(i, ty)`` names parameter ``i`` in an error.
    A struct argument's bytes go in the slots after the parameters' own
    (``Signature.struct_slots``; ``slots`` has room for them), its own slot holding
    their address, so they live as long as ``slots``; ``handler``: a slot for a
    ``kernel_handler`` comes before them (the caller fills it).  ``only``: the
    indices of the (non-struct) arguments to check and pack, the other slots
    kept (a launch that repeats the previous one's other arguments)."""
    if only is None:
        _fill(slots, tuple(params), args, enumerate(args), handler, where, True)
    else:
        values = {i: args[i] for i in only}
        _fill(slots, tuple(params), values, values.items(), handler, where, False)


def repack_slots(params: tuple[str, ...], indexes, value, old, where, handler: bool = False, plan=None):
    """New slots: a copy of ``old`` with ``value`` packed again for each argument
    of ``indexes``, the others as they were: a dynamic parameter's update (one
    value for the arguments registered with it, ``KernelCommand.repacked``).
    ``old`` is left as it was: slots may be shared (an executable graph's copy of
    a command holds them).  A refused value raises, as ``pack_slots`` refuses it.
    Without struct arguments (whose slots point into the copy's own bytes:
    ``_fill`` repoints them) this packs the value directly: an update's hot path.
    ``plan``: ``packing_plan(params, handler)``, where the caller keeps it (a
    kernel does: a look-up hashes the whole signature)."""
    packs, structs = plan or _PLANS.get((params, handler)) or _plan(params, handler)
    slots = type(old).from_buffer_copy(old)
    if structs:
        values = dict.fromkeys(indexes, value)
        _fill(slots, params, values, values.items(), handler, where, False)
        return slots
    i = 0
    try:
        for i in indexes:
            slots[i] = packs[i](value)
    except _Refused as refused:
        raise exception(errc.invalid, refused.say(where(i, params[i]))) from None
    return slots


def _fill(slots, params: tuple, values, items, handler: bool, where, every: bool) -> None:
    """Pack ``items`` ((index, value) pairs; ``values[index]`` is the value) into
    ``slots``; every struct argument's slot is pointed at its bytes in ``slots``,
    which those of ``items`` get (``every``: all arguments are in ``items``)."""
    packs, structs = _PLANS.get((params, handler)) or _plan(params, handler)
    i = 0
    try:
        for i, value in items:
            slots[i] = packs[i](value)
        if structs:
            base = ctypes.addressof(slots)
            for i, at, size in structs:
                if every or i in values:
                    ctypes.memmove(base + 8 * at, _struct_bytes(values[i], size), size)
                slots[i] = base + 8 * at
    except _Refused as refused:
        raise exception(errc.invalid, refused.say(where(i, params[i]))) from None


#: parameter types -> (their packers, ``Signature.struct_slots``)
_PLANS: dict[tuple, tuple] = {}


def packing_plan(params: tuple, handler: bool = False) -> tuple:
    """(each parameter's packer, where struct arguments' bytes go) for a signature: ``_plan``'s, made once."""
    return _PLANS.get((params, handler)) or _plan(params, handler)


def _plan(params: tuple, handler: bool = False) -> tuple:
    """For each parameter type of ``params`` (a kernel signature's arguments, as
    ``passes/support/signature.py`` spells them), the function that checks a value
    and makes its slot (raising ``_Refused``), and where struct arguments' bytes
    go: chosen once per signature, so a launch does not look its types up again."""
    sig = Signature(None, tuple(parse_param(ty) for ty in params), handler)
    found = _PLANS[params, handler] = (tuple(_packer(p) for p in sig.args), sig.struct_slots())
    return found


def _packer(param: Param):
    ty = param.text
    if param.kind == "pointer" and param.space == "local":      # work-group memory (work_groups.py)
        return lambda value: pack_local(ty, value)
    if param.kind == "reducer":                     # a sycl.reduction (reductions.py)
        return reduction_packer(ty)
    if param.kind == "struct":                      # its bytes: pack_slots
        size = param.size
        return lambda value: _struct_bytes(value, size) and 0
    exact = _EXACT.get(ty)
    if exact is not None:
        def pointer(value):
            if type(value) is usm_allocation and not value.freed and value.dtype is exact:
                return value.ptr                    # the common case, directly (_pointer checks the rest)
            return _pointer(ty, value)
        return pointer
    kind = _KINDS.get(ty)
    if kind is not None and kind[0] == "int":
        _, low, high, bits = kind
        mask = (1 << bits) - 1

        def integer(value):
            if type(value) is int and low <= value <= high:
                return value & mask                 # the common case, directly (_integer checks the rest)
            return _slot(ty, value)
        return integer
    return lambda value: _slot(ty, value)


def _struct_bytes(value, size: int) -> bytes:
    """The bytes of a struct argument of ``size`` bytes: a bytes-like object of
    that length, or one element of a NumPy structured type of that size (a
    ``numpy.void`` or a one-element array)."""
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.reshape(())[()]
    if isinstance(value, np.void):
        data = value.tobytes()
        if len(data) != size:
            raise _Refused(lambda where: f"{where} is a {size}-byte struct, got a {len(data)}-byte "
                                         f"{value.dtype} value")
        return data
    if isinstance(value, (bytes, bytearray, memoryview)):
        try:
            data = bytes(value) if not isinstance(value, memoryview) else value.tobytes()
        except (TypeError, ValueError, BufferError):
            data = None
        if data is None or len(data) != size:
            raise _Refused(lambda where: f"{where} is a {size}-byte struct, got "
                                         f"{'an unreadable buffer' if data is None else f'{len(data)} bytes'}")
        return data
    raise _Refused(lambda where: f"{where} is a {size}-byte struct: pass its bytes (bytes, or a NumPy "
                                 f"structured value of that size), got {type(value).__name__}")


def _slot(ty: str, value) -> int:
    kind = _KINDS.get(ty)
    if kind is None:
        if ty.endswith("*") or ty == "ptr":
            return _pointer(ty, value)
        raise _Refused(lambda where: f"{where}: passing a {ty} by value is not supported by this runtime")
    if kind[0] == "float":
        return _float(kind[1], value)
    return _integer(value, kind[1], kind[2], kind[3])


def _integer(value, low: int, high: int, bits: int) -> int:
    if not isinstance(value, (int, np.integer, bool, np.bool_)):
        raise _Refused(lambda where: f"{where} must be an integer, got {type(value).__name__}")
    v = int(value)
    if not low <= v <= high:
        raise _Refused(lambda where: f"{where}: {_shown(v)} does not fit (the type holds {low} to {high})")
    return v & ((1 << bits) - 1)


def _shown(value) -> str:
    """``value`` for a message: a number of hundreds of digits shortened."""
    number = isinstance(value, (int, np.integer))
    text = str(int(value)) if number else repr(value)
    return text if len(text) <= 40 else f"{text[:12]}...{text[-6:]} ({len(text)} {'digits' if number else 'characters'})"


_PACK = {16: ("<e", "<H"), 32: ("<f", "<I"), 64: ("<d", "<Q")}


def _float(bits: int, value) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise _Refused(lambda where: f"{where} must be a number, got {type(value).__name__}")
    as_float, as_int = _PACK[bits]
    try:
        return struct.unpack(as_int, struct.pack(as_float, float(value)))[0]
    except OverflowError:                   # finite, but rounds beyond the type's largest value
        raise _Refused(lambda where: f"{where}: {_shown(value)} is beyond the range of the type") from None


def pointer_target(ty: str):
    """The NumPy type a pointer parameter's memory holds, or ``None`` for any (a struct, ``void*``)."""
    kind = SCALARS.get(ty[:-1].strip()) if ty.endswith("*") else None
    return np.dtype(kind) if kind is not None else None


#: pointer type -> (the NumPy type its memory holds or None, the integer types of its width)
_TARGETS: dict[str, tuple] = {}


def _target(ty: str) -> tuple:
    found = _TARGETS.get(ty)
    if found is None:
        want = pointer_target(ty)
        same = () if want is None or want.kind not in "iu" else (np.dtype(f"i{want.itemsize}"),
                                                                  np.dtype(f"u{want.itemsize}"))
        found = _TARGETS[ty] = (want, same)
    return found


def _pointer(ty: str, value) -> int:
    if isinstance(value, usm_allocation):
        if value.freed:
            raise _Refused(value.freed_text)
        want, same = _target(ty)
        if want is not None and value.dtype is not want and value.dtype != want and value.dtype not in same:
            raise _Refused(lambda where: f"{where} needs memory of {ty[:-1]} ({want}), got a USM allocation "
                                         f"of {value.dtype}")
        return value.ptr
    if value is None:
        return 0
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        v = int(value)
        if v != 0 and allocation_at(v) is None:
            raise _Refused(lambda where: f"{where}: address {v:#x} is not inside a live USM allocation")
        return v
    raise _Refused(lambda where: f"{where} must be a USM allocation, got {type(value).__name__}")


#: pointer type -> the NumPy type its memory holds, for the pointers whose memory must hold exactly that
_EXACT = {f"{name}*": np.dtype(kind) for name, kind in SCALARS.items()}

#: NumPy type -> source type name, for ``element_bytes``
_NAMES = {np.dtype(v): k for k, v in SCALARS.items()}


def element_bytes(dtype: np.dtype, value, where: str) -> bytes:
    """The bytes of ``value`` as one element of ``dtype`` (a ``fill`` pattern),
    checked as a parameter of that type would be."""
    name = _NAMES.get(np.dtype(dtype))
    if name is not None:
        return slot(name, value, where).to_bytes(8, "little")[:np.dtype(dtype).itemsize]
    try:
        element = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as err:
        raise exception(errc.invalid, f"{where}: {value!r} is not a {dtype} ({err})") from None
    if element.shape != ():
        raise exception(errc.invalid, f"{where} must be one element of {dtype}, got shape {element.shape}")
    return element.tobytes()
