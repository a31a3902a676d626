"""ctypes bindings to the CUDA driver API (``libcuda.so.1``).

``load()`` opens the library and calls ``cuInit`` once; it returns ``None``
(and remembers why, ``why_unavailable()``) when there is no library, no GPU or
the driver refuses, so that a machine without CUDA is never troubled.
``call(name, *args)`` calls a driver function and turns a ``CUresult`` other
than ``CUDA_SUCCESS`` into ``sycl.exception`` naming the driver's error
(``cuGetErrorName``) and its text (``cuGetErrorString``): ``errc::memory_allocation``
for out-of-memory, ``errc::runtime`` otherwise.

Only what the runtime uses is bound; argument types are declared so that
64-bit values and pointers are passed whole.
"""
from __future__ import annotations

import ctypes
import threading

from ..backend import errc, exception

__all__ = ["load", "library", "call", "unchecked", "launcher", "by_value", "current", "copy_now", "why_unavailable", "error_name", "CUresult", "CUdeviceptr",
           "DriverError",
           "CUDA_ERROR_ILLEGAL_ADDRESS", "CONTEXT_LOST", "KernelNodeParams", "Memcpy3D", "MemsetNodeParams",
           "HostNodeParams", "MemAllocNodeParams", "MemPoolProps", "MemLocation", "ExecUpdateResultInfo",
           "LaunchConfig", "HOST_FN", "GRAPH_NODE_TYPES", "EXEC_UPDATE_RESULTS"]

CUresult = ctypes.c_int
CUdeviceptr = ctypes.c_uint64
_p = ctypes.c_void_p
_pp = ctypes.POINTER(ctypes.c_void_p)
_i = ctypes.c_int
_u = ctypes.c_uint
_sz = ctypes.c_size_t
_pi = ctypes.POINTER(ctypes.c_int)
_pu64 = ctypes.POINTER(ctypes.c_uint64)
_psz = ctypes.POINTER(ctypes.c_size_t)
_pf = ctypes.POINTER(ctypes.c_float)

CUDA_ERROR_OUT_OF_MEMORY = 2
CUDA_ERROR_ILLEGAL_ADDRESS = 700
#: errors after which the context is unusable (a kernel fault "poisons" it: CUDA's "sticky"
#: errors).  ``CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES`` (701) and
#: ``CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE`` (720) are not among them: the launch is
#: refused and the context goes on.
CONTEXT_LOST = frozenset({700, 702, 710, 714, 715, 716, 717, 718, 719})
CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701
#: ``CU_STREAM_LEGACY``: the legacy default stream, on which ``cuMemcpy`` runs
CU_STREAM_LEGACY = 1

