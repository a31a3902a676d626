"""Memory of other libraries, used without a copy, and a queue's native handles.

``from_dlpack(obj, queue)`` takes any object that exports its memory - DLPack
(``__dlpack__``/``__dlpack_device__``: torch, CuPy, JAX, NumPy), CUDA's array
interface (``__cuda_array_interface__``: CuPy, numba, torch) or the buffer
protocol / NumPy's array interface (host memory) - and returns a
``foreign_allocation``: a USM allocation over the same bytes, usable wherever
one is (kernel arguments, ``memcpy``, ``copy``, collectives), holding the
exporter (or its DLPack capsule) until it is released, so the exporter's memory
outlives our use.  Kernel arguments of pointer type take such objects directly
(``adopt_arguments``, called by the handler: the one place a launch converts
them).

Whether the queue's device can use the memory (``usable``): a device of this
CPU takes host memory (``kDLCPU``, CUDA's pinned ``kDLCUDAHost`` and managed
``kDLCUDAManaged`` memory); an NVIDIA GPU takes its own device memory
(``kDLCUDA`` of its ordinal), pinned and managed memory.  Anything else is
``errc::invalid`` naming the memory's device; so is an unsupported element type,
non-contiguous memory, a consumed capsule or an exporter that fails to export
(a freed one).

Ordering with other libraries' streams: importing with DLPack passes the
queue's stream as ``__dlpack__(stream=...)`` (the exporter orders its work
before it); a CUDA-array-interface ``stream`` is waited for with an event.
``interop_handle`` is what a ``host_task`` taking one argument and
``ext_codeplay_enqueue_native_command`` receive: the native stream, device,
context and memory pointers (``sycl_ext_codeplay_enqueue_native_command``).
"""
from __future__ import annotations


import inspect

import numpy as np

from . import dlpack
from .commands import PLAIN, Command, foreign
from .device import default_device, get_devices
from . import host_access
from .errors import errc, exception
from .memory import usm_allocation
from .validate import require_queue

__all__ = ["PLAIN", "foreign_allocation", "from_dlpack", "adopt", "adopt_arguments", "foreign", "usable",
           "interop_handle", "NativeCommand", "native_stream", "host_task_command"]

class foreign_allocation(usm_allocation):  # noqa: N801 - SYCL-style name
    """Another library's memory seen as a USM allocation (``from_dlpack``).  It is not
    registered by address (``memory.allocation_at``): it lives as long as this object,
    which holds the exporter (and, for DLPack, the handle of the taken tensor,
    ``dlpack.take``, which calls the producer's deleter when it goes); ``free``
    releases it early."""

    # (class defaults: one exchange sets only what differs, on the path of every call)
    freed, _raw, _bytes, _holds, read_only, dl_device, kind = False, None, None, None, False, (dlpack.CPU, 0), "host"

    def __init__(self, address: int, count: int, dtype: np.dtype, kind: str, device, exporter,
                 imported=None, read_only: bool = False, where=(dlpack.CPU, 0), holds=None):
        self.count, self.dtype, self.device = count, dtype, device
        self.ptr, self._exporter, self._imported = address, exporter, imported
        if kind != "host":
            self.kind = kind
        if read_only:
            self.read_only = True
        if where != (dlpack.CPU, 0):
            self.dl_device = where
        if holds is not None:
            self._holds = holds

    @property
    def source(self) -> str:
        """What the memory came from, for messages."""
        return f"{type(self._exporter).__name__} ({self._how})"

    #: how the memory came: "DLPack", "CUDA array interface" or "host" (the buffer protocol)
    _how = "DLPack"

    @property
    def array(self) -> np.ndarray:
        self.check()
        if self.kind == "device":
            raise exception(errc.invalid, f"memory of {self.source} is device memory: the host cannot read it")
        return np.asarray(_View(self))

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.dl_device

    def _dlpack_sync(self, stream) -> None:
        if self.dl_device[0] == dlpack.CPU:
            super()._dlpack_sync(stream)

    def _dlpack_keep(self):
        return self

    def _release(self) -> None:
        imported, self._imported, self._holds, self._exporter = self._imported, None, None, None
        if imported is not None:
            dlpack.give_back(imported)

    def __repr__(self):
        state = "released" if self.freed else f"{self.ptr:#x}"
        return f"<foreign {self.kind} {self.count} x {self.dtype} of {self.source} at {state}>"


