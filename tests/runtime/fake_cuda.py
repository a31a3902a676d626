"""A stand-in for ``libcuda.so.1`` in Python, so the GPU runtime's driver calls
(queues, launches, CUDA graphs built node by node) run on a machine without a
GPU.  Memory is host memory (device addresses are host addresses); streams run
each command when it is enqueued; a kernel runs the Python function the test
registers under its name (``kernels[name] = (parameter count, fn)``, ``fn``
called with the parameter values: the range values first for ``id`` kernels);
a CUDA graph keeps its nodes with their parameters copied when added (as the
driver does) and a launch runs them in the order added (each node's
dependencies were added before it).  ``refuse[name] = CUresult`` makes a call
fail; ``calls`` counts calls by name; a name in ``missing`` is a function this
driver lacks (an older driver's).

It checks what the real driver would reject: a dependency that is not a node
of the graph, a memset element size other than 1, 2 or 4, a graph launched
again while an allocation it made is not freed, memory freed twice.

Several GPUs (``install_devices``): each has its primary context
(``cuDevicePrimaryCtxRetain`` gives the same handle each time); the calling
thread's current context is what ``cuCtxSetCurrent`` set, and a call made
under the wrong one fails as the driver fails it (``CUDA_ERROR_INVALID_CONTEXT``):
an allocation, a module, a stream or an event is made without a current
context, a stream is used while another GPU's context is current, an event is
recorded on a stream of another context, or a kernel is launched on a stream
of another context than its module's.  ``p2p[(a, b)]`` says
whether GPU ``a`` can reach GPU ``b``'s memory (``cuDeviceGetP2PAttribute``,
``cuCtxEnablePeerAccess``); a kernel given another GPU's device memory
without peer access enabled fails with ``CUDA_ERROR_ILLEGAL_ADDRESS``, as the
hardware faults; ``cuMemcpyPeerAsync`` checks each side lies in its context's
GPU memory.

``lazy=True`` (``install(monkeypatch, lazy=True)``) models the real driver's
asynchrony where a test must see it: a stream's work (copies, memsets,
launches, graph launches, waits on events) runs only when something
synchronises with it (``cuStreamSynchronize``/``Query``,
``cuEventSynchronize``/``Query`` of an event recorded after it,
``cuCtxSynchronize``, another stream's ``cuStreamWaitEvent`` when that one
runs), so work on a stream nobody waits for never runs; ``cuMemcpy`` runs on
the legacy default stream (``CU_STREAM_LEGACY``, 1, or 0): into GPU memory from
pageable host memory or between GPU addresses it returns before the bytes land,
and only a synchronisation of the legacy stream (or the next ``cuMemcpy``) lands
them, not one of the queues' non-blocking streams; and fresh memory holds
garbage (0xAB bytes), as the driver's does, not zeros."""
import ctypes
import itertools
import threading
from collections import Counter

import pytest

#: the mark of a test module built on this stand-in: it replaces the CUDA driver for the whole
#: process, so it runs once, where no real GPU queue of an earlier test is alive to meet it (the
#: real driver's tests are tests/gpu and the GPU parameter of every other runtime test)
ONLY_ON_CPU = pytest.mark.cpu_only("uses the stand-in CUDA driver, which must not meet a real GPU's objects")


def ints(address: int, n: int):
    """The ``n`` 32-bit ints at ``address`` (the stand-in's device memory is host memory)."""
    return (ctypes.c_int32 * n).from_address(address)


def inc_kernel(n, _y, _z, p) -> None:
    """The stand-in's ``kernel inc(id<1> i, int* p) { p[i] = p[i] + 1; }`` over ``n`` work-items."""
    a = ints(p, n)
    for i in range(n):
        a[i] += 1


#: handles of every fake driver (objects of an earlier test's driver, released later, never name this one's)
_HANDLES = itertools.count(0x1000, 0x10)


