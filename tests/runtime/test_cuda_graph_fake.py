"""The GPU runtime's driver calls without a GPU (issue 20, points 6 and 9): a
Python stand-in for libcuda (``fake_cuda.py``) runs copies, fills, host nodes
and, through Python versions of the kernels, launches; so the CUDA graphs
built node by node and the launch fast path are checked on any machine.
The same programs run on the real GPU in ``tests/gpu/test_gpu_graphs.py``."""
import ctypes

import numpy as np
import pytest

from minisycl import runtime as sycl

import fake_cuda

KSL = """
kernel inc(id<1> i, int* p) { p[i] = p[i] + 1; }
kernel dbl(id<1> i, int* p) { p[i] = p[i] * 2; }
kernel add(id<1> i, int* p, int v) { p[i] = p[i] + v; }
kernel nop(int* p) { }
"""

pytestmark = fake_cuda.ONLY_ON_CPU


_ints, _inc = fake_cuda.ints, fake_cuda.inc_kernel


def _dbl(n, _y, _z, p):
    a = _ints(p, n)
    for i in range(n):
        a[i] *= 2


def _add(n, _y, _z, p, v):
    a = _ints(p, n)
    for i in range(n):
        a[i] += ctypes.c_int32(v & 0xFFFFFFFF).value


@pytest.fixture
def gpu(monkeypatch, tmp_path):
    fake, dev = fake_cuda.install(monkeypatch)
    fake.kernels.update({"inc": (4, _inc), "dbl": (4, _dbl), "add": (5, _add), "nop": (1, lambda p: None)})
    (tmp_path / "k.ksl").write_text(KSL)
    prog = sycl.build_program([str(tmp_path / "k.ksl")])
    return fake, dev, prog


def shared(q, n, values=0):
    a = sycl.malloc_shared(n, np.int32, q)
    np.asarray(a)[:] = values
    return a


# -- point 6: graphs built node by node ---------------------------------------------------

def test_every_node_kind_with_edges(gpu):
    fake, dev, prog = gpu
    q = sycl.queue(dev, in_order=True)
    n = 16
    d = sycl.malloc_device(n, np.int32, q)
    s = shared(q, n)
    h = sycl.malloc_host(n, np.int32, q)
    host = np.arange(n, dtype=np.int32)
    back = np.zeros(n, np.int32)
    seen = []
    g = sycl.command_graph(q)
    a = g.add(lambda cgh: cgh.memcpy(d, host, host.nbytes))                     # pageable -> device (staged)
    b = g.add(lambda cgh: cgh.parallel_for(prog.kernel("inc"), n, d), depends_on=[a])
    c = g.add(lambda cgh: cgh.memcpy(s, d, host.nbytes), depends_on=[b])        # device -> managed
    e = g.add(depends_on=[c])                                                   # empty
    f = g.add(lambda cgh: cgh.host_task(lambda: seen.append(list(np.asarray(s)[:3]))), depends_on=[e])
    m = g.add(lambda cgh: cgh.memset(d, 0, 8), depends_on=[f])                  # bytes 0..7 of d
    w = g.add(lambda cgh: cgh.fill(h, np.int32(7), n), depends_on=[f])          # pinned host: a host node
    g.add(lambda cgh: cgh.memcpy(back, d, host.nbytes), depends_on=[m, w])      # device -> pageable (staged)
    ex = g.finalize()
    kinds = ex._device_graph.node_kinds()
    assert kinds == {"memcpy": 3, "host": 4, "kernel": 1, "empty": 1, "memset": 1}
    # edges: every node's CUDA dependencies are the last CUDA nodes of its predecessors
    nodes = fake.graphs[ex._device_graph.graph.value]
    by_handle = {x["h"]: x for x in nodes}
    kernel = next(x for x in nodes if x["kind"] == 0)
    assert [by_handle[p]["kind"] for p in kernel["deps"]] == [1]                # after the staged copy's memcpy
    assert len(nodes[-1]["deps"]) == 1 and by_handle[nodes[-1]["deps"][0]]["kind"] == 1
    for _ in range(2):
        q.ext_oneapi_graph(ex).wait()
    assert seen == [[1, 2, 3], [1, 2, 3]]
    np.testing.assert_array_equal(back, np.r_[0, 0, host[2:] + 1])
    assert (np.asarray(h) == 7).all()
    assert fake.calls["cuGraphLaunch"] == 2 and fake.calls["cuGraphInstantiateWithFlags"] == 1


