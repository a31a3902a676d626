"""Command graphs as CUDA graphs built node by node, on the real GPU (issue 20
point 6); ``tests/runtime/test_cuda_graph_fake.py`` checks the same driver calls
without a GPU."""
import numpy as np
import pytest

from minisycl import runtime as sycl

KSL = """
kernel inc(id<1> i, int* p) { p[i] = p[i] + 1; }
kernel dbl(id<1> i, int* p) { p[i] = p[i] * 2; }
kernel add(id<1> i, int* p, int v) { p[i] = p[i] + v; }
"""


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("gpu_graphs")
    (d / "g.ksl").write_text(KSL)
    return sycl.build_program([str(d / "g.ksl")])


def shared(q, n, values=0):
    a = sycl.malloc_shared(n, np.int32, q)
    np.asarray(a)[:] = values
    return a


def test_every_node_kind_and_edges(gpu, prog):
    q = sycl.queue(gpu, in_order=True)
    n = 4096
    d = sycl.malloc_device(n, np.int32, q)
    s = shared(q, n)
    h = sycl.malloc_host(n, np.int32, q)
    host = np.arange(n, dtype=np.int32)
    back = np.zeros(n, np.int32)
    seen = []
    g = sycl.command_graph(q)
    a = g.add(lambda cgh: cgh.memcpy(d, host, host.nbytes))
    b = g.add(lambda cgh: cgh.parallel_for(prog.kernel("inc"), n, d), depends_on=[a])
    c = g.add(lambda cgh: cgh.memcpy(s, d, host.nbytes), depends_on=[b])
    e = g.add(depends_on=[c])
    f = g.add(lambda cgh: cgh.host_task(lambda: seen.append(int(np.asarray(s)[5]))), depends_on=[e])
    m = g.add(lambda cgh: cgh.memset(d, 0, 8), depends_on=[f])
    w = g.add(lambda cgh: cgh.fill(h, np.int32(7), n), depends_on=[f])
    g.add(lambda cgh: cgh.memcpy(back, d, host.nbytes), depends_on=[m, w])
    ex = g.finalize()
    assert ex._device_graph.node_kinds() == {"memcpy": 3, "host": 4, "kernel": 1, "empty": 1, "memset": 1}
    for _ in range(2):
        q.ext_oneapi_graph(ex).wait()
    assert seen == [6, 6]
    np.testing.assert_array_equal(back, np.r_[0, 0, host[2:] + 1])
    assert (np.asarray(h) == 7).all()


def test_graph_owned_memory_through_allocation_nodes(gpu, prog):
    q = sycl.queue(gpu, in_order=True)
    n = 1000
    out = shared(q, n)
    g = sycl.command_graph(q)
    g.begin_recording(q)
    tmp = sycl.async_malloc(q, n * 4, "device", np.int32)
    q.memset(tmp, 0, n * 4)
    q.parallel_for(prog.kernel("inc"), n, tmp)
    q.parallel_for(prog.kernel("inc"), n, tmp)
    q.memcpy(out, tmp, n * 4)
    sycl.async_free(q, tmp)
    g.end_recording(q)
    ex = g.finalize()
    kinds = ex._device_graph.node_kinds()
    assert kinds["mem_alloc"] == 1 and kinds["mem_free"] == 1
    for _ in range(3):
        q.ext_oneapi_graph(ex).wait()
        assert (np.asarray(out) == 2).all()


def test_kernel_node_update_changes_results(gpu, prog):
    q = sycl.queue(gpu, in_order=True)
    n = 512
    p1, p2 = shared(q, n), shared(q, n)
    g = sycl.command_graph(q)
    dp = sycl.dynamic_parameter(g, p1)
    node = g.add(lambda h: h.parallel_for(prog.kernel("inc"), n, dp))
    ex = g.finalize(updatable=True)
    q.ext_oneapi_graph(ex).wait()
    dp.update(p2)
    ex.update(node)
    q.ext_oneapi_graph(ex).wait()
    assert (np.asarray(p1) == 1).all() and (np.asarray(p2) == 1).all()
    node.update_range(sycl.range(n // 2))
    ex.update(node)
    q.ext_oneapi_graph(ex).wait()
    assert (np.asarray(p2)[:n // 2] == 2).all() and (np.asarray(p2)[n // 2:] == 1).all()


def _chain(prog, q, p, second="dbl"):
    g = sycl.command_graph(q)
    a = g.add(lambda h: h.parallel_for(prog.kernel("inc"), 256, p))
    g.add(lambda h: h.parallel_for(prog.kernel(second), 256, p), depends_on=[a])
    return g


def test_whole_graph_update_changes_results(gpu, prog):
    q = sycl.queue(gpu, in_order=True)
    p, other = shared(q, 256), shared(q, 256, 5)
    ex = _chain(prog, q, p).finalize(updatable=True)
    ex.update(_chain(prog, q, other))
    q.ext_oneapi_graph(ex).wait()
    assert (np.asarray(p) == 0).all() and (np.asarray(other) == 12).all()


def test_refused_update_leaves_the_graph_unchanged(gpu, prog):
    q = sycl.queue(gpu, in_order=True)
    p, other = shared(q, 256), shared(q, 256, 5)
    ex = _chain(prog, q, p).finalize(updatable=True)
    with pytest.raises(sycl.exception, match="mismatched kernel") as info:
        ex.update(_chain(prog, q, other, second="inc"))         # the spec's rule, checked before the driver
    assert info.value.code() == sycl.errc.invalid
    # a whole-graph update the driver itself refuses: a kernel node whose range became empty
    g = sycl.command_graph(q)
    a = g.add(lambda h: h.parallel_for(prog.kernel("inc"), 0, other))
    g.add(lambda h: h.parallel_for(prog.kernel("dbl"), 256, other), depends_on=[a])
    with pytest.raises(sycl.exception, match="CUDA driver refused") as info:
        ex.update(g)
    assert info.value.code() == sycl.errc.invalid
    q.ext_oneapi_graph(ex).wait()
    assert (np.asarray(p) == 2).all() and (np.asarray(other) == 5).all()


def test_host_task_node_ordering(gpu, prog):
    q = sycl.queue(gpu, in_order=True)
    n = 1 << 20
    p = shared(q, n)
    seen = []

    def look_and_write():
        arr = np.asarray(p)
        seen.append(int(arr[n - 1]))
        arr[:] = 10
    g = sycl.command_graph(q)
    a = g.add(lambda h: h.parallel_for(prog.kernel("inc"), n, p))
    b = g.add(lambda h: h.host_task(look_and_write), depends_on=[a])
    g.add(lambda h: h.parallel_for(prog.kernel("dbl"), n, p), depends_on=[b])
    ex = g.finalize()
    q.ext_oneapi_graph(ex).wait()
    assert seen == [1] and (np.asarray(p) == 20).all()