def _value(x):
    if isinstance(x, ctypes._SimpleCData):
        return x.value
    return x


def _out(ref, value):
    """Write through a ``ctypes.byref(...)`` argument."""
    ref._obj.value = value


#: ``CUresult`` values the fake returns
INVALID_CONTEXT, INVALID_HANDLE, PEER_UNSUPPORTED, ALREADY_ENABLED, NOT_ENABLED, ILLEGAL_ADDRESS = \
    201, 400, 217, 704, 705, 700
INVALID_VALUE, OUT_OF_RESOURCES = 1, 701
#: an H100's block limits (``install``'s attributes): threads per block, and along x, y, z
BLOCK_LIMITS = (1024, 1024, 1024, 64)


#: the legacy default stream's key (handles 0 and 1, ``CU_STREAM_LEGACY``)
LEGACY = "legacy"


class FakeDriver:
    def __init__(self, devices: int = 1, lazy: bool = False):
        self.count = devices
        self.lazy = lazy
        self.work: dict = {}            # (lazy) stream -> its work not yet run: callables and ("mark", id)
        self._marks: dict = {}          # (lazy) event -> the mark of its latest record
        self._mark_stream: dict = {}    # mark -> its stream
        self._done_marks: set = set()
        self._mark_ids = itertools.count(1)
        self.p2p = {(a, b): True for a in range(devices) for b in range(devices) if a != b}
        self.peers: set = set()         # (device, peer device) pairs with peer access enabled
        self.contexts = {d: next(_HANDLES) for d in range(devices)}      # primary context per device
        self._device_of = {c: d for d, c in self.contexts.items()}
        self._tls = threading.local()
        self.owner: dict = {}           # address -> device of a cuMemAlloc_v2 (device memory)
        self.ctx_of: dict = {}          # stream, module, function -> its context
        self.kernels: dict = {}
        self.refuse: dict = {}
        self.missing: set = set()
        self.calls = Counter()
        self._ids = _HANDLES
        self.buffers: dict = {}         # address -> ctypes buffer
        self.pinned: set = set()        # addresses of cuMemAllocHost_v2 buffers
        self.functions: dict = {}       # CUfunction -> kernel name
        self.graphs: dict = {}          # CUgraph -> list of nodes
        self.execs: dict = {}           # CUgraphExec -> {"nodes": [...], "live": set()}
        self.launched: list = []        # (kernel name, grid, block, values)

    def __getattr__(self, name):
        if not name.startswith("cu") or name in self.missing:
            raise AttributeError(name)
        impl = getattr(type(self), "_" + name, None)

        def fn(*args):
            self.calls[name] += 1
            if name in self.refuse:
                return self.refuse[name]
            if impl is None:
                return 0
            rc = impl(self, *args)
            return 0 if rc is None else rc
        fn.__name__ = name
        self.__dict__[name] = fn
        return fn

    # -- errors, devices, contexts, modules -----------------------------------------
    def _cuGetErrorName(self, rc, out):
        _out(out, {1: b"CUDA_ERROR_INVALID_VALUE", 2: b"CUDA_ERROR_OUT_OF_MEMORY",
                   910: b"CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", INVALID_CONTEXT: b"CUDA_ERROR_INVALID_CONTEXT",
                   INVALID_HANDLE: b"CUDA_ERROR_INVALID_HANDLE", PEER_UNSUPPORTED: b"CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
                   ALREADY_ENABLED: b"CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
                   NOT_ENABLED: b"CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
                   ILLEGAL_ADDRESS: b"CUDA_ERROR_ILLEGAL_ADDRESS",
                   OUT_OF_RESOURCES: b"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"}.get(rc, b"CUDA_ERROR_UNKNOWN"))

    def _cuGetErrorString(self, rc, out):
        _out(out, b"refused by the fake driver")

    def _cuDriverGetVersion(self, out):
        _out(out, 12080)                # CUDA 12.8, as the driver writes it

    # (the context of the calling thread)
    @property
    def current(self):
        return getattr(self._tls, "ctx", None)

    def _cuCtxSetCurrent(self, ctx):
        self._tls.ctx = _value(ctx)

    def _cuDeviceGetCount(self, out):
        _out(out, self.count)

    def _cuDeviceGet(self, out, ordinal):
        _out(out, ordinal)

    def _cuDevicePrimaryCtxRetain(self, out, dev):
        _out(out, self.contexts[_value(dev)])

    def _cuDeviceGetP2PAttribute(self, out, attr, src, dst):
        src, dst = _value(src), _value(dst)
        _out(out, int(src == dst or self.p2p.get((src, dst), False)))

    def _cuCtxEnablePeerAccess(self, peer_ctx, flags):
        if self.current is None:
            return INVALID_CONTEXT
        pair = (self._device_of[self.current], self._device_of[_value(peer_ctx)])
        if not self.p2p.get(pair, False):
            return PEER_UNSUPPORTED
        if pair in self.peers:
            return ALREADY_ENABLED
        self.peers.add(pair)

    def _cuCtxDisablePeerAccess(self, peer_ctx):
        pair = (self._device_of[self.current], self._device_of[_value(peer_ctx)])
        if pair not in self.peers:
            return NOT_ENABLED
        self.peers.discard(pair)

    def _under(self, handle):
        """``INVALID_CONTEXT`` unless ``handle`` (a stream) belongs to the current context."""
        if self.current is None or self.ctx_of.get(_value(handle), self.current) != self.current:
            return INVALID_CONTEXT
        return 0

    def _cuMemGetInfo_v2(self, free, total):
        _out(free, 1 << 34)
        _out(total, 1 << 35)

    def _cuModuleLoadDataEx(self, out, ptx, *rest):
        if self.current is None:
            return INVALID_CONTEXT
        h = next(self._ids)
        self.ctx_of[h] = self.current
        _out(out, h)

    def _cuModuleGetFunction(self, out, module, name):
        h = next(self._ids)
        self.functions[h] = name.decode()
        self.ctx_of[h] = self.ctx_of[_value(module)]
        _out(out, h)

    def _cuModuleGetGlobal_v2(self, *args):
        return 500                      # CUDA_ERROR_NOT_FOUND: no module globals

    # -- memory ---------------------------------------------------------------------
    def _alloc(self, n):
        buf = ctypes.create_string_buffer(max(int(n), 1))
        addr = ctypes.addressof(buf)
        if self.lazy:                   # fresh memory holds garbage, not zeros
            ctypes.memset(addr, 0xAB, len(buf))
        self.buffers[addr] = buf
        return addr

    def _cuMemAlloc_v2(self, out, n):
        if self.current is None:
            return INVALID_CONTEXT
        addr = self._alloc(n)
        self.owner[addr] = self._device_of.get(self.current, 0)
        _out(out, addr)

    def _cuMemAllocHost_v2(self, out, n):
        if self.current is None:
            return INVALID_CONTEXT
        addr = self._alloc(n)
        self.pinned.add(addr)
        _out(out, addr)

    def _cuMemAllocManaged(self, out, n, flags):
        if self.current is None:
            return INVALID_CONTEXT
        _out(out, self._alloc(n))

    def _cuMemFree_v2(self, p):
        if self.buffers.pop(_value(p), None) is None:
            return 1
        self.owner.pop(_value(p), None)
        self.pinned.discard(_value(p))

    _cuMemFreeHost = _cuMemFree_v2

    def _cuMemcpy(self, d, s, n):
        if self.current is None:
            return INVALID_CONTEXT
        d, s, n = _value(d), _value(s), _value(n)
        if not self.lazy:
            ctypes.memmove(d, s, n)
            return
        self._flush(LEGACY)             # "a stream sync is performed before the copy"
        if self._on_gpu(d):             # lands later, on the legacy stream
            self._enqueue(LEGACY, self._copier(d, s, n))
        else:                           # into the host: finished when it returns
            ctypes.memmove(d, s, n)

    def _cuMemcpyAsync(self, d, s, n, stream):
        rc = self._under(stream)
        if rc:
            return rc
        self._enqueue(stream, self._copier(_value(d), _value(s), _value(n)))

    def _copier(self, d, s, n):
        """The copy as stream work: pageable host bytes are staged (read) now."""
        if self.lazy and self._pageable(s):
            staged = ctypes.string_at(s, n)
            return lambda: ctypes.memmove(d, staged, n)
        return lambda: ctypes.memmove(d, s, n)

    def _buffer_at(self, address):
        for base, buf in self.buffers.items():
            if base <= address < base + len(buf):
                return base
        return None

    def _pageable(self, address) -> bool:
        return self._buffer_at(address) is None

    def _on_gpu(self, address) -> bool:
        """Device or managed memory (what the GPU's copy engines write)."""
        base = self._buffer_at(address)
        return base is not None and base not in self.pinned

    # -- (lazy) stream work ----------------------------------------------------------------
    @staticmethod
    def _key(stream):
        h = _value(stream)
        return LEGACY if h in (None, 0, 1) else h

    def _enqueue(self, stream, fn):
        if not self.lazy:
            fn()
            return
        self.work.setdefault(self._key(stream), []).append(fn)

    def _flush(self, stream, mark=None):
        """Run ``stream``'s work, up to ``mark`` when given (an event's record)."""
        items = self.work.get(self._key(stream), [])
        while items:
            item = items.pop(0)
            if isinstance(item, tuple):
                self._done_marks.add(item[1])
                if item[1] == mark:
                    return
            else:
                item()

    def _flush_to(self, mark):
        if mark is not None and mark not in self._done_marks:
            self._flush(self._mark_stream[mark], mark)

    def _cuStreamSynchronize(self, stream):
        self._flush(stream)

    _cuStreamQuery = _cuStreamSynchronize

    def _cuStreamDestroy_v2(self, stream):
        self._flush(stream)             # (its work still completes)

    def _cuEventSynchronize(self, event):
        self._flush_to(self._marks.get(_value(event)))

    _cuEventQuery = _cuEventSynchronize

    def _cuCtxSynchronize(self):
        for key in list(self.work):
            self._flush(key)

    def _cuStreamWaitEvent(self, stream, event, flags):
        mark = self._marks.get(_value(event))
        self._enqueue(stream, lambda: self._flush_to(mark))

    def _device_memory_of(self, address):
        """The device whose ``cuMemAlloc_v2`` memory holds ``address``, or None."""
        for base, dev in self.owner.items():
            if base <= address < base + len(self.buffers[base]):
                return dev
        return None

    def _cuMemcpyPeerAsync(self, d, dctx, s, sctx, n, stream):
        rc = self._under(stream)
        if rc:
            return rc
        d, s = _value(d), _value(s)
        if self._device_memory_of(d) != self._device_of.get(_value(dctx)) or \
                self._device_memory_of(s) != self._device_of.get(_value(sctx)):
            return INVALID_HANDLE       # (the real driver reads the wrong memory: an illegal address)
        self._enqueue(stream, self._copier(d, s, _value(n)))

    def _memset(self, ptr, value, width, count):
        raw = int(value).to_bytes(width, "little") * int(count)
        ctypes.memmove(int(ptr), raw, len(raw))

    def _cuMemsetD8Async(self, p, v, n, s):
        return self._under(s) or self._enqueue(s, lambda: self._memset(_value(p), _value(v), 1, _value(n)))

    def _cuMemsetD16Async(self, p, v, n, s):
        return self._under(s) or self._enqueue(s, lambda: self._memset(_value(p), _value(v), 2, _value(n)))

    def _cuMemsetD32Async(self, p, v, n, s):
        return self._under(s) or self._enqueue(s, lambda: self._memset(_value(p), _value(v), 4, _value(n)))

    # -- streams, events --------------------------------------------------------------
    def _cuStreamCreate(self, out, flags):
        if self.current is None:
            return INVALID_CONTEXT
        h = next(self._ids)
        self.ctx_of[h] = self.current
        _out(out, h)

    def _cuEventCreate(self, out, flags):
        if self.current is None:
            return INVALID_CONTEXT
        h = next(self._ids)
        self.ctx_of[h] = self.current
        _out(out, h)

    def _cuEventRecord(self, event, stream):
        if self.ctx_of.get(_value(event)) != self.ctx_of.get(_value(stream), self.ctx_of.get(_value(event))):
            return INVALID_HANDLE       # an event of another context than the stream's
        if self.lazy:
            mark = next(self._mark_ids)
            self._marks[_value(event)] = mark
            self._mark_stream[mark] = self._key(stream)
            self.work.setdefault(self._key(stream), []).append(("mark", mark))

    def _cuEventElapsedTime(self, out, a, b):
        _out(out, 0.001)

    # -- kernels ----------------------------------------------------------------------
    def _run_kernel(self, fn, grid, block, values):
        name = self.functions[_value(fn)]
        self.launched.append((name, tuple(grid), tuple(block), tuple(values)))
        count, impl = self.kernels[name]
        impl(*values[:count])

    @staticmethod
    def _values(params, count):
        arr = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
        return [ctypes.c_uint64.from_address(arr[i]).value for i in range(count)]

    def _cuFuncGetAttribute(self, out, attribute, fn):
        """A kernel's compiled limits: 1024 threads per block (attribute 0), no static
        shared memory (1)."""
        _out(out, 1024 if _value(attribute) == 0 else 0)

    def _cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        rc = self._under(stream)
        if rc:
            return rc
        if self.ctx_of.get(_value(fn)) != self.current:
            return INVALID_HANDLE       # a function of another context's module
        block = (_value(bx), _value(by), _value(bz))
        if block[0] * block[1] * block[2] > BLOCK_LIMITS[0] or any(b > m for b, m in zip(block, BLOCK_LIMITS[1:])):
            return INVALID_VALUE        # a block beyond the device, as the driver refuses it
        count = self.kernels[self.functions[_value(fn)]][0]
        values = self._values(params, count)
        here = self._device_of.get(self.current, 0)
        for v in values:                # another GPU's memory without peer access: the GPU faults
            there = self.owner.get(v)
            if there is not None and there != here and (here, there) not in self.peers:
                return ILLEGAL_ADDRESS
        self._enqueue(stream, lambda: self._run_kernel(fn, (gx, gy, gz), (bx, by, bz), values))

    def _cuLaunchKernelEx(self, config, fn, params, extra):
        c = config._obj                 # (a ``LaunchConfig`` by reference)
        if c.attrs or c.numAttrs:
            return INVALID_VALUE        # (no launch attributes are given)
        return self._cuLaunchKernel(fn, c.gridDimX, c.gridDimY, c.gridDimZ, c.blockDimX, c.blockDimY, c.blockDimZ,
                                    c.sharedMemBytes, c.hStream, params, extra)

    # -- graphs -------------------------------------------------------------------------
    def _cuGraphCreate(self, out, flags):
        h = next(self._ids)
        self.graphs[h] = []
        _out(out, h)

    def _add(self, out, graph, deps, ndeps, kind, data):
        nodes = self.graphs[_value(graph)]
        handles = {n["h"] for n in nodes}
        arr = ctypes.cast(deps, ctypes.POINTER(ctypes.c_void_p))
        dep_list = [arr[i] for i in range(_value(ndeps))]
        if any(d not in handles for d in dep_list):
            return 1
        h = next(self._ids)
        nodes.append({"h": h, "kind": kind, "deps": dep_list, "data": data})
        _out(out, h)

    def _kernel_data(self, p):
        count = self.kernels[self.functions[p.func]][0]
        return {"fn": p.func, "grid": (p.gridDimX, p.gridDimY, p.gridDimZ),
                "block": (p.blockDimX, p.blockDimY, p.blockDimZ), "values": self._values(p.kernelParams, count)}

    def _cuGraphAddKernelNode_v2(self, out, graph, deps, ndeps, params):
        return self._add(out, graph, deps, ndeps, 0, self._kernel_data(params._obj))

    def _cuGraphAddMemcpyNode(self, out, graph, deps, ndeps, params, ctx):
        p = params._obj
        assert p.srcMemoryType == 4 and p.dstMemoryType == 4 and p.Height == 1 and p.Depth == 1
        return self._add(out, graph, deps, ndeps, 1, (p.dstDevice, p.srcDevice, p.WidthInBytes))

    def _cuGraphAddMemsetNode(self, out, graph, deps, ndeps, params, ctx):
        p = params._obj
        if p.elementSize not in (1, 2, 4) or p.height != 1:
            return 1
        return self._add(out, graph, deps, ndeps, 2, (p.dst, p.value, p.elementSize, p.width))

    def _cuGraphAddHostNode(self, out, graph, deps, ndeps, params):
        p = params._obj
        return self._add(out, graph, deps, ndeps, 3, (p.fn, p.userData))

    def _cuGraphAddEmptyNode(self, out, graph, deps, ndeps):
        return self._add(out, graph, deps, ndeps, 5, None)

    def _cuGraphAddMemAllocNode(self, out, graph, deps, ndeps, params):
        p = params._obj
        if p.poolProps.allocType != 1 or p.poolProps.location.type != 1 or any(p.poolProps.reserved):
            return 1
        p.dptr = self._alloc(p.bytesize)
        return self._add(out, graph, deps, ndeps, 10, (p.dptr, p.bytesize))

    def _cuGraphAddMemFreeNode(self, out, graph, deps, ndeps, dptr):
        return self._add(out, graph, deps, ndeps, 11, _value(dptr))

    def _cuGraphInstantiateWithFlags(self, out, graph, flags):
        h = next(self._ids)
        self.execs[h] = {"nodes": [dict(n) for n in self.graphs[_value(graph)]], "live": set()}
        _out(out, h)

    def _cuGraphLaunch(self, exec_, stream):
        ex = self.execs[_value(exec_)]
        if ex["live"]:
            return 1                    # relaunched with an allocation not freed
        if self.lazy:
            self._enqueue(stream, lambda: [self._run_node(ex, n) for n in ex["nodes"]])
            return
        for n in ex["nodes"]:
            rc = self._run_node(ex, n)
            if rc:
                return rc

    def _run_node(self, ex, n):
        kind, data = n["kind"], n["data"]
        if kind == 6:                   # a child graph: its nodes, in the order added
            for child in data:
                rc = self._run_node(ex, child)
                if rc:
                    return rc
        elif kind == 0:
            self._run_kernel(data["fn"], data["grid"], data["block"], data["values"])
        elif kind == 1:
            ctypes.memmove(*data)
        elif kind == 2:
            self._memset(data[0], data[1], data[2], data[3])
        elif kind == 3:
            data[0](data[1])
        elif kind == 10:
            ex["live"].add(data[0])
            ctypes.memset(data[0], 0xAB, data[1])       # fresh memory holds garbage
        elif kind == 11:
            if data not in ex["live"]:
                return 1
            ex["live"].discard(data)

    def _node(self, exec_, node):
        return next(n for n in self.execs[_value(exec_)]["nodes"] if n["h"] == _value(node))

    def _cuGraphExecKernelNodeSetParams_v2(self, exec_, node, params):
        self._node(exec_, node)["data"] = self._kernel_data(params._obj)

    def _cuGraphExecHostNodeSetParams(self, exec_, node, params):
        p = params._obj
        self._node(exec_, node)["data"] = (p.fn, p.userData)

    def _cuGraphExecUpdate_v2(self, exec_, graph, info):
        mine, theirs = self.execs[_value(exec_)]["nodes"], self.graphs[_value(graph)]
        if len(mine) != len(theirs) or any(a["kind"] != b["kind"] for a, b in zip(mine, theirs)):
            info._obj.result = 2
            return 910
        index = {b["h"]: a["h"] for a, b in zip(mine, theirs)}
        if any([index[d] for d in b["deps"]] != a["deps"] for a, b in zip(mine, theirs)):
            info._obj.result = 2
            return 910
        for a, b in zip(mine, theirs):
            a["data"] = b["data"]

    # stream capture: the work a captured stream is given is not modelled (the tests
    # capture none); the capture ends as a graph of no nodes
    def _cuStreamBeginCapture_v2(self, stream, mode):
        self.capturing = getattr(self, "capturing", set()) | {_value(stream)}

    def _cuStreamEndCapture(self, stream, out):
        if _value(stream) not in getattr(self, "capturing", set()):
            return 1                        # CUDA_ERROR_ILLEGAL_STATE-like: not capturing
        self.capturing.discard(_value(stream))
        h = next(self._ids)
        self.graphs[h] = []
        _out(out, h)

    def _cuGraphAddChildGraphNode(self, out, graph, deps, ndeps, child):
        return self._add(out, graph, deps, ndeps, 6, [dict(n) for n in self.graphs[_value(child)]])

    def _cuGraphGetNodes(self, graph, nodes, count):
        listed = self.graphs[_value(graph)]
        if nodes:
            for i, n in enumerate(listed):
                nodes[i] = n["h"]
        _out(count, len(listed))

    def _cuGraphNodeGetType(self, node, out):
        h = _value(node)
        for nodes in self.graphs.values():
            for n in nodes:
                if n["h"] == h:
                    _out(out, n["kind"])
                    return
        return 1

    def _cuGraphDestroy(self, graph):
        self.graphs.pop(_value(graph), None)

    def _cuGraphExecDestroy(self, exec_):
        self.execs.pop(_value(exec_), None)