def test_fill_patterns_of_8_bytes_and_2_bytes(gpu):
    fake, dev, prog = gpu
    q = sycl.queue(dev)
    d8 = sycl.malloc_shared(4, np.float64, q)
    d2 = sycl.malloc_shared(6, np.int16, q)
    g = sycl.command_graph(q)
    g.add(lambda h: h.fill(d8, 2.5, 4))
    g.add(lambda h: h.fill(d2, np.int16(-3), 5))
    ex = g.finalize()
    assert ex._device_graph.node_kinds() == {"memcpy": 1, "memset": 1}
    q.ext_oneapi_graph(ex).wait()
    assert list(np.asarray(d8)) == [2.5] * 4 and list(np.asarray(d2)) == [-3] * 5 + [0]


def test_graph_owned_memory_through_allocation_nodes(gpu):
    fake, dev, prog = gpu
    q = sycl.queue(dev, in_order=True)
    n = 8
    out = shared(q, n)
    g = sycl.command_graph(q)
    g.begin_recording(q)
    tmp = sycl.async_malloc(q, n * 4, "device", np.int32)
    q.memset(tmp, 0, n * 4)
    q.parallel_for(prog.kernel("inc"), n, tmp)
    q.memcpy(out, tmp, n * 4)
    sycl.async_free(q, tmp)
    g.end_recording(q)
    ex = g.finalize()
    assert ex._device_graph.node_kinds() == {"mem_alloc": 1, "memset": 1, "kernel": 1, "memcpy": 1, "mem_free": 1}
    nodes = fake.graphs[ex._device_graph.graph.value]
    dptr = nodes[0]["data"][0]
    block = tmp.resolve().ptr
    assert dptr != block
    assert nodes[1]["data"][0] == dptr                       # the memset's address moved to the driver's
    assert nodes[2]["data"]["values"][3] == dptr             # the kernel's pointer argument too
    assert nodes[3]["data"][1] == dptr and nodes[4]["data"] == dptr
    for _ in range(3):                                       # each replay allocates and frees again
        q.ext_oneapi_graph(ex).wait()
        assert list(np.asarray(out)) == [1] * n


def test_unfreed_graph_memory_keeps_its_block_across_replays(gpu):
    fake, dev, prog = gpu
    q = sycl.queue(dev, in_order=True)
    n = 4
    out = shared(q, n)
    g = sycl.command_graph(q)
    g.begin_recording(q)
    acc = sycl.async_malloc_from_pool(q, n, sycl.memory_pool(q.context, q.device, "device", zero_init=True),
                                      np.int32)
    q.parallel_for(prog.kernel("inc"), n, acc)
    q.memcpy(out, acc, n * 4)
    g.end_recording(q)
    ex = g.finalize()
    assert "mem_alloc" not in ex._device_graph.node_kinds()
    for i in range(1, 4):
        q.ext_oneapi_graph(ex).wait()
        assert list(np.asarray(out)) == [i] * n              # zeroed at finalize only: it accumulates


def _updatable_inc(dev, prog, n):
    """An updatable graph of one ``inc`` node over ``n`` elements, its pointer a
    dynamic parameter set to ``p1``: (queue, p1, p2, the parameter, the node, the
    executable graph)."""
    q = sycl.queue(dev, in_order=True)
    p1, p2 = shared(q, n), shared(q, n)
    g = sycl.command_graph(q)
    dp = sycl.dynamic_parameter(g, p1)
    node = g.add(lambda h: h.parallel_for(prog.kernel("inc"), n, dp))
    return q, p1, p2, dp, node, g.finalize(updatable=True)


def test_kernel_node_update_and_dynamic_parameter(gpu):
    fake, dev, prog = gpu
    n = 4
    q, p1, p2, dp, node, ex = _updatable_inc(dev, prog, n)
    q.ext_oneapi_graph(ex).wait()
    dp.update(p2)
    ex.update(node)
    q.ext_oneapi_graph(ex).wait()
    assert list(np.asarray(p1)) == [1] * n and list(np.asarray(p2)) == [1] * n
    assert fake.calls["cuGraphExecKernelNodeSetParams_v2"] == 1
    assert fake.calls["cuGraphInstantiateWithFlags"] == 1     # updated in place, not rebuilt
    node.update_range(sycl.range(2))
    ex.update(node)
    q.ext_oneapi_graph(ex).wait()
    assert list(np.asarray(p2)) == [2, 2, 1, 1]


