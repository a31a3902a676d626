"""Executable command graphs on an NVIDIA GPU as CUDA graphs built node by node.

``cuda_graph(ex)`` turns a finalized ``executable_command_graph`` (its nodes
in topological order, their commands and edges) into one ``CUgraph`` with the
driver's node calls, each node added with its dependencies:

* kernel  — ``cuGraphAddKernelNode_v2`` (the parameters as an eager launch
  passes them: the range values, then the 8-byte argument slots; an empty range
  is an empty node);
* memcpy  — ``cuGraphAddMemcpyNode`` (``CU_MEMORYTYPE_UNIFIED`` both sides)
  between memory the driver knows (device, pinned host, managed); pageable host
  memory (a NumPy array) goes through a pinned staging buffer of the graph,
  filled or emptied by a host node next to the memcpy node;
* memset / fill — ``cuGraphAddMemsetNode`` for 1-, 2- and 4-byte elements on
  device or managed memory; a fill of pinned host memory is a host node, a
  wider pattern a memcpy node from a pinned buffer holding it;
* host_task — ``cuGraphAddHostNode``: a ``CFUNCTYPE`` callback kept alive with
  the graph; an exception it raises is kept and raised by the next wait on the
  queue that launched the graph (it runs on the driver's thread);
* native_command (``ext_codeplay_enqueue_native_command``, the collectives of
  ``distributed.py``) — the native work its function enqueues on a stream in
  capture mode (``cuStreamBeginCapture_v2``), added as a child-graph node;
* empty, barrier, prefetch, mem_advise — ``cuGraphAddEmptyNode``;
* async_malloc / async_free — ``cuGraphAddMemAllocNode`` / ``cuGraphAddMemFreeNode``
  for an allocation the graph also frees: the driver picks the address when the
  node is added, and the addresses of the graph's placeholder block in the
  commands between the two nodes are moved to it.  An allocation no node frees
  lives as long as the graph (its contents carry over from one replay to the
  next, as the graph extension says) in the graph's own block, and its
  allocation node is an empty node.

``cuGraphInstantiateWithFlags`` makes the executable graph once; a replay is
one ``cuGraphLaunch`` on the submitting queue's stream.  A kernel- or
host-node update is ``cuGraphExecKernelNodeSetParams_v2`` /
``cuGraphExecHostNodeSetParams``; a whole-graph update builds a ``CUgraph``
of the new commands with the same topology and hands it to
``cuGraphExecUpdate_v2``.  When the driver refuses, the executable graph is
unchanged and the caller gets ``errc::invalid`` naming the driver's error.

A graph this module cannot express (a sub-graph node, a kernel with a
reduction, a command of another kind) is run command by command on the
stream instead (``cuda_queue.run_graph_steps``): ``cuda_graph`` returns ``None``.
"""
from __future__ import annotations

import ctypes

from ..backend import KernelCommand, allocation_at, errc, exception, has_reductions
from . import driver
from .commands import CopyCommand, FillCommand
from .memory import cuda_allocation

#: the context each thread has current (``device.activate``): a replay or an update calls
#: ``activate`` only to change it
_current = driver.current
#: up to this many argument slots, a slot update compares and copies them one by one, not by ``memmove``
_FEW_SLOTS = 8

__all__ = ["cuda_graph", "CudaGraph"]

_UNIFIED = 4                    # CU_MEMORYTYPE_UNIFIED
_PINNED = 1                     # CU_MEM_ALLOCATION_TYPE_PINNED
_ON_DEVICE = 1                  # CU_MEM_LOCATION_TYPE_DEVICE
_CAPTURE_THREAD_LOCAL = 1       # CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
_EMPTY_KINDS = ("empty", "ext_oneapi_barrier", "prefetch", "memadvise")


class _Unsupported(Exception):
    """The graph holds something a CUDA graph here does not express."""


def cuda_graph(ex) -> "CudaGraph | None":
    """A ``CudaGraph`` for executable graph ``ex``, or ``None`` when it must run command by command."""
    try:
        return CudaGraph(ex)
    except _Unsupported:
        return None


