"""DLPack: capsules of ``DLManagedTensor`` going out, and capsules taken coming in.

DLPack (``dlpack.h``, v1.0) is how array libraries hand each other memory
without a copy: the producer's ``__dlpack__`` returns a ``PyCapsule`` named
``"dltensor"`` (or ``"dltensor_versioned"``) holding a ``DLManagedTensor``
(pointer, device, shape, strides, dtype), whose ``deleter`` the consumer
calls when it no longer needs the memory; a consumer renames the capsule
``"used_dltensor"`` when it takes it, and a capsule never consumed calls the
deleter when it is destroyed.

Going out (``export``): the structure holds a reference to what keeps the
memory alive (``keepalive``) until the deleter runs, so our memory outlives
the consumer's use of it; ``on_release`` (a GPU allocation freed while a
consumer held it) runs when that reference goes.  Coming in (``take``):
the capsule is taken (renamed as used) and checked (dtype, shape,
contiguity); the handle ``take`` returns calls the producer's deleter once,
at ``give_back`` or when it is dropped, so the producer's memory outlives ours.  Every
refusal is ``errc::invalid`` naming what is wrong, and a refused tensor
that was taken is given back at once.

Both directions are on the path of every exchange (``bench/bench_dlpack.py``
times them against NumPy's own; the goal is under 5 microseconds a call), so
the capsules are made, taken and ended by native code, ``dlpack.ll``, called
as Python builtins (``dlpack_native.py``): no ctypes call and no Python
callback on the way.  Python keeps the checks that need words (which dtype,
which device) and the messages.

The ``ctypes.Structure`` definitions below are ``dlpack.h``'s layout on
64-bit hosts, the same as ``dlpack.ll``'s types (``tests/runtime/test_interop.py``
checks one against the other); tests build producers' tensors with them.
"""
from __future__ import annotations

import ctypes

import numpy as np

from .errors import errc, exception

__all__ = ["DEVICE_TYPES", "CPU", "CUDA", "CUDA_HOST", "CUDA_MANAGED", "export", "take", "give_back", "dtype_of",
           "device_text", "exports_alive"]

#: ``DLDeviceType`` values this runtime meets
CPU, CUDA, CUDA_HOST, CUDA_MANAGED = 1, 2, 3, 13
DEVICE_TYPES = {1: "kDLCPU", 2: "kDLCUDA", 3: "kDLCUDAHost", 4: "kDLOpenCL", 7: "kDLVulkan", 8: "kDLMetal",
                9: "kDLVPI", 10: "kDLROCM", 11: "kDLROCMHost", 12: "kDLExtDev", 13: "kDLCUDAManaged",
                14: "kDLOneAPI", 15: "kDLWebGPU", 16: "kDLHexagon", 17: "kDLMAIA"}
_READ_ONLY = 1          # DLPACK_FLAG_BITMASK_READ_ONLY


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


#: ``DLManagedTensor::deleter`` (a producer's, in tests)
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


#: (code, bits, lanes) -> NumPy type, for the types met so far
_DTYPES: dict = {}


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


# -- the native half (dlpack_native.py), loaded on first use -------------------------

_export = _take = _give_back = _alive = None


def _load() -> None:
    global _export, _take, _give_back, _alive
    from .dlpack_native import functions
    _export, _take, _give_back, _alive = functions()


# -- going out ------------------------------------------------------------------------

#: NumPy type -> (DLPack code, bits), for ``export``
_DTYPE_CODES: dict = {}


class _Release:
    """What a consumer of an export holds when the exporter must hear of its end:
    ``keep`` (the memory's keepalive), then ``then()`` when the consumer lets go."""

    __slots__ = ("keep", "then")

    def __init__(self, keep, then):
        self.keep, self.then = keep, then

    def __del__(self):
        self.then()


def export(address: int, count: int, dtype: np.dtype, device: tuple[int, int], keepalive, *,
           versioned: bool, read_only: bool = False, on_release=None):
    """A DLPack capsule for ``count`` elements of ``dtype`` at ``address`` on ``device``
    (a DLPack ``(device_type, device_id)``), one dimension; ``keepalive`` is held until
    the consumer's deleter call (or the unconsumed capsule's end), then ``on_release()``
    runs (when given; at once when no capsule is made, as for a refusal).
    ``read_only`` memory is marked so in a versioned capsule; the legacy one cannot
    say it, so such memory is refused there."""
    if on_release is not None:          # (first: a refusal below drops it, and on_release runs)
        keepalive = _Release(keepalive, on_release)
    code = _DTYPE_CODES.get(dtype)
    if code is None:
        code = _DTYPE_CODES[dtype] = dtype_code(dtype)
    if read_only and not versioned:
        raise exception(errc.invalid, "read-only memory is exported only in a versioned DLPack capsule "
                                      "(__dlpack__(max_version=(1, 0)) or later): the legacy one cannot mark it "
                                      "read-only")
    if _export is None:
        _load()
    return _export(address, count, code[0], code[1], device[0], device[1], versioned | (read_only << 1), keepalive)