def test_refused_node_update_leaves_the_graph_unchanged(gpu):
    fake, dev, prog = gpu
    n = 4
    q, p1, p2, dp, node, ex = _updatable_inc(dev, prog, n)
    dp.update(p2)
    fake.refuse["cuGraphExecKernelNodeSetParams_v2"] = 1
    with pytest.raises(sycl.exception) as info:
        ex.update(node)
    assert info.value.code() == sycl.errc.invalid
    assert "CUDA_ERROR_INVALID_VALUE" in str(info.value) and "unchanged" in str(info.value)
    del fake.refuse["cuGraphExecKernelNodeSetParams_v2"]
    q.ext_oneapi_graph(ex).wait()
    assert list(np.asarray(p1)) == [1] * n and list(np.asarray(p2)) == [0] * n


def test_slot_update_checks_a_changed_pointer_and_only_that(gpu):
    """A dynamic parameter's slot update (``CudaGraph.update_slots``) checks a
    pointer argument that changed, as a launch does (host USM of another device is
    refused, the graph unchanged); one that did not change was checked when set
    and is not looked at again."""
    fake, dev, prog = gpu
    q = sycl.queue(dev, in_order=True)
    p, k = shared(q, 4), prog.kernel("add")
    g = sycl.command_graph(q)
    dp, dv = sycl.dynamic_parameter(g, p), sycl.dynamic_parameter(g, 1)
    node = g.add(lambda h: h.parallel_for(k, 4, dp, dv))
    ex = g.finalize(updatable=True)
    cpu_mem = sycl.malloc_shared(4, np.int32, sycl.queue())
    dp.update(cpu_mem)
    with pytest.raises(sycl.exception, match="another device"):
        ex.update(node)
    assert fake.calls["cuGraphExecKernelNodeSetParams_v2"] == 0
    dp.update(p)
    checked, own = [], ex._device_graph.queue           # (the graph's own queue checks its launches)
    real = own._check_pointers
    own._check_pointers = lambda *a: (checked.append(a), real(*a))
    for v in (2, 3):                          # the pointer unchanged: no check
        dv.update(v)
        ex.update(node)
    assert checked == [] and fake.calls["cuGraphExecKernelNodeSetParams_v2"] == 2
    q.ext_oneapi_graph(ex).wait()
    assert list(np.asarray(p)) == [3] * 4
    other = shared(q, 4)
    dp.update(other)                          # a new pointer: checked
    ex.update(node)
    assert len(checked) == 1
    q.ext_oneapi_graph(ex).wait()
    assert list(np.asarray(other)) == [3] * 4 and list(np.asarray(p)) == [3] * 4


def _chain(prog, q, p, k2="dbl"):
    g = sycl.command_graph(q)
    a = g.add(lambda h: h.parallel_for(prog.kernel("inc"), 4, p))
    g.add(lambda h: h.parallel_for(prog.kernel(k2), 4, p), depends_on=[a])
    return g


def test_whole_graph_update(gpu):
    fake, dev, prog = gpu
    q = sycl.queue(dev, in_order=True)
    p, other = shared(q, 4), shared(q, 4, 5)
    ex = _chain(prog, q, p).finalize(updatable=True)
    ex.update(_chain(prog, q, other))
    q.ext_oneapi_graph(ex).wait()
    assert list(np.asarray(p)) == [0] * 4 and list(np.asarray(other)) == [12] * 4
    assert fake.calls["cuGraphExecUpdate_v2"] == 1


def test_refused_whole_graph_update_leaves_the_graph_unchanged(gpu):
    fake, dev, prog = gpu
    q = sycl.queue(dev, in_order=True)
    p, other = shared(q, 4), shared(q, 4, 5)
    ex = _chain(prog, q, p).finalize(updatable=True)
    fake.refuse["cuGraphExecUpdate_v2"] = 910
    with pytest.raises(sycl.exception) as info:
        ex.update(_chain(prog, q, other))
    assert info.value.code() == sycl.errc.invalid and "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE" in str(info.value)
    del fake.refuse["cuGraphExecUpdate_v2"]
    q.ext_oneapi_graph(ex).wait()
    assert list(np.asarray(p)) == [2] * 4 and list(np.asarray(other)) == [5] * 4
    # the spec's rules are checked before the driver is asked
    calls = fake.calls["cuGraphExecUpdate_v2"]
    with pytest.raises(sycl.exception, match="mismatched kernel"):
        ex.update(_chain(prog, q, other, k2="inc"))
    assert fake.calls["cuGraphExecUpdate_v2"] == calls