class _View:
    """A NumPy view of a foreign allocation's bytes that keeps the allocation (and so
    the exporter) alive."""

    def __init__(self, owner: foreign_allocation):
        self.owner = owner
        self.__array_interface__ = {"data": (owner.ptr, owner.read_only), "shape": (owner.count,),
                                    "typestr": owner.dtype.str, "version": 3}


def _device_name(device) -> str:
    return "the host" if device is None else device.name


def usable(where: tuple[int, int], device) -> bool:
    """Whether ``device`` can use memory on DLPack device ``where``."""
    if device is None or device.impl.runs_on_host:
        return where[0] in _HOST_KINDS
    return where[0] in _PINNED_KINDS or (where[0] == dlpack.CUDA and where[1] == device.ordinal)


#: memory a device of this CPU can use: host memory, CUDA's pinned and managed memory
_HOST_KINDS = frozenset((dlpack.CPU, dlpack.CUDA_HOST, dlpack.CUDA_MANAGED))
#: memory every GPU can use besides its own: pinned and managed memory
_PINNED_KINDS = frozenset((dlpack.CUDA_HOST, dlpack.CUDA_MANAGED))


def _off_host(device) -> bool:
    """Whether ``device`` (None: the host) runs off the host, with memory of its own (a GPU)."""
    return device is not None and not device.impl.runs_on_host


def native_stream(q) -> int | None:
    """The CUDA stream handle of queue ``q`` (``None`` for a queue of this CPU, whose
    device runs on the host: ``backend.Backend.runs_on_host``)."""
    return None if q.device.impl.runs_on_host else q.native_stream()


def _refuse(obj, where: tuple[int, int], device, what: str):
    return exception(errc.invalid, f"{what}: {type(obj).__name__} memory is on {dlpack.device_text(*where)}, "
                                   f"which {_device_name(device)} cannot use (copy it to memory of that device first)")


def _from_dlpack(obj, q, device, what: str) -> foreign_allocation:
    try:
        where = obj.__dlpack_device__()
        if where.__class__ is not tuple or len(where) != 2 or where[0].__class__ is not int or \
                where[1].__class__ is not int:
            where = tuple(where)
            where = (int(where[0]), int(where[1])) if len(where) == 2 else None
    except exception:
        raise
    except Exception as err:  # noqa: BLE001 - the exporter's own failure, named
        raise exception(errc.invalid, f"{what}: {type(obj).__name__}.__dlpack_device__() failed: "
                                      f"{type(err).__name__}: {err}") from None
    if where is None:
        raise exception(errc.invalid, f"{what}: {type(obj).__name__}.__dlpack_device__() is not a (device type, "
                                      f"device id) pair")
    if not usable(where, device):
        raise _refuse(obj, where, device, what)
    stream = None if where[0] == _CPU else native_stream(q)
    try:
        try:
            capsule = obj.__dlpack__(stream=stream, max_version=_MAX_VERSION)
        except TypeError:           # an exporter older than DLPack 1.0
            capsule = obj.__dlpack__(stream=stream)
    except exception:
        raise
    except Exception as err:  # noqa: BLE001 - e.g. a freed or consumed exporter
        raise exception(errc.invalid, f"{what}: {type(obj).__name__}.__dlpack__() failed: "
                                      f"{type(err).__name__}: {err}") from None
    handle, address, on, dtype, count, read_only = dlpack.take(capsule)
    if on != where:
        dlpack.give_back(handle)
        raise exception(errc.invalid, f"{what}: the capsule is on {dlpack.device_text(*on)}, "
                                      f"__dlpack_device__ said {dlpack.device_text(*where)}")
    return foreign_allocation(address, count, dtype, _KINDS.get(where[0], "host"), device, obj, handle, read_only,
                              where)


_MAX_VERSION = (1, 0)
_CPU = dlpack.CPU
_KINDS = {dlpack.CUDA: "device", dlpack.CUDA_MANAGED: "shared"}


