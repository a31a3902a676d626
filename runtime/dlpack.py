"""DLPack in ctypes: capsules of ``DLManagedTensor`` going out, and capsules read coming in.

DLPack (``dlpack.h``, v1.0) is how array libraries hand each other memory
without a copy: the producer's ``__dlpack__`` returns a ``PyCapsule`` named
``"dltensor"`` (or ``"dltensor_versioned"``) holding a ``DLManagedTensor``
(pointer, device, shape, strides, dtype), whose ``deleter`` the consumer
calls when it no longer needs the memory; a consumer renames the capsule
``"used_dltensor"`` when it takes it, and a capsule never consumed calls the
deleter when it is destroyed.

Going out (``export``): the structure, its shape array and a reference to
what keeps the memory alive (``keepalive``) live in ``_EXPORTS`` until the
deleter runs, so our memory outlives the consumer's use of it.  Coming in
(``read_capsule``): the capsule is checked (its name, device, dtype,
contiguity), renamed as used, and a ``Imported`` handle calls the producer's
deleter once when it is released, so the producer's memory outlives ours.
Every refusal is ``errc::invalid`` naming what is wrong.

Both directions are on the path of every exchange, so they avoid ctypes objects:
exported structures are written with ``struct`` into slots of a pool, capsules
are read with ``ctypes.string_at`` and ``struct`` (``bench/bench_distributed.py``
times both; the goal is under 5 microseconds).

No compiled code: the structures are ``ctypes.Structure`` laid out as
``dlpack.h`` lays them out on 64-bit hosts, the capsule calls go through
``ctypes.pythonapi``.
"""
from __future__ import annotations

import ctypes
import math
import struct

import numpy as np

from .errors import errc, exception

__all__ = ["DEVICE_TYPES", "CPU", "CUDA", "CUDA_HOST", "CUDA_MANAGED", "export", "read_capsule", "Imported",
           "dtype_of", "device_text", "exports_alive"]

#: ``DLDeviceType`` values this runtime meets
CPU, CUDA, CUDA_HOST, CUDA_MANAGED = 1, 2, 3, 13
DEVICE_TYPES = {1: "kDLCPU", 2: "kDLCUDA", 3: "kDLCUDAHost", 4: "kDLOpenCL", 7: "kDLVulkan", 8: "kDLMetal",
                9: "kDLVPI", 10: "kDLROCM", 11: "kDLROCMHost", 12: "kDLExtDev", 13: "kDLCUDAManaged",
                14: "kDLOneAPI", 15: "kDLWebGPU", 16: "kDLHexagon", 17: "kDLMAIA"}
_READ_ONLY = 1          # DLPACK_FLAG_BITMASK_READ_ONLY
_VERSION = (1, 0)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


#: NumPy kind -> DLPack type code (``DLDataTypeCode``)
_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}
_KINDS = {code: kind for kind, code in _CODES.items()}
_CODE_NAMES = {0: "kDLInt", 1: "kDLUInt", 2: "kDLFloat", 3: "kDLOpaqueHandle", 4: "kDLBfloat", 5: "kDLComplex",
               6: "kDLBool", 7: "kDLFloat8_e3m4"}


def dtype_code(dtype: np.dtype) -> tuple[int, int]:
    """(DLPack code, bits) of a NumPy scalar type, or ``errc::invalid`` (structured types have none)."""
    code = _CODES.get(dtype.kind)
    if code is None or dtype.fields is not None or dtype.byteorder == ">":
        raise exception(errc.invalid, f"memory of element type {dtype} has no DLPack type (only booleans, "
                                      f"integers, floating-point and complex numbers do)")
    return code, dtype.itemsize * 8


def dtype_of(code: int, bits: int, lanes: int) -> np.dtype:
    """The NumPy type of a DLPack ``DLDataType``, or ``errc::invalid`` naming it."""
    found = _DTYPES.get((code, bits, lanes))
    if found is not None:
        return found
    kind = _KINDS.get(code)
    if kind is None or lanes != 1 or bits % 8 or (kind == "b" and bits != 8):
        raise exception(errc.invalid, f"unsupported DLPack element type ({_CODE_NAMES.get(code, f'code {code}')}, "
                                      f"{bits} bits, {lanes} lanes): NumPy has no such type")
    try:
        found = _DTYPES[code, bits, lanes] = np.dtype(f"{kind}{bits // 8}" if kind != "b" else "?")
    except TypeError:
        raise exception(errc.invalid, f"unsupported DLPack element type ({_CODE_NAMES[code]}, {bits} bits)") from None
    return found


def device_text(device_type: int, device_id: int) -> str:
    """A DLPack device as a message names it (``kDLCUDA device 1``)."""
    return f"{DEVICE_TYPES.get(device_type, f'DLPack device type {device_type}')} device {device_id}"


# -- the capsule calls -------------------------------------------------------------