def test_host_task_node_order_and_its_exception(gpu):
    fake, dev, prog = gpu
    q = sycl.queue(dev, in_order=True)
    p = shared(q, 4)
    seen = []
    g = sycl.command_graph(q)
    a = g.add(lambda h: h.parallel_for(prog.kernel("inc"), 4, p))
    b = g.add(lambda h: h.host_task(lambda: seen.append(int(np.asarray(p)[0]))), depends_on=[a])
    g.add(lambda h: h.parallel_for(prog.kernel("dbl"), 4, p), depends_on=[b])
    ex = g.finalize()
    q.ext_oneapi_graph(ex).wait()
    assert seen == [1] and list(np.asarray(p)) == [2] * 4

    def boom():
        raise sycl.exception(sycl.errc.runtime, "host task failed")
    g2 = sycl.command_graph(q)
    g2.add(lambda h: h.host_task(boom))
    ex2 = g2.finalize()
    q.ext_oneapi_graph(ex2)
    with pytest.raises(sycl.exception, match="host task failed"):
        q.wait()
    q.wait()                                              # reported once


def test_subgraph_runs_command_by_command(gpu):
    fake, dev, prog = gpu
    q = sycl.queue(dev, in_order=True)
    p = shared(q, 4)
    inner = _chain(prog, q, p).finalize()
    g = sycl.command_graph(q)
    g.add(lambda h: h.ext_oneapi_graph(inner))
    ex = g.finalize()
    assert ex._device_graph is None
    q.ext_oneapi_graph(ex).wait()
    assert list(np.asarray(p)) == [2] * 4


# -- point 9: the launch fast path and lazy events ----------------------------------------

def test_fast_launch_makes_one_driver_call_and_no_event(gpu):
    fake, dev, prog = gpu
    q = sycl.queue(dev, in_order=True)
    p = shared(q, 4)
    k = prog.kernel("add")
    q.parallel_for(k, 4, p, 1).wait()
    fake.calls.clear()
    for v in range(10):
        q.parallel_for(k, 4, p, v)
    assert dict(fake.calls) == {"cuLaunchKernelEx": 10}
    e = q.parallel_for(k, 4, p, 100)
    e.wait()
    # one driver call waits (a query of the stream: interruptible, cuda/queue.py _await)
    assert fake.calls["cuStreamQuery"] == 1 and fake.calls["cuEventRecord"] == 0
    e.wait()                                              # known finished: no driver call
    assert fake.calls["cuStreamQuery"] == 1 and e.status == "complete"
    assert list(np.asarray(p)) == [1 + 45 + 100] * 4
    assert fake.launched[-1][1:3] == ((1, 1, 1), (256, 1, 1))


def test_fast_launch_keeps_the_checks(gpu):
    fake, dev, prog = gpu
    q = sycl.queue(dev, in_order=True)
    p = shared(q, 4)
    k = prog.kernel("add")
    with pytest.raises(sycl.exception, match="takes 2 arguments"):
        q.parallel_for(k, 4, p)
    with pytest.raises(sycl.exception, match="does not fit"):
        q.parallel_for(k, 4, p, 2 ** 40)
    with pytest.raises(sycl.exception, match="launch it with parallel_for"):
        q.single_task(prog.kernel("inc"), p)
    cpu_mem = sycl.malloc_shared(4, np.int32, sycl.queue())
    with pytest.raises(sycl.exception, match="another device"):
        q.parallel_for(k, 4, cpu_mem, 1)
    sycl.free(p, q)
    with pytest.raises(sycl.exception, match="freed"):
        q.parallel_for(k, 4, p, 1)
    assert fake.calls["cuLaunchKernelEx"] == 0
    q.parallel_for(k, 0, shared(q, 1), 1).wait()             # an empty range launches nothing
    assert fake.calls["cuLaunchKernelEx"] == 0