#: name -> argument types (the result is always ``CUresult``)
_SIGNATURES = {
    "cuInit": [_u],
    "cuDriverGetVersion": [_pi],
    "cuDeviceGetCount": [_pi],
    "cuDeviceGet": [_pi, _i],
    "cuDeviceGetName": [ctypes.c_char_p, _i, _i],
    "cuDeviceGetAttribute": [_pi, _i, _i],
    "cuDeviceTotalMem_v2": [_psz, _i],
    "cuDevicePrimaryCtxRetain": [_pp, _i],
    "cuDevicePrimaryCtxRelease_v2": [_i],
    "cuCtxSetCurrent": [_p],
    "cuCtxGetCurrent": [_pp],
    "cuCtxSynchronize": [],
    "cuMemGetInfo_v2": [_psz, _psz],
    "cuModuleLoadDataEx": [_pp, ctypes.c_char_p, _u, _p, _p],
    "cuModuleUnload": [_p],
    "cuModuleGetFunction": [_pp, _p, ctypes.c_char_p],
    "cuModuleGetGlobal_v2": [_pu64, _psz, _p, ctypes.c_char_p],
    "cuFuncGetAttribute": [_pi, _i, _p],
    "cuFuncSetAttribute": [_p, _i, _i],
    "cuMemAlloc_v2": [_pu64, _sz],
    "cuMemAllocHost_v2": [_pp, _sz],
    "cuMemAllocManaged": [_pu64, _sz, _u],
    "cuMemFree_v2": [CUdeviceptr],
    "cuMemFreeHost": [_p],
    "cuMemcpy": [CUdeviceptr, CUdeviceptr, _sz],
    "cuMemcpyAsync": [CUdeviceptr, CUdeviceptr, _sz, _p],
    "cuMemcpyPeerAsync": [CUdeviceptr, _p, CUdeviceptr, _p, _sz, _p],
    "cuDeviceGetP2PAttribute": [_pi, _i, _i, _i],
    "cuCtxEnablePeerAccess": [_p, _u],
    "cuCtxDisablePeerAccess": [_p],
    "cuMemsetD8Async": [CUdeviceptr, ctypes.c_ubyte, _sz, _p],
    "cuMemsetD16Async": [CUdeviceptr, ctypes.c_ushort, _sz, _p],
    "cuMemsetD32Async": [CUdeviceptr, ctypes.c_uint, _sz, _p],
    "cuLaunchKernel": [_p, _u, _u, _u, _u, _u, _u, _u, _p, _p, _p],
    "cuLaunchKernelEx": [_p, _p, _p, _p],
    "cuLaunchHostFunc": [_p, _p, _p],
    "cuStreamCreate": [_pp, _u],
    "cuStreamDestroy_v2": [_p],
    "cuStreamSynchronize": [_p],
    "cuStreamQuery": [_p],
    "cuStreamWaitEvent": [_p, _p, _u],
    "cuEventCreate": [_pp, _u],
    "cuEventDestroy_v2": [_p],
    "cuEventRecord": [_p, _p],
    "cuEventSynchronize": [_p],
    "cuEventQuery": [_p],
    "cuEventElapsedTime": [_pf, _p, _p],
    "cuStreamBeginCapture_v2": [_p, _i],
    "cuStreamEndCapture": [_p, _pp],
    "cuGraphInstantiateWithFlags": [_pp, _p, ctypes.c_ulonglong],
    "cuGraphLaunch": [_p, _p],
    "cuGraphExecDestroy": [_p],
    "cuGraphDestroy": [_p],
    "cuGraphGetNodes": [_p, _pp, _psz],
    "cuGraphNodeGetType": [_p, _pi],
    "cuGraphCreate": [_pp, _u],
    "cuGraphAddKernelNode_v2": [_pp, _p, _p, _sz, _p],
    "cuGraphAddMemcpyNode": [_pp, _p, _p, _sz, _p, _p],
    "cuGraphAddMemsetNode": [_pp, _p, _p, _sz, _p, _p],
    "cuGraphAddHostNode": [_pp, _p, _p, _sz, _p],
    "cuGraphAddEmptyNode": [_pp, _p, _p, _sz],
    "cuGraphAddChildGraphNode": [_pp, _p, _p, _sz, _p],
    "cuPointerGetAttribute": [_p, _i, CUdeviceptr],
    "cuGraphAddMemAllocNode": [_pp, _p, _p, _sz, _p],
    "cuGraphAddMemFreeNode": [_pp, _p, _p, _sz, CUdeviceptr],
    "cuGraphExecKernelNodeSetParams_v2": [_p, _p, _p],
    "cuGraphExecHostNodeSetParams": [_p, _p, _p],
    "cuGraphExecUpdate_v2": [_p, _p, _p],
}


# -- structures of the graph calls, as ``cuda.h`` (CUDA 12/13) lays them out on 64-bit
# hosts; ``tests/runtime/test_cuda_graph_structs.py`` checks sizes and offsets.

class KernelNodeParams(ctypes.Structure):
    """``CUDA_KERNEL_NODE_PARAMS_v2`` (72 bytes): a kernel node; ``kernelParams`` is
    an array of pointers to each argument's value (copied by the driver)."""
    _fields_ = [("func", _p), ("gridDimX", _u), ("gridDimY", _u), ("gridDimZ", _u),
                ("blockDimX", _u), ("blockDimY", _u), ("blockDimZ", _u), ("sharedMemBytes", _u),
                ("kernelParams", _p), ("extra", _p), ("kern", _p), ("ctx", _p)]