def _pointer_place(address: int, device) -> tuple[int, int] | None:
    """Where a driver says ``address`` is: DLPack ``(type, id)``, asking ``device``'s back
    end, else the first device off the host; ``None`` when no back end knows the
    address (pageable host memory, or no GPU driver)."""
    asked = device if _off_host(device) else next((d for d in get_devices() if _off_host(d)), None)
    return asked.impl.pointer_place(address) if asked is not None else None


def _typestr(text, what: str) -> np.dtype:
    try:
        dtype = np.dtype(text)
    except (TypeError, ValueError):
        raise exception(errc.invalid, f"{what}: unsupported element type {text!r:.40}") from None
    dlpack.dtype_code(dtype)            # only the types DLPack can say
    return dtype


def _contiguous(shape, strides, itemsize: int, what: str) -> int:
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if strides is not None and count > 1:
        expect = itemsize
        for s, n in zip(reversed(tuple(strides)), reversed(tuple(shape))):
            if n != 1 and s != expect:
                raise exception(errc.invalid, f"{what}: memory with strides {tuple(strides)} is not contiguous")
            expect *= n
    return count


def _from_cai(obj, q, device, what: str) -> foreign_allocation:
    try:
        cai = obj.__cuda_array_interface__
        address, read_only = cai["data"]
        address = int(address or 0)
        shape, text = tuple(int(n) for n in cai["shape"]), cai["typestr"]
        strides = cai.get("strides")
        strides = None if strides is None else tuple(int(n) for n in strides)
        if min(shape, default=0) < 0 or (strides is not None and len(strides) != len(shape)):
            raise ValueError(f"shape {shape}, strides {strides}")
    except exception:
        raise
    except Exception as err:  # noqa: BLE001
        raise exception(errc.invalid, f"{what}: {type(obj).__name__}.__cuda_array_interface__ is unreadable: "
                                      f"{type(err).__name__}: {err}") from None
    dtype = _typestr(text, what)
    count = _contiguous(shape, strides, dtype.itemsize, what)
    where = _pointer_place(address, device) or (dlpack.CUDA, -1)
    if not usable(where, device):
        raise _refuse(obj, where, device, what)
    stream = cai.get("stream")
    mine = native_stream(q)
    if stream and mine is not None and stream != mine:      # their writes before our commands
        q.device.impl.wait_for_stream(stream, mine)
    out = foreign_allocation(address, count, dtype, _KINDS.get(where[0], "host"), device, obj, None,
                             bool(read_only), where)
    out._how = "CUDA array interface"
    return out


def _from_host(obj, device, what: str) -> foreign_allocation:
    try:
        a = np.asarray(memoryview(obj)) if not hasattr(obj, "__array_interface__") else np.asarray(obj)
    except (TypeError, ValueError, BufferError) as err:
        raise exception(errc.invalid, f"{what}: {type(obj).__name__} does not export its memory: {err}") from None
    dlpack.dtype_code(a.dtype)
    if not a.flags["C_CONTIGUOUS"]:
        raise exception(errc.invalid, f"{what}: {type(obj).__name__} memory is not contiguous")
    address = a.ctypes.data
    where = (_pointer_place(address, device) if _off_host(device) else None) or (dlpack.CPU, 0)
    if not usable(where, device):
        raise _refuse(obj, where, device, what)
    out = foreign_allocation(address, a.size, a.dtype, _KINDS.get(where[0], "host"), device, obj, None,
                             not a.flags["WRITEABLE"], where, holds=a)
    out._how = "host"
    return out


def adopt(obj, q, what: str = "from_dlpack") -> usm_allocation:
    """``obj`` as a USM allocation usable by queue ``q``'s device (see the module docstring)."""
    if isinstance(obj, usm_allocation):
        obj.check(what)
        return obj
    device = q.device
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        out = _from_dlpack(obj, q, device, what)
    elif hasattr(obj, "__cuda_array_interface__"):
        out = _from_cai(obj, q, device, what)
    elif hasattr(obj, "__array_interface__") or _buffer(obj):
        out = _from_host(obj, device, what)
    else:
        raise exception(errc.invalid, f"{what} expects an object exporting its memory (DLPack, the CUDA array "
                                      f"interface or the buffer protocol), got {type(obj).__name__}")
    q.hold_until_done(out)          # (a GPU queue: alive until its commands finished)
    return out