def _driver_known(address: int, n: int) -> bool:
    """Whether ``[address, address + n)`` lies in memory the driver allocated."""
    a = allocation_at(address)
    return isinstance(a, cuda_allocation) and address + n <= a.ptr + a.nbytes


def _host_memory(address: int) -> bool:
    """Whether ``address`` is host memory (pinned or pageable), not device or managed memory."""
    a = allocation_at(address)
    return not (isinstance(a, cuda_allocation) and a.kind in ("device", "shared"))


class _Pinned:
    """A pinned host buffer the graph owns (staging copies, fill patterns)."""

    def __init__(self, nbytes: int, what: str):
        p = ctypes.c_void_p()
        driver.call("cuMemAllocHost_v2", ctypes.byref(p), max(nbytes, 1), what=what)
        self.ptr, self.nbytes = p.value, nbytes

    def free(self) -> None:
        if self.ptr:
            driver.query("cuMemFreeHost", ctypes.c_void_p(self.ptr))
            self.ptr = 0


class _Built:
    """A command graph node's CUDA nodes: ``last`` is what its successors depend on;
    ``handle`` the node an update sets (kernel and host nodes); ``kind`` the
    CUDA node kind chosen (an update that needs another kind rebuilds);
    ``params`` a kernel node's ``kernel_params`` as the driver last took them
    (a dynamic parameter's update writes its slots and sets them again)."""

    __slots__ = ("last", "handle", "kind", "params")

    def __init__(self, last, handle, kind: str, params=None):
        self.last, self.handle, self.kind, self.params = last, handle, kind, params