_api = ctypes.pythonapi
_P = ctypes.c_void_p
_new_capsule = ctypes.PYFUNCTYPE(ctypes.py_object, _P, _P, _P)(("PyCapsule_New", _api))
_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, _P)(("PyCapsule_IsValid", _api))
_get_pointer = ctypes.PYFUNCTYPE(_P, ctypes.py_object, _P)(("PyCapsule_GetPointer", _api))
_set_name = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, _P)(("PyCapsule_SetName", _api))
_get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", _api))
# the destructor's argument is the capsule as a bare pointer: it is called while the
# capsule is being destroyed, so no reference may be taken
_raw_valid = ctypes.PYFUNCTYPE(ctypes.c_int, _P, _P)(("PyCapsule_IsValid", _api))
_raw_pointer = ctypes.PYFUNCTYPE(_P, _P, _P)(("PyCapsule_GetPointer", _api))

#: names live as long as the process (a capsule keeps a pointer to its name): their addresses
_NAME_BUFFERS = {name: ctypes.create_string_buffer(name) for name in
                 (b"dltensor", b"dltensor_versioned", b"used_dltensor", b"used_dltensor_versioned")}
_NAMES = {name: ctypes.addressof(buf) for name, buf in _NAME_BUFFERS.items()}
_LEGACY, _VERSIONED = _NAMES[b"dltensor"], _NAMES[b"dltensor_versioned"]
_USED = {_LEGACY: _NAMES[b"used_dltensor"], _VERSIONED: _NAMES[b"used_dltensor_versioned"]}

# -- exported tensors: the structures, written with ``struct`` into slots of a pool --
#
# ``DLManagedTensor`` (64 bytes: the ``DLTensor``, manager_ctx, deleter) and
# ``DLManagedTensorVersioned`` (80 bytes: version, manager_ctx, deleter, flags, the
# ``DLTensor``) as ``tests/runtime/test_interop.py`` checks against the
# ``ctypes.Structure`` definitions above; the one-dimensional shape at byte 88.
_TENSOR = "QiiiBBHQQQ"
_LEGACY_LAYOUT = struct.Struct("<" + _TENSOR + "QQ")
_VERSIONED_LAYOUT = struct.Struct("<IIQQQ" + _TENSOR)
_SHAPE_AT, _SLOT, _BLOCK = 88, 96, 256
_SLOTS: list[tuple] = []            # free (address, buffer, offset)
_BLOCKS: list = []                  # every pool block (never freed: exported addresses stay valid)

#: address of an exported structure -> (keepalive, on_release, its slot)
_EXPORTS: dict[int, tuple] = {}


def _slot() -> tuple:
    if not _SLOTS:
        block = ctypes.create_string_buffer(_SLOT * _BLOCK)
        _BLOCKS.append(block)
        base = ctypes.addressof(block)
        _SLOTS.extend((base + i * _SLOT, block, i * _SLOT) for i in reversed(range(_BLOCK)))
    return _SLOTS.pop()


def _release(address: int) -> None:
    entry = _EXPORTS.pop(address, None)
    if entry is not None:
        _SLOTS.append(entry[2])
        if entry[1] is not None:
            entry[1]()


@_DELETER
def _deleter(address):
    """``DLManagedTensor::deleter``: the consumer is done (or the capsule was never consumed)."""
    _release(address)


@ctypes.CFUNCTYPE(None, _P)
def _capsule_destructor(capsule):
    """A capsule no consumer took still owns its tensor: delete it."""
    for name in (_LEGACY, _VERSIONED):
        if _raw_valid(capsule, name):
            _release(_raw_pointer(capsule, name))
            return


_DELETER_ADDRESS = ctypes.cast(_deleter, _P).value
_DESTRUCTOR_ADDRESS = ctypes.cast(_capsule_destructor, _P).value
#: NumPy type -> (DLPack code, bits), for ``export``
_DTYPE_CODES: dict = {}


def export(address: int, count: int, dtype: np.dtype, device: tuple[int, int], keepalive, *,
           versioned: bool, read_only: bool = False, on_release=None):
    """A DLPack capsule for ``count`` elements of ``dtype`` at ``address`` on ``device``
    (a DLPack ``(device_type, device_id)``); ``keepalive`` is held until the consumer's
    deleter call, then ``on_release()`` runs (when given)."""
    code = _DTYPE_CODES.get(dtype)
    if code is None:
        code = _DTYPE_CODES[dtype] = dtype_code(dtype)
    slot = _slot()
    where, block, at = slot
    shape = where + _SHAPE_AT
    if versioned:
        _VERSIONED_LAYOUT.pack_into(block, at, _VERSION[0], _VERSION[1], where, _DELETER_ADDRESS,
                                    _READ_ONLY if read_only else 0, address, device[0], device[1], 1, code[0],
                                    code[1], 1, shape, 0, 0)
    else:
        _LEGACY_LAYOUT.pack_into(block, at, address, device[0], device[1], 1, code[0], code[1], 1, shape, 0, 0,
                                 where, _DELETER_ADDRESS)
    _SHAPE.pack_into(block, at + _SHAPE_AT, count)
    _EXPORTS[where] = (keepalive, on_release, slot)
    return _new_capsule(where, _VERSIONED if versioned else _LEGACY, _DESTRUCTOR_ADDRESS)