def exports_alive() -> int:
    """How many exported tensors no consumer has released yet (tests)."""
    if _alive is None:
        _load()
    return _alive()


# -- coming in ------------------------------------------------------------------------

#: (code | bits << 8 | lanes << 16) -> NumPy type, for the types met so far (the
#: native take looks the type up here)
_BY_KEY: dict = {}


def take(capsule) -> tuple:
    """The tensor of a producer's DLPack capsule, taken (renamed as used):
    ``(handle, address, device, dtype, count, read_only)``, ``address`` where its
    first element is (``byte_offset`` included), ``device`` a DLPack
    ``(device_type, device_id)``, ``read_only`` 0 or 1.  ``give_back(handle)``
    calls the producer's deleter once; so does the handle's end, whichever comes
    first.  A capsule that is not a DLPack tensor's, or holds one this runtime
    cannot use (an unknown element type, a malformed or non-contiguous shape,
    another major version), is ``errc::invalid``, and a tensor taken is given
    back at once."""
    if _take is None:
        _load()
    got = _take(capsule, _BY_KEY)
    if got.__class__ is int:
        raise _not_taken(capsule, got)
    if len(got) != 6:                   # (a type met for the first time, or a refusal)
        handle, address, device, dtype, count, read_only, detail = got
        try:
            if dtype.__class__ is int:      # (its key)
                key = dtype
                dtype = _BY_KEY[key] = dtype_of(key & 0xFF, (key >> 8) & 0xFF, key >> 16)
            if detail:
                raise _refusal(*detail)
        except exception:
            _give_back(handle)
            raise
        return handle, address, device, dtype, count, read_only
    return got


def give_back(handle) -> None:
    """Call the producer's deleter of a tensor ``take`` gave ``handle`` of, unless it was already."""
    _give_back(handle)


def managed_address(handle) -> int:
    """The address of the producer's ``DLManagedTensor`` of a ``take`` handle (tests)."""
    return _get_pointer(handle, b"minisycl.dlpack_import")


def _not_taken(capsule, why: int) -> exception:
    """The refusal of a capsule ``dlpack.ll``'s take did not take (``why``: 1 no tensor's
    capsule, 2 a versioned one of another major version)."""
    if why == 2:
        major = ctypes.c_uint32.from_address(_get_pointer(capsule, b"dltensor_versioned")).value
        return exception(errc.invalid, f"DLPack major version {major} is not supported (this runtime reads 1)")
    if type(capsule) is not _CAPSULE:
        return exception(errc.invalid, f"the object's __dlpack__ result is not a DLPack capsule "
                                       f"({type(capsule).__name__})")
    raw = _get_name(capsule)
    state = "was already consumed" if raw and raw.startswith(b"used_") else "is not a DLPack capsule"
    return exception(errc.invalid, f"the object's __dlpack__ result {state}")


def _refusal(problem: int, ndim: int, shape: tuple, strides) -> exception:
    """The refusal of a taken tensor (``problem``: as ``dlpack.ll``'s take says)."""
    if problem in (1, 5):
        what = "" if problem == 1 else " without a shape"
        return exception(errc.invalid, f"a DLPack tensor of {ndim} dimensions{what}")
    if problem == 2:
        return exception(errc.invalid, f"a DLPack tensor of shape {shape}")
    if problem == 4:
        return exception(errc.invalid, f"a DLPack tensor of shape {shape} has more elements than memory can hold")
    return exception(errc.invalid, f"a DLPack tensor with strides {strides} (shape {shape}) is not "
                                   f"contiguous: make it contiguous first")


# capsule calls for refusals' messages and tests only (a ctypes call costs microseconds)
_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
_get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", ctypes.pythonapi))
#: the type of capsules (one of no tensor made to learn it)
_CAPSULE = type(ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi))(1, None, None))