class _Builder:
    """Adds the nodes of one ``CUgraph`` (see the module docstring)."""

    def __init__(self, owner: "CudaGraph", entries):
        self.owner = owner
        self.graph = ctypes.c_void_p()
        driver.call("cuGraphCreate", ctypes.byref(self.graph), 0, what="creating a CUDA graph")
        self.built: dict = {}
        try:
            self._pair_allocations(entries)
            for key, kind, cmd, preds in entries:
                self.built[key] = self._add(key, kind, cmd, [self.built[p].last for p in preds])
        except BaseException:
            driver.query("cuGraphDestroy", self.graph)
            raise

    # -- graph-owned memory -------------------------------------------------------

    def _pair_allocations(self, entries) -> None:
        """Which allocation nodes get driver memory: those the graph also frees
        (``free_key``: alloc key -> free key); the others keep their block."""
        frees = {}
        for key, kind, cmd, _ in entries:
            if kind == "async_free":
                target = getattr(cmd.frees, "_cmd", None)
                if target is not None and getattr(target, "allocation", None) is not None:
                    frees[id(target)] = key
        self.alloc_of = {}       # alloc key -> its command
        self.dptr = {}           # alloc key -> the driver's address
        self.paired = set()
        for key, kind, cmd, _ in entries:
            if kind == "async_malloc" and id(cmd) in frees:
                self.paired.add(key)
                self.alloc_of[key] = cmd
        self.preds = {key: preds for key, _, _, preds in entries}
        self.free_key = {key: frees[id(cmd)] for key, cmd in self.alloc_of.items()}

    def _live_allocations(self, key) -> dict:
        """block address -> (block size, driver address) of the paired allocations
        live at ``key``: an allocation node among its ancestors whose free node is not."""
        if not self.paired:
            return {}
        seen, work = set(), list(self.preds[key])
        while work:
            k = work.pop()
            if k not in seen:
                seen.add(k)
                work.extend(self.preds[k])
        out = {}
        for a in self.paired:
            if a in seen and self.free_key[a] not in seen:
                block = self.alloc_of[a].allocation
                out[block.ptr] = (block.nbytes, self.dptr[a])
        return out

    def _moved(self, address: int, live: dict) -> int:
        for base, (size, dptr) in live.items():
            if base <= address < base + size:
                return dptr + (address - base)
        return address

    # -- nodes ------------------------------------------------------------------

    def _node(self, call: str, deps, *args, what: str):
        node = ctypes.c_void_p()
        arr = (ctypes.c_void_p * max(len(deps), 1))(*[d.value for d in deps])
        driver.call(call, ctypes.byref(node), self.graph, arr, len(deps), *args, what=what)
        return node

    def _add(self, key, kind: str, cmd, deps) -> _Built:
        owner = self.owner
        if kind in _EMPTY_KINDS or cmd is None or (kind == "async_malloc" and key not in self.paired):
            return _Built(self._node("cuGraphAddEmptyNode", deps, what="an empty graph node"), None, "empty")
        if kind == "async_free":
            target = getattr(cmd.frees, "_cmd", None)
            alloc = next((a for a, c in self.alloc_of.items() if c is target and self.free_key[a] == key), None)
            if alloc is None:                  # memory the graph keeps (or not the graph's): nothing to free
                return _Built(self._node("cuGraphAddEmptyNode", deps, what="an empty graph node"), None, "empty")
            node = self._node("cuGraphAddMemFreeNode", deps, self.dptr[alloc], what="a graph memory-free node")
            return _Built(node, None, "mem_free")
        if kind == "async_malloc":
            block = cmd.allocation
            params = driver.MemAllocNodeParams()
            params.poolProps.allocType = _PINNED
            params.poolProps.location.type = _ON_DEVICE
            params.poolProps.location.id = owner.device.ordinal
            params.bytesize = block.nbytes
            node = self._node("cuGraphAddMemAllocNode", deps, ctypes.byref(params), what="a graph allocation node")
            self.dptr[key] = params.dptr
            if id(block) in owner.zero_init:    # zero_init: zeroed before first use in each replay
                return _Built(self._memset(params.dptr, b"\0", block.nbytes, [node]), None, "mem_alloc")
            return _Built(node, None, "mem_alloc")
        live = self._live_allocations(key)
        if kind == "kernel":
            return self._kernel(cmd, deps, live)
        if kind == "host_task":
            node = self._host(cmd._run, deps)
            return _Built(node, node, "host")
        if kind == "native_command":                  # (interop.NativeCommand: its stream is captured)
            return _Built(self._captured(cmd, deps), None, "native")
        if kind == "memcpy" and isinstance(cmd, CopyCommand):
            return _Built(self._copy(*cmd.copy, deps, live), None, "memcpy")
        if kind in ("memset", "memfill") and isinstance(cmd, FillCommand):
            return _Built(self._fill(*cmd.fill, deps, live), None, "memset")
        raise _Unsupported(kind)

    def _kernel(self, cmd: KernelCommand, deps, live: dict) -> _Built:
        params = self.owner.kernel_params(cmd, live)
        if params is None:                     # an empty range: nothing to launch
            return _Built(self._node("cuGraphAddEmptyNode", deps, what="an empty graph node"), None, "empty")
        node = self._node("cuGraphAddKernelNode_v2", deps, ctypes.byref(params[0]),
                          what=f"a graph node for kernel '{cmd.kernel.name}'")
        return _Built(node, node, "kernel", params)

    def _captured(self, cmd, deps):
        """A child-graph node of what ``cmd.capture`` enqueues on a capturing stream."""
        stream, child = ctypes.c_void_p(), ctypes.c_void_p()
        driver.call("cuStreamCreate", ctypes.byref(stream), 1, what="a stream to capture a native command")
        try:
            driver.call("cuStreamBeginCapture_v2", stream, _CAPTURE_THREAD_LOCAL, what="capturing a native command")
            try:
                cmd.capture(self.owner.queue, stream.value)
            finally:
                driver.call("cuStreamEndCapture", stream, ctypes.byref(child), what="capturing a native command")
            try:
                count = ctypes.c_size_t(0)
                driver.call("cuGraphGetNodes", child, None, ctypes.byref(count), what="a captured native command")
                if not count.value:             # nothing was enqueued
                    return self._node("cuGraphAddEmptyNode", deps, what="an empty graph node")
                node = self._node("cuGraphAddChildGraphNode", deps, child, what="a graph node of a native command")
            finally:
                driver.query("cuGraphDestroy", child)
        finally:
            driver.query("cuStreamDestroy_v2", stream)
        return node

    def _host(self, fn, deps):
        params = self.owner.host_params(fn)
        return self._node("cuGraphAddHostNode", deps, ctypes.byref(params), what="a graph host-task node")

    def _memcpy(self, dst: int, src: int, n: int, deps):
        p = driver.Memcpy3D()
        p.srcMemoryType = p.dstMemoryType = _UNIFIED
        p.srcDevice, p.dstDevice = src, dst
        p.WidthInBytes, p.Height, p.Depth = n, 1, 1
        return self._node("cuGraphAddMemcpyNode", deps, ctypes.byref(p), self.owner.device.primary_context(),
                          what=f"a graph memcpy node of {n} bytes")

    def _copy(self, dst: int, src: int, n: int, deps, live: dict):
        """(The kind of memory is told from the commands' own addresses; graph-owned
        memory's placeholder block is device memory; then the addresses move.)"""
        if n == 0:
            return self._node("cuGraphAddEmptyNode", deps, what="an empty graph node")
        src_ok, dst_ok = _driver_known(src, n), _driver_known(dst, n)
        dst, src = self._moved(dst, live), self._moved(src, live)
        if src_ok and dst_ok:
            return self._memcpy(dst, src, n, deps)
        if not src_ok and not dst_ok:          # host to host: the host copies
            return self._host(lambda: ctypes.memmove(dst, src, n), deps)
        stage = self.owner.pinned(n, "a staging buffer of a graph copy")
        if not src_ok:                         # pageable -> GPU memory: host copy into pinned, then the GPU's
            first = self._host(lambda: ctypes.memmove(stage.ptr, src, n), deps)
            return self._memcpy(dst, stage.ptr, n, [first])
        first = self._memcpy(stage.ptr, src, n, deps)
        return self._host(lambda: ctypes.memmove(dst, stage.ptr, n), [first])

    def _memset(self, ptr: int, element: bytes, count: int, deps):
        p = driver.MemsetNodeParams()
        p.dst, p.value, p.elementSize = ptr, int.from_bytes(element, "little"), len(element)
        p.width, p.height, p.pitch = count, 1, 0
        return self._node("cuGraphAddMemsetNode", deps, ctypes.byref(p), self.owner.device.primary_context(),
                          what=f"a graph memset node of {count} elements")

    def _fill(self, ptr: int, element: bytes, count: int, deps, live: dict):
        n = len(element) * count
        if count == 0:
            return self._node("cuGraphAddEmptyNode", deps, what="an empty graph node")
        on_host = _host_memory(ptr)
        ptr = self._moved(ptr, live)
        if on_host:                            # pinned host (or host) memory: the host fills it
            data = element * count
            return self._host(lambda: ctypes.memmove(ptr, data, n), deps)
        if len(element) in (1, 2, 4):
            return self._memset(ptr, element, count, deps)
        pattern = self.owner.pinned(n, "a fill pattern of a graph")
        ctypes.memmove(pattern.ptr, element * count, n)
        return self._memcpy(ptr, pattern.ptr, n, deps)


