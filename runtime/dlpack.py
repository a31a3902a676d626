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

No compiled code: the structures are ``ctypes.Structure`` laid out as
``dlpack.h`` lays them out on 64-bit hosts, the capsule calls go through
``ctypes.pythonapi``.
"""
from __future__ import annotations

import ctypes
import threading

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
    kind = _KINDS.get(code)
    if kind is None or lanes != 1 or bits % 8 or (kind == "b" and bits != 8):
        raise exception(errc.invalid, f"unsupported DLPack element type ({_CODE_NAMES.get(code, f'code {code}')}, "
                                      f"{bits} bits, {lanes} lanes): NumPy has no such type")
    try:
        return np.dtype(f"{kind}{bits // 8}" if kind != "b" else "?")
    except TypeError:
        raise exception(errc.invalid, f"unsupported DLPack element type ({_CODE_NAMES[code]}, {bits} bits)") from None


def device_text(device_type: int, device_id: int) -> str:
    """A DLPack device as a message names it (``kDLCUDA device 1``)."""
    return f"{DEVICE_TYPES.get(device_type, f'DLPack device type {device_type}')} device {device_id}"


# -- the capsule calls -------------------------------------------------------------

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]
# the destructor's argument is the capsule as a bare pointer: it is called while the
# capsule is being destroyed, so no reference may be taken
_raw_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_IsValid", _api))
_raw_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_GetPointer", _api))

#: names live as long as the process: a capsule keeps a pointer to its name
_NAMES = {name: ctypes.create_string_buffer(name) for name in
          (b"dltensor", b"dltensor_versioned", b"used_dltensor", b"used_dltensor_versioned")}

#: address of an exported structure -> (the structure, its shape array, keepalive, on_release)
_EXPORTS: dict[int, tuple] = {}
_lock = threading.Lock()


def _release(address: int) -> None:
    with _lock:
        entry = _EXPORTS.pop(address, None)
    if entry is not None and entry[3] is not None:
        entry[3]()


@_DELETER
def _deleter(address):
    """``DLManagedTensor::deleter``: the consumer is done (or the capsule was never consumed)."""
    _release(address)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    """A capsule no consumer took still owns its tensor: delete it."""
    for name in (b"dltensor", b"dltensor_versioned"):
        if _raw_valid(capsule, name):
            _release(_raw_pointer(capsule, name))
            return


def export(address: int, count: int, dtype: np.dtype, device: tuple[int, int], keepalive, *,
           versioned: bool, read_only: bool = False, on_release=None):
    """A DLPack capsule for ``count`` elements of ``dtype`` at ``address`` on ``device``
    (a DLPack ``(device_type, device_id)``); ``keepalive`` is held until the consumer's
    deleter call, then ``on_release()`` runs (when given)."""
    code, bits = dtype_code(dtype)
    shape = (ctypes.c_int64 * 1)(count)
    managed = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    t = managed.dl_tensor
    t.data, t.ndim, t.shape, t.strides, t.byte_offset = address, 1, shape, None, 0
    t.device.device_type, t.device.device_id = device
    t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
    where = ctypes.addressof(managed)
    managed.manager_ctx = where
    managed.deleter = ctypes.cast(_deleter, ctypes.c_void_p).value
    if versioned:
        managed.version.major, managed.version.minor = _VERSION
        managed.flags = _READ_ONLY if read_only else 0
    with _lock:
        _EXPORTS[where] = (managed, shape, keepalive, on_release)
    name = b"dltensor_versioned" if versioned else b"dltensor"
    return _api.PyCapsule_New(where, _NAMES[name], ctypes.cast(_capsule_destructor, ctypes.c_void_p).value)


def exports_alive() -> int:
    """How many exported tensors no consumer has released yet (tests)."""
    return len(_EXPORTS)


class Imported:
    """A tensor taken from a producer's capsule: where its memory is, what it holds,
    and ``release()``, which calls the producer's deleter once."""

    def __init__(self, capsule):
        versioned = bool(_api.PyCapsule_IsValid(capsule, _NAMES[b"dltensor_versioned"]))
        if not versioned and not _api.PyCapsule_IsValid(capsule, _NAMES[b"dltensor"]):
            raw = _api.PyCapsule_GetName(capsule) if type(capsule).__name__ == "PyCapsule" else None
            state = "was already consumed" if raw and raw.startswith(b"used_") else "is not a DLPack capsule"
            raise exception(errc.invalid, f"the object's __dlpack__ result {state}")
        name = b"dltensor_versioned" if versioned else b"dltensor"
        address = _api.PyCapsule_GetPointer(capsule, _NAMES[name])
        kind = DLManagedTensorVersioned if versioned else DLManagedTensor
        self._managed = kind.from_address(address)
        self._address, self._released = address, False
        if versioned and self._managed.version.major != _VERSION[0]:
            major = self._managed.version.major
            raise exception(errc.invalid, f"DLPack major version {major} is not supported (this runtime reads 1)")
        # ours now: the capsule no longer deletes it, we do (release)
        _api.PyCapsule_SetName(capsule, _NAMES[b"used_" + name])
        try:
            self._read(versioned)
        except exception:
            self.release()
            raise

    def _read(self, versioned: bool) -> None:
        t = self._managed.dl_tensor
        self.device = (t.device.device_type, t.device.device_id)
        self.read_only = bool(versioned and self._managed.flags & _READ_ONLY)
        self.dtype = dtype_of(t.dtype.code, t.dtype.bits, t.dtype.lanes)
        if t.ndim < 0:
            raise exception(errc.invalid, f"a DLPack tensor of {t.ndim} dimensions")
        shape = [t.shape[i] for i in range(t.ndim)]
        if any(s < 0 for s in shape):
            raise exception(errc.invalid, f"a DLPack tensor of shape {tuple(shape)}")
        self.shape = tuple(shape)
        self.count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if t.strides and self.count > 1:
            expect, strides = 1, [t.strides[i] for i in range(t.ndim)]
            for s, n in zip(reversed(strides), reversed(shape)):
                if n != 1 and s != expect:
                    raise exception(errc.invalid, f"a DLPack tensor with strides {tuple(strides)} (shape "
                                                  f"{tuple(shape)}) is not contiguous: make it contiguous first")
                expect *= n
        self.address = (t.data or 0) + t.byte_offset

    def release(self) -> None:
        if not self._released:
            self._released = True
            deleter = self._managed.deleter
            if deleter:
                _DELETER(deleter)(self._address)

    def __del__(self):
        try:
            self.release()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def read_capsule(capsule) -> Imported:
    """The tensor of a DLPack capsule, taken (see ``Imported``)."""
    return Imported(capsule)
