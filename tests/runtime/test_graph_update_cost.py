"""Updating one node of an executable graph costs that node, not the graph (issue 28,
point 1): the next replay looks at the memory of the updated node only (every node's
after a free), a native plan entry is repointed in place, and on a GPU the driver's
kernel-node update builds one node's parameters.  The refusals stay: a replay whose
updated node uses freed memory is refused although nothing was freed since the
graph's last full check."""
import numpy as np
import pytest

from minisycl import runtime as sycl
from minisycl.runtime import commands

KSL = "kernel step(id<1> i, int* p, int v) { p[i] = p[i] + v; }\nkernel put(id<1> i, int* p, int* q) { q[i] = p[i]; }\n"


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    path = tmp_path_factory.mktemp("k") / "k.ksl"
    path.write_text(KSL)
    return sycl.build_program([str(path)])


def _chain(prog, q, p, nodes, value):
    g = sycl.command_graph(q)
    dyn = sycl.dynamic_parameter(g, value)
    k = prog.kernel("step")
    first = prev = g.add(lambda h: h.parallel_for(k, 4, p, dyn))
    for _ in range(nodes - 1):
        prev = g.add(lambda h: h.parallel_for(k, 4, p, 1), depends_on=[prev])
    return dyn, first, g.finalize(updatable=True)


def test_update_of_one_node_checks_no_other_nodes_memory(prog, monkeypatch):
    q = sycl.queue(in_order=True)
    p = sycl.malloc_shared(4, np.int32, q)
    np.asarray(p)[:] = 0
    dyn, node, ex = _chain(prog, q, p, 50, 1)
    q.ext_oneapi_graph(ex).wait()
    looked = []
    original = commands.KernelCommand.memory

    def counting(cmd):
        looked.append(cmd)
        return original.fget(cmd)
    monkeypatch.setattr(commands.KernelCommand, "memory", property(counting))
    for v in (2, 3):
        dyn.update(v)
        ex.update(node)
        q.ext_oneapi_graph(ex).wait()
    assert len(looked) == 0                       # packing the updated node checked its memory; not 50 nodes
    assert list(np.asarray(p)) == [1 + 49 + 2 + 49 + 3 + 49] * 4
    looked.clear()
    other = sycl.malloc_shared(4, np.int32, q)
    sycl.free(other, q)                           # a free: the next replay looks at every node again
    q.ext_oneapi_graph(ex).wait()
    assert len(looked) == 50
    sycl.free(p, q)


def test_updated_node_using_freed_memory_is_refused(prog):
    q = sycl.queue(in_order=True)
    p, src = sycl.malloc_shared(4, np.int32, q), sycl.malloc_shared(4, np.int32, q)
    g = sycl.command_graph(q)
    dyn = sycl.dynamic_parameter(g, p)
    node = g.add(lambda h: h.parallel_for(prog.kernel("put"), 4, dyn, p))
    ex = g.finalize(updatable=True)
    q.ext_oneapi_graph(ex).wait()
    dyn.update(src)
    ex.update(node)
    address = src.ptr
    sycl.free(src, q)                             # freed after the update, before the replay
    with pytest.raises(sycl.exception) as info:
        q.ext_oneapi_graph(ex).wait()
    assert info.value.code() == sycl.errc.invalid and "node" in str(info.value)
    with pytest.raises(sycl.exception):           # refused again, not forgotten
        q.ext_oneapi_graph(ex).wait()
    with pytest.raises(sycl.exception) as info:   # an update to a freed address: refused at once
        dyn.update(address)
    assert info.value.code() == sycl.errc.invalid
    dyn.update(p)
    ex.update(node)
    q.ext_oneapi_graph(ex).wait()


def test_in_place_update_and_a_new_range(prog):
    q = sycl.queue(in_order=True)
    p = sycl.malloc_shared(4, np.int32, q)
    np.asarray(p)[:] = 0
    dyn, node, ex = _chain(prog, q, p, 3, 5)
    q.ext_oneapi_graph(ex).wait()
    assert list(np.asarray(p)) == [7] * 4
    node.update_range(sycl.range(2))
    dyn.update(10)
    ex.update(node)
    q.ext_oneapi_graph(ex).wait()
    assert list(np.asarray(p)) == [19, 19, 9, 9]


def test_direct_graph_submission_keeps_its_checks_and_events(prog):
    q = sycl.queue(in_order=True)
    p = sycl.malloc_shared(4, np.int32, q)
    _, _, ex = _chain(prog, q, p, 2, 1)
    with pytest.raises(sycl.exception) as info:
        q.ext_oneapi_graph(object()).wait()
    assert info.value.code() == sycl.errc.invalid
    other = sycl.queue(in_order=True, context=sycl.context())
    with pytest.raises(sycl.exception) as info:
        other.ext_oneapi_graph(ex)
    assert info.value.code() == sycl.errc.invalid and "context" in str(info.value)
    e = q.ext_oneapi_graph(ex)
    e.wait()
    assert e.status == "complete"
    profiled = sycl.queue(in_order=True, enable_profiling=True, context=q.context)
    with pytest.raises(sycl.exception) as info:
        profiled.ext_oneapi_graph(ex).get_profiling_info("command_start")
    assert "enable_profiling" in str(info.value)
    _, _, timed = _chain(prog, q, p, 2, 1)
    timed = timed.graph.finalize(enable_profiling=True)
    e = profiled.ext_oneapi_graph(timed)
    assert e.get_profiling_info("command_start") <= e.get_profiling_info("command_end")