def test_older_event_and_cross_queue_dependency_record_an_event_then(gpu):
    fake, dev, prog = gpu
    q1, q2 = sycl.queue(dev), sycl.queue(dev)
    p = shared(q1, 4)
    e1 = q1.parallel_for(prog.kernel("inc"), 4, p)
    q1.parallel_for(prog.kernel("inc"), 4, p)
    assert fake.calls["cuEventRecord"] == 0
    q2.parallel_for(prog.kernel("dbl"), 4, p, depends_on=[e1]).wait()
    assert fake.calls["cuEventRecord"] == 1 and fake.calls["cuStreamWaitEvent"] == 1
    e1.wait()
    assert fake.calls["cuEventQuery"] == 1
    q1.wait()
    e1.wait()
    assert list(np.asarray(p)) == [4] * 4


def test_profiling_queue_records_start_and_end(gpu):
    fake, dev, prog = gpu
    q = sycl.queue(dev, enable_profiling=True)
    p = shared(q, 4)
    before = fake.calls["cuEventRecord"]
    e = q.parallel_for(prog.kernel("inc"), 4, p)
    assert fake.calls["cuEventRecord"] == before + 2
    assert e.get_profiling_info("command_start") <= e.get_profiling_info("command_end")


def test_repeated_launch_reuses_checked_slots_but_sees_frees(gpu, monkeypatch):
    fake, dev, prog = gpu
    from minisycl.runtime.cuda import queue as cuda_queue_mod
    q = sycl.queue(dev, in_order=True)
    p, other = shared(q, 4), shared(q, 4)
    k = prog.kernel("add")
    one = 1
    q.parallel_for(k, 4, p, one)
    packs = []
    real = cuda_queue_mod.pack_slots
    monkeypatch.setattr(cuda_queue_mod, "pack_slots", lambda *a, **kw: (packs.append(1), real(*a, **kw)))
    q.parallel_for(k, 4, p, one)
    assert packs == []                                   # the same objects: nothing packed again
    q.parallel_for(k, 4, other, one)
    assert packs == [1] and fake.launched[-1][3][3] == other.ptr
    with pytest.raises(sycl.exception, match="must be an integer"):
        q.parallel_for(k, 4, other, 1.0)                 # a value of another type is checked
    address = int(p.ptr)
    q.parallel_for(k, 4, address, one)
    sycl.free(p, q)
    with pytest.raises(sycl.exception, match="not inside a live USM allocation"):
        q.parallel_for(k, 4, address, one)               # an integer address is checked each time
    q.parallel_for(k, 4, other, one)
    sycl.free(other, q)
    with pytest.raises(sycl.exception, match="freed"):
        q.parallel_for(k, 4, other, one)


def test_a_launch_with_new_scalars_packs_only_those(gpu, monkeypatch):
    """A launch repeating the previous one's range and pointer objects with new
    scalar values checks and packs the scalars only (``cuda_queue._rescalar``):
    the results are the values given, a refused value is the command group's
    error and leaves nothing of itself for the next launch."""
    fake, dev, prog = gpu
    from minisycl.runtime.cuda import queue as cuda_queue_mod
    q = sycl.queue(dev, in_order=True)
    p = shared(q, 4)
    k = prog.kernel("add")
    q.parallel_for(k, 4, p, 1)
    packed = []
    real = cuda_queue_mod.pack_slots
    monkeypatch.setattr(cuda_queue_mod, "pack_slots",
                        lambda *a, **kw: (packed.append(kw.get("only")), real(*a, **kw)))
    for v in (1000, 20000, 300000):                     # (new int objects each time)
        q.parallel_for(k, 4, p, v + 1 - 1)
    assert packed == [[1], [1], [1]]
    with pytest.raises(sycl.exception, match="does not fit"):
        q.parallel_for(k, 4, p, 2 ** 40)
    q.parallel_for(k, 4, p, 5).wait()
    q.parallel_for(k, 4, p, 5).wait()                   # (the same objects again: nothing packed)
    assert (np.asarray(p) == 1 + 1000 + 20000 + 300000 + 5 + 5).all()
    assert [launch[3][4] for launch in fake.launched[-2:]] == [5, 5]