class LaunchConfig(ctypes.Structure):
    """``CUlaunchConfig`` (56 bytes, CUDA 12.0 on): what ``cuLaunchKernelEx`` takes
    besides the function and its parameters.  One call then passes four arguments
    instead of ``cuLaunchKernel``'s eleven (ctypes converts each at every call:
    ``cuda/queue.py`` keeps one per launch shape)."""
    _fields_ = [("gridDimX", _u), ("gridDimY", _u), ("gridDimZ", _u), ("blockDimX", _u), ("blockDimY", _u),
                ("blockDimZ", _u), ("sharedMemBytes", _u), ("hStream", _p), ("attrs", _p), ("numAttrs", _u)]


class Memcpy3D(ctypes.Structure):
    """``CUDA_MEMCPY3D_v2`` (200 bytes): a memcpy node (a 1-D copy is ``WidthInBytes``
    by 1 by 1; ``CU_MEMORYTYPE_UNIFIED`` lets the driver tell host from device)."""
    _fields_ = [("srcXInBytes", _sz), ("srcY", _sz), ("srcZ", _sz), ("srcLOD", _sz), ("srcMemoryType", _i),
                ("srcHost", _p), ("srcDevice", CUdeviceptr), ("srcArray", _p), ("reserved0", _p),
                ("srcPitch", _sz), ("srcHeight", _sz),
                ("dstXInBytes", _sz), ("dstY", _sz), ("dstZ", _sz), ("dstLOD", _sz), ("dstMemoryType", _i),
                ("dstHost", _p), ("dstDevice", CUdeviceptr), ("dstArray", _p), ("reserved1", _p),
                ("dstPitch", _sz), ("dstHeight", _sz),
                ("WidthInBytes", _sz), ("Height", _sz), ("Depth", _sz)]


class MemsetNodeParams(ctypes.Structure):
    """``CUDA_MEMSET_NODE_PARAMS`` (v1, 40 bytes): ``width`` elements of ``elementSize`` (1, 2 or 4) bytes."""
    _fields_ = [("dst", CUdeviceptr), ("pitch", _sz), ("value", _u), ("elementSize", _u), ("width", _sz),
                ("height", _sz)]


#: ``CUhostFn``: ``void (*)(void *userData)``
HOST_FN = ctypes.CFUNCTYPE(None, _p)


class HostNodeParams(ctypes.Structure):
    """``CUDA_HOST_NODE_PARAMS`` (16 bytes)."""
    _fields_ = [("fn", HOST_FN), ("userData", _p)]


class MemLocation(ctypes.Structure):
    """``CUmemLocation`` (8 bytes): ``type`` 1 is ``CU_MEM_LOCATION_TYPE_DEVICE``, ``id`` its ordinal."""
    _fields_ = [("type", _i), ("id", _i)]


class MemPoolProps(ctypes.Structure):
    """``CUmemPoolProps`` (88 bytes; ``reserved`` must be zero)."""
    _fields_ = [("allocType", _i), ("handleTypes", _i), ("location", MemLocation),
                ("win32SecurityAttributes", _p), ("maxSize", _sz), ("usage", ctypes.c_ushort),
                ("reserved", ctypes.c_ubyte * 54)]


class MemAllocNodeParams(ctypes.Structure):
    """``CUDA_MEM_ALLOC_NODE_PARAMS`` (v1, 120 bytes): ``dptr`` is set by the driver
    when the node is added (the address is fixed for the graph's life)."""
    _fields_ = [("poolProps", MemPoolProps), ("accessDescs", _p), ("accessDescCount", _sz), ("bytesize", _sz),
                ("dptr", CUdeviceptr)]


class ExecUpdateResultInfo(ctypes.Structure):
    """``CUgraphExecUpdateResultInfo`` (24 bytes), filled by ``cuGraphExecUpdate_v2``."""
    _fields_ = [("result", _i), ("errorNode", _p), ("errorFromNode", _p)]