_SHAPE = struct.Struct("<q")


def exports_alive() -> int:
    """How many exported tensors no consumer has released yet (tests)."""
    return len(_EXPORTS)


#: a deleter's address -> a callable for it (made once: a ctypes function object costs microseconds)
_CALLERS: dict[int, object] = {}


class Imported:
    """A tensor taken from a producer's capsule: where its memory is, what it holds,
    and ``release()``, which calls the producer's deleter once."""

    __slots__ = ("_address", "_deleter", "device", "read_only", "dtype", "shape", "count", "address")

    def __init__(self, capsule):
        self._deleter = None
        if type(capsule) is not _CAPSULE:
            raise exception(errc.invalid, f"the object's __dlpack__ result is not a DLPack capsule "
                                          f"({type(capsule).__name__})")
        try:                            # (one call for the usual versioned capsule)
            address, name = _get_pointer(capsule, _VERSIONED), _VERSIONED
        except ValueError:
            raw = _get_name(capsule)
            name = _BY_NAME.get(raw, 0)
            if not name:
                state = "was already consumed" if raw and raw.startswith(b"used_") else "is not a DLPack capsule"
                raise exception(errc.invalid, f"the object's __dlpack__ result {state}") from None
            address = _get_pointer(capsule, name)
        self._address = address
        versioned = name == _VERSIONED
        if versioned:
            major, _, ctx, deleter, flags, *tensor = _VERSIONED_LAYOUT.unpack(ctypes.string_at(address, 80))
        else:
            *tensor, ctx, deleter = _LEGACY_LAYOUT.unpack(ctypes.string_at(address, 64))
            major, flags = _VERSION[0], 0
        if major != _VERSION[0]:
            raise exception(errc.invalid, f"DLPack major version {major} is not supported (this runtime reads 1)")
        _set_name(capsule, _USED[name])         # ours now: the capsule no longer deletes it, we do (release)
        self._deleter = deleter
        try:
            self._read(tensor, flags)
        except exception:
            self.release()
            raise

    def _read(self, tensor, flags: int) -> None:
        data, kind, ident, ndim, code, bits, lanes, shape_at, strides_at, offset = tensor
        self.device = (kind, ident)
        self.read_only = bool(flags & _READ_ONLY)
        dtype = _DTYPES.get((code, bits, lanes))
        self.dtype = dtype if dtype is not None else dtype_of(code, bits, lanes)
        if not 0 <= ndim <= 64:
            raise exception(errc.invalid, f"a DLPack tensor of {ndim} dimensions")
        strides = None
        if not ndim:
            shape = ()
        elif strides_at == shape_at + 8 * ndim:     # side by side (NumPy, torch): one read
            both = _INT64S[2 * ndim].unpack(ctypes.string_at(shape_at, 16 * ndim))
            shape, strides = both[:ndim], both[ndim:]
        else:
            shape = _INT64S[ndim].unpack(ctypes.string_at(shape_at, 8 * ndim))
        if ndim and min(shape) < 0:
            raise exception(errc.invalid, f"a DLPack tensor of shape {shape}")
        self.shape = shape
        self.count = count = math.prod(shape)
        if strides_at and count > 1:
            if strides is None:
                strides = _INT64S[ndim].unpack(ctypes.string_at(strides_at, 8 * ndim))
            expect = 1
            for s, n in zip(reversed(strides), reversed(shape)):
                if n != 1 and s != expect:
                    raise exception(errc.invalid, f"a DLPack tensor with strides {strides} (shape {shape}) is not "
                                                  f"contiguous: make it contiguous first")
                expect *= n
        self.address = (data or 0) + offset

    def release(self) -> None:
        deleter, self._deleter = self._deleter, None
        if deleter:
            call = _CALLERS.get(deleter)
            if call is None:
                call = _CALLERS[deleter] = _DELETER(deleter)
            call(self._address)

    def __del__(self):
        try:
            self.release()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


_CAPSULE = type(_new_capsule(_LEGACY, _LEGACY, None))     # (a capsule of no tensor, never consumed)
_BY_NAME = {b"dltensor": _LEGACY, b"dltensor_versioned": _VERSIONED}
#: n -> the layout of n int64 values (shapes and strides; a format made per call costs microseconds)
_INT64S = [struct.Struct(f"<{n}q") for n in range(129)]
#: (code, bits, lanes) -> NumPy type, for the types met so far
_DTYPES: dict = {}


def read_capsule(capsule) -> Imported:
    """The tensor of a DLPack capsule, taken (see ``Imported``)."""
    return Imported(capsule)