def install(monkeypatch, lazy: bool = False):
    """The fake as the loaded driver, and a GPU device (an H100's attributes) on it
    (``lazy``: asynchronous streams, see the module docstring)."""
    fake, devices = install_devices(monkeypatch, 1, lazy)
    return fake, devices[0]


def install_devices(monkeypatch, count: int, lazy: bool = False):
    """The fake as the loaded driver with ``count`` GPUs (H100s), and a device for each
    (named ``nvidia_gpu_sm_90@fake`` and ``...@fake1``, ``@fake2``...)."""
    from minisycl.device_configs.targets import load_target
    from minisycl.runtime.cuda import device as cuda_device_mod, driver

    fake = FakeDriver(count, lazy)
    monkeypatch.setattr(driver, "_lib", fake)
    monkeypatch.setattr(driver, "_tried", True)
    monkeypatch.setattr(driver, "_functions", {})
    attrs = {"max_threads_per_block": 1024, "max_block_x": 1024, "max_block_y": 1024, "max_block_z": 64,
             "max_grid_x": 2 ** 31 - 1, "max_grid_y": 65535, "max_grid_z": 65535, "max_shared_per_block": 49152,
             "warp_size": 32, "multiprocessors": 132, "unified_addressing": 1, "cc_major": 9, "cc_minor": 0,
             "managed_memory": 1, "concurrent_managed_access": 1}
    devices = [cuda_device_mod.cuda_device(load_target("nvidia_gpu_sm_90"), i, i,
                                           "nvidia_gpu_sm_90@fake" + (str(i) if i else ""), "Fake H100", attrs,
                                           80 << 30) for i in range(count)]
    monkeypatch.setattr(cuda_device_mod._current, "context", None, raising=False)
    return fake, devices