#: ``CUgraphNodeType`` values -> names
GRAPH_NODE_TYPES = {0: "kernel", 1: "memcpy", 2: "memset", 3: "host", 4: "graph", 5: "empty", 6: "wait_event",
                    7: "event_record", 8: "ext_semas_signal", 9: "ext_semas_wait", 10: "mem_alloc", 11: "mem_free",
                    12: "batch_mem_op", 13: "conditional"}
#: ``CUgraphExecUpdateResult`` values -> names
EXEC_UPDATE_RESULTS = {0: "CU_GRAPH_EXEC_UPDATE_SUCCESS", 1: "CU_GRAPH_EXEC_UPDATE_ERROR",
                       2: "CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED", 3: "CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED",
                       4: "CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED",
                       5: "CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED", 6: "CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED",
                       7: "CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE",
                       8: "CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED"}

class _Current(threading.local):
    """The context ``device.activate`` made current on each thread (a ``cuCtxSetCurrent``
    saved per call); the launch path reads it to skip ``activate``'s call."""
    context = None


current = _Current()

_lock = threading.Lock()
_lib = None
_why: str | None = None
_tried = False


class DriverError(exception):
    """A driver call failed: ``result`` is the ``CUresult``, ``name`` its name."""

    def __init__(self, code: errc, message: str, result: int, name: str):
        super().__init__(code, message)
        self.result, self.name = result, name


def _open():
    for soname in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            return ctypes.CDLL(soname)
        except OSError:
            continue
    return None


def load():
    """The driver library, initialised, or ``None`` (see ``why_unavailable``)."""
    global _lib, _why, _tried
    with _lock:
        if _tried:
            return _lib
        _tried = True
        lib = _open()
        if lib is None:
            _why = "libcuda.so.1 not found"
            return None
        try:
            for name, args in _SIGNATURES.items():
                fn = getattr(lib, name, None)
                if fn is None:
                    continue            # an old driver: calls to it fail when made (``call``)
                fn.restype, fn.argtypes = CUresult, args
            lib.cuGetErrorName.restype = CUresult
            lib.cuGetErrorName.argtypes = [CUresult, ctypes.POINTER(ctypes.c_char_p)]
            lib.cuGetErrorString.restype = CUresult
            lib.cuGetErrorString.argtypes = [CUresult, ctypes.POINTER(ctypes.c_char_p)]
        except AttributeError as err:
            _why = f"libcuda lacks {err}"
            return None
        rc = lib.cuInit(0)
        if rc != 0:
            _why = f"cuInit failed: {_name(lib, rc)}"
            return None
        _lib = lib
        return _lib


def library():
    """The driver library loaded now (``None`` before ``load``): what a device was made with."""
    return _lib


def why_unavailable() -> str | None:
    return _why


def _name(lib, rc: int) -> str:
    s = ctypes.c_char_p()
    if lib.cuGetErrorName(rc, ctypes.byref(s)) == 0 and s.value:
        return s.value.decode()
    return f"CUresult {rc}"


def error_name(rc: int) -> str:
    """``CUDA_ERROR_...`` for a ``CUresult``."""
    return _name(_lib, rc) if _lib is not None else f"CUresult {rc}"


def error_text(rc: int) -> str:
    s = ctypes.c_char_p()
    if _lib is not None and _lib.cuGetErrorString(rc, ctypes.byref(s)) == 0 and s.value:
        return s.value.decode()
    return ""


def raise_for(rc: int, what: str):
    """Raise the ``sycl.exception`` for a failed ``what``."""
    name = error_name(rc)
    text = error_text(rc)
    code = errc.memory_allocation if rc == CUDA_ERROR_OUT_OF_MEMORY else errc.runtime
    message = f"{what} failed: {name}" + (f" ({text})" if text else "")
    if rc in CONTEXT_LOST:
        message += "; the device's CUDA context is lost: every later command on it fails (restart the process)"
    raise DriverError(code, message, rc, name)


#: name -> the library's function (looked up once: a launch makes several calls)
_functions: dict = {}


