"""ctypes bindings to NCCL (``libnccl.so.2``), as ``driver.py`` binds the CUDA driver.

The library is the one the ``nvidia-nccl-cu13`` (or ``-cu12``) wheel installs,
found through ``importlib`` (the wheel's file list, then the ``nvidia``
namespace package's folders), else whatever the dynamic loader finds under
that name.  Before it loads, ``knobs.keep_multicast_off()`` sets
``NCCL_NVLS_ENABLE=0`` (and torch's and NVSHMEM's equivalents) where they are
unset: NVLink multicast stays off.

``call(name, *args)`` turns an ``ncclResult_t`` other than ``ncclSuccess`` into
``errc::runtime`` with NCCL's own text (``ncclGetErrorString``).  Only what
``runtime/distributed.py`` uses is bound.
"""
from __future__ import annotations

import ctypes
import glob
import importlib.metadata
import importlib.util
import os
import threading

from ...passes.support import knobs
from ..backend import errc, exception

__all__ = ["load", "call", "why_unavailable", "UniqueId", "DATATYPES", "OPS", "library_path"]

_p = ctypes.c_void_p
_sz = ctypes.c_size_t
_i = ctypes.c_int


class UniqueId(ctypes.Structure):
    """``ncclUniqueId``: 128 opaque bytes, passed by value to ``ncclCommInitRank``."""
    _fields_ = [("internal", ctypes.c_char * 128)]


#: NumPy dtype string -> ``ncclDataType_t``
DATATYPES = {"i1": 0, "u1": 1, "i4": 2, "u4": 3, "i8": 4, "u8": 5, "f2": 6, "f4": 7, "f8": 8}
#: reduction operator name (``sycl.plus`` ...) -> ``ncclRedOp_t``
OPS = {"plus": 0, "multiplies": 1, "maximum": 2, "minimum": 3}

_SIGNATURES = {
    "ncclGetVersion": [ctypes.POINTER(_i)],
    "ncclGetUniqueId": [ctypes.POINTER(UniqueId)],
    "ncclCommInitRank": [ctypes.POINTER(_p), _i, UniqueId, _i],
    "ncclCommDestroy": [_p],
    "ncclCommAbort": [_p],
    "ncclCommGetAsyncError": [_p, ctypes.POINTER(_i)],
    "ncclAllReduce": [_p, _p, _sz, _i, _i, _p, _p],
    "ncclBroadcast": [_p, _p, _sz, _i, _i, _p, _p],
    "ncclAllGather": [_p, _p, _sz, _i, _p, _p],
    "ncclReduceScatter": [_p, _p, _sz, _i, _i, _p, _p],
    "ncclSend": [_p, _sz, _i, _i, _p, _p],
    "ncclRecv": [_p, _sz, _i, _i, _p, _p],
    "ncclGroupStart": [],
    "ncclGroupEnd": [],
}

_lib = None
_why = None
_lock = threading.Lock()


def library_path() -> str:
    """Where ``libnccl.so.2`` is: the nvidia-nccl wheel's copy, else the loader's name."""
    for dist in ("nvidia-nccl-cu13", "nvidia-nccl-cu12", "nvidia-nccl-cu11"):
        try:
            files = importlib.metadata.files(dist) or ()
        except importlib.metadata.PackageNotFoundError:
            continue
        for f in files:
            if f.name.startswith("libnccl.so"):
                return str(f.locate())
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or ()) if spec is not None else ():
        found = sorted(glob.glob(os.path.join(root, "*", "lib", "libnccl.so*")) +
                       glob.glob(os.path.join(root, "*", "*", "lib", "libnccl.so*")))
        if found:
            return found[0]
    return "libnccl.so.2"


def load():
    """The library, or ``None`` (``why_unavailable()`` says why)."""
    global _lib, _why
    with _lock:
        if _lib is None and _why is None:
            knobs.keep_multicast_off()
            path = library_path()
            try:
                lib = ctypes.CDLL(path)
            except OSError as err:
                _why = f"NCCL could not be loaded from {path} ({err}): install nvidia-nccl-cu13"
                return None
            for name, args in _SIGNATURES.items():
                fn = getattr(lib, name)
                fn.restype, fn.argtypes = _i, args
            lib.ncclGetErrorString.restype, lib.ncclGetErrorString.argtypes = ctypes.c_char_p, [_i]
            _lib = lib
    return _lib


def why_unavailable() -> str | None:
    return _why


def call(name: str, *args, what: str = "") -> None:
    lib = load()
    if lib is None:
        raise exception(errc.runtime, f"{what or name}: {_why}")
    rc = getattr(lib, name)(*args)
    if rc:
        text = lib.ncclGetErrorString(rc).decode("utf-8", "replace")
        raise exception(errc.runtime, f"{what or name} failed: {name} returned {rc} ({text})")