def _buffer(obj) -> bool:
    try:
        memoryview(obj).release()
        return True
    except TypeError:
        return False


class _DeviceOnly:
    """The default device where ``from_dlpack`` is given no queue (no stream to order on)."""

    def __init__(self, device):
        self.device = device

    def hold_until_done(self, obj) -> None:
        """No queue, no commands: the allocation's own reference holds ``obj``."""

    def native_stream(self) -> None:
        return None


def from_dlpack(obj, queue=None) -> usm_allocation:
    """Another library's memory as a USM allocation of ``queue``'s device (default: the
    default device, with no stream ordering), without a copy: see the module docstring."""
    q = require_queue(queue, "from_dlpack queue", optional=True) or _DeviceOnly(default_device())
    return adopt(obj, q)


def adopt_arguments(k, args: list, q) -> list:
    """``args`` of kernel ``k`` with every pointer argument that is another library's
    memory adopted (``adopt``): the allocations hold the exporters while the command lives."""
    params = k.params
    for i, a in enumerate(args):
        if type(a) not in PLAIN and i < len(params) and foreign(a):
            ty = params[i]
            if ty.endswith("*") and not ty.startswith("local "):
                m = adopt(a, q, f"argument {i + 1} of kernel '{k.name}'")
                if m.read_only:
                    raise exception(errc.invalid, f"argument {i + 1} of kernel '{k.name}': {m.source} memory "
                                                  f"is read-only")
                args[i] = m
    return args


class interop_handle:  # noqa: N801 - SYCL's name
    """The native handles of a queue, for code of other libraries (a ``host_task``
    taking one argument, ``ext_codeplay_enqueue_native_command``)."""

    def __init__(self, q, stream=None):
        self._q = q
        self._stream = stream           # a capturing stream (a native command in a CUDA graph)

    def get_backend(self) -> str:
        return self._q.device.backend

    def get_native_queue(self) -> int | None:
        """The ``CUstream`` handle (an integer) work must be enqueued on; ``None`` on this CPU."""
        return self._stream if self._stream is not None else native_stream(self._q)

    def get_native_device(self) -> int | None:
        """The ``CUdevice`` (its ordinal); ``None`` on this CPU."""
        return self._q.device.ordinal if _off_host(self._q.device) else None

    def get_native_context(self) -> int | None:
        """The ``CUcontext`` handle (the device's primary context); ``None`` on this CPU."""
        return self._q.device.primary_context().value if _off_host(self._q.device) else None

    def get_native_mem(self, memory) -> int:
        """The address of a USM allocation (or of memory ``from_dlpack`` takes)."""
        return adopt(memory, self._q, "get_native_mem").ptr

    def ext_codeplay_has_graph(self) -> bool:
        """Whether the command is being recorded into a CUDA graph (by stream capture)."""
        return self._stream is not None


class NativeCommand(Command):
    """``ext_codeplay_enqueue_native_command``: ``fn(interop_handle)`` enqueues native
    work on the queue's stream (on this CPU it simply runs).  In a CUDA graph the
    stream is captured into a child graph (``cuda/graph.py``)."""

    def __init__(self, fn, label: str = "", uses=()):
        super().__init__("native_command", None, label or getattr(fn, "__name__", "native_command"), uses)
        self.fn = fn

    def run(self, q) -> None:
        host_access.native_command_body(self.fn)(interop_handle(q))

    def capture(self, q, stream: int) -> None:
        self.fn(interop_handle(q, stream))


def host_task_command(fn, q) -> Command:
    """A ``host_task``: ``fn()``, or ``fn(interop_handle)`` when it takes one argument."""
    try:
        takes = [p for p in inspect.signature(fn).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    except (TypeError, ValueError):     # a builtin without a signature: called as before
        takes = []
    if len(takes) == 1:
        def run():
            fn(interop_handle(q))
        run.__name__ = getattr(fn, "__name__", "host_task")
        return Command("host_task", run, run.__name__)
    return Command("host_task", fn, getattr(fn, "__name__", "host_task"))