def _function(name: str):
    lib = _lib or load()
    if lib is None:
        raise exception(errc.runtime, f"the CUDA driver is not available ({_why})")
    fn = getattr(lib, name, None)
    if fn is None:
        raise exception(errc.feature_not_supported, f"this CUDA driver has no {name}")
    _functions[name] = fn
    return fn


def function(name: str):
    """The library's ``name`` itself, for a caller that checks its ``CUresult``
    (a launch's hot path: no wrapper call)."""
    return _functions.get(name) or _function(name)


def unchecked(name: str):
    """The library's ``name`` without declared argument types, for the launch path
    (``cuLaunchKernel``, the queries of a wait): ctypes converts a declared
    argument list in Python on every call (about 3 µs for ``cuLaunchKernel``'s
    eleven arguments, more than the driver's own work), an undeclared one in C.
    The caller must pass a ctypes object (``c_void_p``, an array) or ``None``
    for every pointer and Python ints only for 32-bit parameters, which is all
    ctypes then passes an int as.  Each call of this gives a new function object;
    it checks no ``CUresult``."""
    lib = _lib or load()
    if lib is None:
        raise exception(errc.runtime, f"the CUDA driver is not available ({_why})")
    if not isinstance(lib, ctypes.CDLL):        # a stand-in driver (tests): its functions take anything
        return function(name)
    try:
        fn = lib[name]
    except AttributeError:
        raise exception(errc.feature_not_supported, f"this CUDA driver has no {name}") from None
    fn.restype = CUresult
    return fn


def launcher():
    """(``cuLaunchKernelEx``, True), or (``cuLaunchKernel``, False) where the driver
    has no ``cuLaunchKernelEx`` (before CUDA 12.0): unchecked (``unchecked``), for
    the launch path.  ``cuLaunchKernelEx`` takes a ``LaunchConfig`` by pointer,
    the function, the parameters and ``None``: four arguments to convert per call
    instead of eleven (a third of ctypes's cost of the call)."""
    try:
        return unchecked("cuLaunchKernelEx"), True
    except exception as err:
        if err.code() != errc.feature_not_supported:
            raise
    return unchecked("cuLaunchKernel"), False


def by_value(handle) -> object:
    """A driver handle (``c_void_p``) as an ``unchecked`` function takes it
    cheapest: a ctypes parameter object holding the pointer by value
    (``c_void_p.from_param``), which ctypes passes without the conversion a
    ``c_void_p`` costs at each call (a parameter object made and freed, its
    type's format looked up).  With a stand-in driver (tests), the handle itself."""
    if not isinstance(_lib or load(), ctypes.CDLL):
        return handle
    return ctypes.c_void_p.from_param(handle.value or 0)


def call(name: str, *args, what: str | None = None) -> None:
    """Call driver function ``name``; a failure raises (``raise_for``)."""
    rc = (_functions.get(name) or _function(name))(*args)
    if rc != 0:
        raise_for(rc, what or name)


def copy_now(dst: int, src: int, n: int, what: str) -> None:
    """``n`` bytes from ``src`` to ``dst`` (any memory of the current context's address
    space), finished when this returns.

    ``cuMemcpy`` alone does not promise that: it runs on the legacy default stream,
    and from pageable host memory it returns once the bytes are staged, before
    they land (between two device addresses it does not wait at all).  The
    queues' streams are non-blocking (``cuda/queue.py``), which the legacy
    stream does not order, so a command enqueued next on a queue could read
    the old bytes (a ``device_global``'s initial value read back as zeros in a
    fresh context, issue 31).  Synchronising the legacy stream after the copy
    waits for its DMA and for nothing of the queues.  Every synchronous copy
    that writes GPU memory goes through here (one that reads it into the host
    is finished when ``cuMemcpy`` returns)."""
    call("cuMemcpy", dst, src, n, what=what)
    call("cuStreamSynchronize", CU_STREAM_LEGACY, what=what)


def query(name: str, *args) -> int:
    """Call ``name`` and return its ``CUresult`` without raising (for queries
    whose "not ready" answer is not an error)."""
    return (_functions.get(name) or _function(name))(*args)