def test_kernel_node_update_builds_one_nodes_parameters(gpu, monkeypatch):
    """Updating one node of a long graph after a dynamic parameter's new value:
    no parameters built at all (the new slots are written into those the driver
    last took for the node), one driver call (issue 28, point 1)."""
    from minisycl.runtime.cuda import graph as cuda_graph
    fake, dev, prog = gpu
    q = sycl.queue(dev, in_order=True)
    p = shared(q, 4)
    g = sycl.command_graph(q)
    dp = sycl.dynamic_parameter(g, 1)
    node = prev = g.add(lambda h: h.parallel_for(prog.kernel("add"), 4, p, dp))
    for _ in range(30):
        prev = g.add(lambda h: h.parallel_for(prog.kernel("inc"), 4, p), depends_on=[prev])
    ex = g.finalize(updatable=True)
    built = []
    original = cuda_graph.CudaGraph.kernel_params
    monkeypatch.setattr(cuda_graph.CudaGraph, "kernel_params",
                        lambda self, cmd, live=None: built.append(cmd) or original(self, cmd, live))
    dp.update(5)
    ex.update(node)
    assert not built and fake.calls["cuGraphExecKernelNodeSetParams_v2"] == 1
    q.ext_oneapi_graph(ex).wait()
    assert list(np.asarray(p)) == [35] * 4


def test_successive_and_refused_slot_updates_run_the_latest_accepted_values(gpu):
    """Slot updates one after another, one of them refused by the driver: each
    replay runs the values of the last update the driver took."""
    fake, dev, prog = gpu
    n = 4
    q, p1, p2, dp, node, ex = _updatable_inc(dev, prog, n)
    p3 = shared(q, n)
    want = {id(p1): 0, id(p2): 0, id(p3): 0}
    for target, refused in ((p2, False), (p3, True), (p1, False), (p3, False), (p2, True)):
        dp.update(target)
        if refused:
            fake.refuse["cuGraphExecKernelNodeSetParams_v2"] = 1
            with pytest.raises(sycl.exception):
                ex.update(node)
            del fake.refuse["cuGraphExecKernelNodeSetParams_v2"]
        else:
            ex.update(node)
            current = target
        q.ext_oneapi_graph(ex).wait()
        want[id(current)] += 1
        assert [int(np.asarray(a)[0]) for a in (p1, p2, p3)] == [want[id(a)] for a in (p1, p2, p3)]


def test_refused_second_node_update_rolls_the_first_back(gpu, monkeypatch):
    fake, dev, prog = gpu
    q = sycl.queue(dev, in_order=True)
    p = shared(q, 4)
    g = sycl.command_graph(q)
    d1, d2 = sycl.dynamic_parameter(g, 1), sycl.dynamic_parameter(g, 10)
    n1 = g.add(lambda h: h.parallel_for(prog.kernel("add"), 4, p, d1))
    n2 = g.add(lambda h: h.parallel_for(prog.kernel("add"), 4, p, d2), depends_on=[n1])
    ex = g.finalize(updatable=True)
    setting = type(fake)._cuGraphExecKernelNodeSetParams_v2
    count = []

    def second_refused(self, exec_, handle, params):
        count.append(1)
        return 1 if len(count) == 2 else setting(self, exec_, handle, params)
    monkeypatch.setattr(type(fake), "_cuGraphExecKernelNodeSetParams_v2", second_refused)
    fake.__dict__.pop("cuGraphExecKernelNodeSetParams_v2", None)
    from minisycl.runtime.cuda import driver        # (its lookup of the function, made when the graph was)
    monkeypatch.delitem(driver._functions, "cuGraphExecKernelNodeSetParams_v2", raising=False)
    d1.update(100)
    d2.update(1000)
    with pytest.raises(sycl.exception) as info:
        ex.update([n1, n2])
    assert info.value.code() == sycl.errc.invalid and "unchanged" in str(info.value)
    assert len(count) == 3                      # n1 set, n2 refused, n1 set back to its old parameters
    q.ext_oneapi_graph(ex).wait()
    assert list(np.asarray(p)) == [11] * 4


def test_a_replay_is_one_graph_launch_on_the_stream(gpu):
    """A replay without dependencies on a queue that neither records nor profiles:
    one ``cuGraphLaunch`` and nothing else (no event recorded, no stream waited
    for); waiting for its event waits for the stream, and the work is done."""
    fake, dev, prog = gpu
    n = 4
    q, p1, p2, dp, node, ex = _updatable_inc(dev, prog, n)
    q.ext_oneapi_graph(ex).wait()
    before = dict(fake.calls)
    events = [q.ext_oneapi_graph(ex) for _ in range(3)]
    added = {name: count - before.get(name, 0) for name, count in fake.calls.items() if count != before.get(name, 0)}
    assert added == {"cuGraphLaunch": 3}
    events[-1].wait()
    assert list(np.asarray(p1)) == [4] * n
    with pytest.raises(sycl.exception) as info:
        events[0].get_profiling_info("command_start")
    assert info.value.code() == sycl.errc.invalid
