"""A stand-in for ``libcuda.so.1`` in Python, so the GPU runtime's driver calls
(queues, launches, CUDA graphs built node by node) run on a machine without a
GPU.  Memory is host memory (device addresses are host addresses); streams run
each command when it is enqueued; a kernel runs the Python function the test
registers under its name (``kernels[name] = (parameter count, fn)``, ``fn``
called with the parameter values: the range values first for ``id`` kernels);
a CUDA graph keeps its nodes with their parameters copied when added (as the
driver does) and a launch runs them in the order added (each node's
dependencies were added before it).  ``refuse[name] = CUresult`` makes a call
fail; ``calls`` counts calls by name.

It checks what the real driver would reject: a dependency that is not a node
of the graph, a memset element size other than 1, 2 or 4, a graph launched
again while an allocation it made is not freed, memory freed twice."""
import ctypes
import itertools
from collections import Counter


#: handles of every fake driver (objects of an earlier test's driver, released later, never name this one's)
_HANDLES = itertools.count(0x1000, 0x10)


def _value(x):
    if isinstance(x, ctypes._SimpleCData):
        return x.value
    return x


def _out(ref, value):
    """Write through a ``ctypes.byref(...)`` argument."""
    ref._obj.value = value


class FakeDriver:
    def __init__(self):
        self.kernels: dict = {}
        self.refuse: dict = {}
        self.calls = Counter()
        self._ids = _HANDLES
        self.buffers: dict = {}         # address -> ctypes buffer
        self.functions: dict = {}       # CUfunction -> kernel name
        self.graphs: dict = {}          # CUgraph -> list of nodes
        self.execs: dict = {}           # CUgraphExec -> {"nodes": [...], "live": set()}
        self.launched: list = []        # (kernel name, grid, block, values)

    def __getattr__(self, name):
        if not name.startswith("cu"):
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
                   910: b"CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE"}.get(rc, b"CUDA_ERROR_UNKNOWN"))

    def _cuGetErrorString(self, rc, out):
        _out(out, b"refused by the fake driver")

    def _cuDriverGetVersion(self, out):
        _out(out, 12080)                # CUDA 12.8, as the driver writes it

    def _cuDevicePrimaryCtxRetain(self, out, dev):
        _out(out, next(self._ids))

    def _cuMemGetInfo_v2(self, free, total):
        _out(free, 1 << 34)
        _out(total, 1 << 35)

    def _cuModuleLoadDataEx(self, out, ptx, *rest):
        _out(out, next(self._ids))

    def _cuModuleGetFunction(self, out, module, name):
        h = next(self._ids)
        self.functions[h] = name.decode()
        _out(out, h)

    def _cuModuleGetGlobal_v2(self, *args):
        return 500                      # CUDA_ERROR_NOT_FOUND: no module globals

    # -- memory ---------------------------------------------------------------------
    def _alloc(self, n):
        buf = ctypes.create_string_buffer(max(int(n), 1))
        addr = ctypes.addressof(buf)
        self.buffers[addr] = buf
        return addr

    def _cuMemAlloc_v2(self, out, n):
        _out(out, self._alloc(n))

    _cuMemAllocManaged = lambda self, out, n, flags: self._cuMemAlloc_v2(out, n)  # noqa: E731
    _cuMemAllocHost_v2 = _cuMemAlloc_v2

    def _cuMemFree_v2(self, p):
        if self.buffers.pop(_value(p), None) is None:
            return 1

    _cuMemFreeHost = _cuMemFree_v2

    def _cuMemcpy(self, d, s, n):
        ctypes.memmove(_value(d), _value(s), _value(n))

    def _cuMemcpyAsync(self, d, s, n, stream):
        ctypes.memmove(_value(d), _value(s), _value(n))

    def _memset(self, ptr, value, width, count):
        raw = int(value).to_bytes(width, "little") * int(count)
        ctypes.memmove(int(ptr), raw, len(raw))

    def _cuMemsetD8Async(self, p, v, n, s):
        self._memset(_value(p), _value(v), 1, _value(n))

    def _cuMemsetD16Async(self, p, v, n, s):
        self._memset(_value(p), _value(v), 2, _value(n))

    def _cuMemsetD32Async(self, p, v, n, s):
        self._memset(_value(p), _value(v), 4, _value(n))

    # -- streams, events --------------------------------------------------------------
    def _cuStreamCreate(self, out, flags):
        _out(out, next(self._ids))

    def _cuEventCreate(self, out, flags):
        _out(out, next(self._ids))

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

    def _cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        count = self.kernels[self.functions[_value(fn)]][0]
        self._run_kernel(fn, (gx, gy, gz), (bx, by, bz), self._values(params, count))

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


def install(monkeypatch):
    """The fake as the loaded driver, and a GPU device (an H100's attributes) on it."""
    from minisycl.device_configs.targets import load_target
    from minisycl.runtime.cuda import device as cuda_device_mod, driver

    fake = FakeDriver()
    monkeypatch.setattr(driver, "_lib", fake)
    monkeypatch.setattr(driver, "_tried", True)
    monkeypatch.setattr(driver, "_functions", {})
    attrs = {"max_threads_per_block": 1024, "max_block_x": 1024, "max_block_y": 1024, "max_block_z": 64,
             "max_grid_x": 2 ** 31 - 1, "max_grid_y": 65535, "max_grid_z": 65535, "max_shared_per_block": 49152,
             "warp_size": 32, "multiprocessors": 132, "unified_addressing": 1, "cc_major": 9, "cc_minor": 0,
             "managed_memory": 1, "concurrent_managed_access": 1}
    dev = cuda_device_mod.cuda_device(load_target("nvidia_gpu_sm_90"), 0, 0, "nvidia_gpu_sm_90@fake", "Fake H100",
                                      attrs, 80 << 30)
    monkeypatch.setattr(cuda_device_mod._current, "context", None, raising=False)
    return fake, dev