class CudaGraph:
    """One executable command graph as an instantiated CUDA graph."""

    def __init__(self, ex):
        self.device, self.queue = ex.device, ex._queue
        self.zero_init = ex.graph._zero_init
        self._keep: list = []           # host callbacks and pinned buffers: alive as long as the graph
        self._sink: list | None = None  # the launching queue's list of host-task exceptions
        self.launched = False           # replayed at least once: wait for the device before release
        self._order = list(ex.order)
        self._preds = dict(ex._preds)
        self._check(ex._commands)
        self.device.activate()
        builder = _Builder(self, self._entries(ex._commands))
        self.graph, self.built, self._builder = builder.graph, builder.built, builder
        try:
            self.exec = self._instantiate(self.graph)
        except exception:
            driver.query("cuGraphDestroy", self.graph)
            self.exec = None
            raise
        #: its kernels' names, each once (a replay counts them launched: the queue's error names them)
        self.kernel_names = tuple(dict.fromkeys(c.kernel.name for c in ex._commands.values()
                                                if isinstance(c, KernelCommand)))
        self.assert_flags: dict = {}     # the kernels' assert flags (cuda/queue.py), filled as nodes are made
        # a replay's and a slot update's calls, their arguments ctypes objects (``driver.unchecked``)
        self._graph_launch = driver.unchecked("cuGraphLaunch")
        self._set_kernel_params = driver.unchecked("cuGraphExecKernelNodeSetParams_v2")
        #: node -> what a slot update of it writes (``_slot_target``), made on its first slot
        #: update, dropped whenever the nodes' parameters are built again
        self._slot_targets: dict = {}

    def _check(self, commands) -> None:
        for n, cmd in commands.items():
            if n.kind.name == "subgraph" or (isinstance(cmd, KernelCommand) and has_reductions(cmd.args)):
                raise _Unsupported(n.kind.name)

    def _entries(self, commands):
        return [(n, n.kind.name, commands[n], self._preds[n]) for n in self._order]

    def _instantiate(self, graph):
        exec_ = ctypes.c_void_p()
        driver.call("cuGraphInstantiateWithFlags", ctypes.byref(exec_), graph, 0, what="instantiating a CUDA graph")
        return exec_

    # -- what the builder asks ------------------------------------------------------

    def kernel_params(self, cmd: KernelCommand, live: dict = None):
        """(``KernelNodeParams``, what it points to) for ``cmd``; ``None`` for an empty range."""
        k = cmd.kernel
        if k.item is not None and any(cmd.geometry[d] == 0 for d in range(k.dims)):
            return None
        q = self.queue
        plan = q._plan(k)
        if plan.flag:
            self.assert_flags[plan.flag] = k.name
        slots = (ctypes.c_uint64 * max(plan.total, 1))(*cmd.slots[:plan.total])   # (struct arguments' bytes last)
        if live:
            for i in plan.pointers:
                for base, (size, dptr) in live.items():
                    if slots[i] and base <= slots[i] < base + size:
                        slots[i] = dptr + (slots[i] - base)
        q._check_pointers(k, plan, cmd.slots)
        grid, block = q.launch_shape(k, cmd.geometry)
        slots, shared = q.work_group_checks(k, plan, slots, cmd.geometry, block)
        dims = (ctypes.c_int64 * 3)(*[max(int(cmd.geometry[d]), 1) for d in range(3)])
        ptrs = [ctypes.addressof(dims) + 8 * d for d in range(3)] if k.item is not None else []
        ptrs += [ctypes.addressof(slots) + 8 * at for at in k.signature.value_slots()]
        arr = (ctypes.c_void_p * max(len(ptrs), 1))(*ptrs)
        p = driver.KernelNodeParams()
        p.func = plan.fn.value
        p.gridDimX, p.gridDimY, p.gridDimZ = grid
        p.blockDimX, p.blockDimY, p.blockDimZ = block
        p.sharedMemBytes = shared
        p.kernelParams = ctypes.addressof(arr)
        return p, (slots, dims, arr)

    def host_params(self, fn) -> driver.HostNodeParams:
        """The host-node parameters calling ``fn`` (the callback kept alive with the graph)."""
        def call(_):
            try:
                fn()
            except BaseException as err:  # noqa: BLE001 - it cannot cross the driver's thread
                sink = self._sink
                if sink is not None:
                    sink.append(err)
        cb = driver.HOST_FN(call)
        self._keep.append(cb)
        return driver.HostNodeParams(cb, None)

    def pinned(self, nbytes: int, what: str) -> _Pinned:
        buf = _Pinned(nbytes, what)
        self._keep.append(buf)
        return buf

    # -- use ------------------------------------------------------------------------

    def node_kinds(self) -> dict:
        """CUDA node kind -> count, as the driver reports the graph (tests, the benchmark)."""
        count = ctypes.c_size_t()
        driver.call("cuGraphGetNodes", self.graph, None, ctypes.byref(count))
        nodes = (ctypes.c_void_p * max(count.value, 1))()
        driver.call("cuGraphGetNodes", self.graph, nodes, ctypes.byref(count))
        out: dict = {}
        for i in range(count.value):
            t = ctypes.c_int()
            driver.call("cuGraphNodeGetType", ctypes.c_void_p(nodes[i]), ctypes.byref(t))
            name = driver.GRAPH_NODE_TYPES.get(t.value, str(t.value))
            out[name] = out.get(name, 0) + 1
        return out

    def launch(self, q) -> None:
        """One replay on ``q``'s stream (the caller holds ``q``'s lock)."""
        dev = q.device
        if dev.lost is not None or _current.context is not dev._context:
            dev.activate()
        self._sink = q._async_errors
        self.launched = True
        rc = self._graph_launch(self.exec, q._stream_arg)
        if rc:
            driver.raise_for(rc, "launching a CUDA graph")
        seq, pending = q._seq + 1, q._pending       # (its place: counted after it)
        for name in self.kernel_names:
            pending[name] = seq
        if self.assert_flags:
            q._asserts.update(self.assert_flags)

    def _refused(self, rc: int, what: str, detail: str = "") -> exception:
        return exception(errc.invalid, f"{what}: the CUDA driver refused it ({driver.error_name(rc)}"
                                       f"{', ' + detail if detail else ''}); the executable graph is unchanged")

    def update_nodes(self, commands: dict, before: dict, merged) -> None:
        """New commands for some nodes (``commands``; ``before`` their current ones,
        ``merged()`` every node's command after the update).  Kernel and host nodes
        take ``cuGraphExec*NodeSetParams``; when the driver refuses one, those
        already set get their old parameters back and ``errc::invalid`` is raised.
        A node whose CUDA node kind would change (an empty range now not empty,
        say) rebuilds the executable graph instead.  The old parameters are built
        only for a roll-back, and ``merged`` only for a rebuild: updating one
        kernel node costs one node's parameters and one driver call."""
        self.device.activate()
        changes, taken = [], []
        for n, cmd in commands.items():
            built, kind = self.built.get(n), n.kind.name
            if built is None:
                continue
            if kind == "kernel":
                live = self._builder._live_allocations(n)
                params = self.kernel_params(cmd, live) if isinstance(cmd, KernelCommand) else None
                if (params is None) != (built.kind == "empty"):
                    return self._rebuild(merged())
                if params is not None:
                    old = before.get(n)
                    taken.append((built, params))
                    changes.append(("cuGraphExecKernelNodeSetParams_v2", built.handle, params,
                                    (lambda old=old, live=live: self.kernel_params(old, live))
                                    if isinstance(old, KernelCommand) else None,
                                    f"kernel '{cmd.kernel.name}'"))
            elif kind == "host_task" and cmd is not None and built.kind == "host":
                old = before.get(n)
                changes.append(("cuGraphExecHostNodeSetParams", built.handle, (self.host_params(cmd._run),),
                                (lambda old=old: (self.host_params(old._run),)) if old is not None else None,
                                "a host task"))
        for i, (call, handle, params, _, name) in enumerate(changes):
            rc = driver.query(call, self.exec, handle, ctypes.byref(params[0]))
            if rc:
                for call_back, handle_back, _, old, _ in changes[:i]:
                    if old is not None:
                        try:
                            old = old()     # (its memory may be gone since: then it stays as set)
                        except exception:
                            old = None
                        if old is not None:
                            driver.query(call_back, self.exec, handle_back, ctypes.byref(old[0]))
                raise self._refused(rc, f"updating the graph node of {name}")
        for built, params in taken:         # what the driver now has: a later slot update writes into it
            built.params = params
        self._slot_targets.clear()

    def update_slots(self, n, k, slots) -> bool:
        """A dynamic parameter's new value for kernel node ``n`` whose kernel ``k``
        and range are unchanged: the new ``slots`` written into the parameters the driver
        last took for the node, and one ``cuGraphExecKernelNodeSetParams`` (a
        refusal changes nothing: the driver keeps the parameters it had, and the
        next update writes every slot).  A pointer slot is checked
        (``_check_pointers``) only when it differs from what the node holds: those
        were checked when they were set, as a replay does not check them again.
        False, nothing done,
        where the parameters must be built again (``update_nodes``): a node that is
        not a kernel node, ``local`` arguments (their slots become offsets), or a
        graph with graph-owned memory (addresses moved into the driver's)."""
        target = self._slot_targets.get(n)
        if target is None or target[0] is not k:
            target = self._slot_target(n, k)
            if target is None:
                return False
        # (refused below, the driver keeps its own copy of the old parameters: what ``kept`` holds
        # then is only what the next update compares with)
        _, kept, ref, handle, pointers, few, plan = target
        if few is not None:                     # a few slots: each that changed copied
            checked = False
            for i in few:
                value = slots[i]
                if value != kept[i]:
                    if not checked and i in pointers:
                        self.queue._check_pointers(k, plan, slots)      # (before any pointer is taken)
                        checked = True
                    kept[i] = value
        else:
            for i in pointers:
                if slots[i] != kept[i]:
                    self.queue._check_pointers(k, plan, slots)
                    break
            ctypes.memmove(kept, slots, 8 * plan.total)
        dev = self.device
        if dev.lost is not None or _current.context is not dev._context:
            dev.activate()
        rc = self._set_kernel_params(self.exec, handle, ref)
        if rc:
            raise self._refused(rc, f"updating the graph node of kernel '{k.name}'")
        return True

    def _slot_target(self, n, k):
        """(``k``, the slots the driver's parameters of node ``n`` point into, those
        parameters as the update call takes them, the node's handle, the pointer
        slots' indexes, the indexes of the slots compared and copied one by one
        (``None``: all copied by ``memmove``), ``k``'s launch plan); ``None`` where
        a slot update cannot do (see ``update_slots``)."""
        built = self.built.get(n)
        if built is None or built.params is None or self._builder.paired:
            return None
        plan = self.queue._plan(k)
        if plan.local:
            return None
        params, (kept, _, _) = built.params
        # a few slots are compared and copied one by one (a fifth of the cost of ``ctypes.memmove``'s
        # argument conversion); more by ``memmove`` (``few`` None)
        few = range(plan.total) if plan.total <= _FEW_SLOTS else None
        target = self._slot_targets[n] = (k, kept, ctypes.byref(params), built.handle, frozenset(plan.pointers),
                                          few, plan)
        return target

    def _rebuild(self, merged: dict) -> None:
        builder = _Builder(self, self._entries(merged))
        try:
            exec_ = self._instantiate(builder.graph)
        except exception:
            driver.query("cuGraphDestroy", builder.graph)
            raise
        self._release_exec()
        self.graph, self.built, self._builder, self.exec = builder.graph, builder.built, builder, exec_
        self._slot_targets.clear()

    def update_whole(self, merged: dict) -> None:
        """``cuGraphExecUpdate_v2`` with a ``CUgraph`` of ``merged`` (every node's new
        command, the topology unchanged: checked by the caller first)."""
        self.device.activate()
        self._check(merged)
        builder = _Builder(self, self._entries(merged))
        info = driver.ExecUpdateResultInfo()
        rc = driver.query("cuGraphExecUpdate_v2", self.exec, builder.graph, ctypes.byref(info))
        if rc:
            driver.query("cuGraphDestroy", builder.graph)
            raise self._refused(rc, "whole-graph update",
                                driver.EXEC_UPDATE_RESULTS.get(info.result, f"update result {info.result}"))
        # the executable graph's nodes stay those of the graph it was made from: later
        # per-node updates name them (self.built), with the parameters the driver now has
        # (a slot update writes into those: the old ones hold the old range and arguments)
        for key, built in self.built.items():
            new = builder.built.get(key)
            built.params = new.params if new is not None and new.kind == built.kind else None
        self._slot_targets.clear()
        driver.query("cuGraphDestroy", builder.graph)

    def _release_exec(self) -> None:
        # (the whole context, not the streams it ran on: a queue may be gone with its stream)
        if self.launched:
            self.device.activate()
            driver.query("cuCtxSynchronize")
        driver.query("cuGraphExecDestroy", self.exec)
        driver.query("cuGraphDestroy", self.graph)

    def __del__(self):
        try:
            with self.device.borrowed() as live:
                if live:
                    if getattr(self, "exec", None) is not None:
                        self._release_exec()
                    for item in getattr(self, "_keep", ()):
                        if isinstance(item, _Pinned):
                            item.free()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
