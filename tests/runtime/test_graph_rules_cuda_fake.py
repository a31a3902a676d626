"""Issue 30's graph rules on the GPU runtime's paths, without a GPU: the stand-in
driver ``fake_cuda.py`` runs the GPU queue's own ``submit`` and the CUDA graph
an executable graph becomes (``cuda/graph.py``).  The same rules on the host
CPU and on a real GPU: ``test_graph_rules.py``."""
import re

import numpy as np
import pytest

from minisycl import runtime as sycl

import fake_cuda

KSL = """
kernel fixed(nd_item<1> it, int* p) [[reqd_work_group_size(4)]] {
  p[it.get_global_id(0)] = (int)it.get_local_range(0);
}
kernel inc(id<1> i, int* p) { p[i] = p[i] + 1; }
"""
N = 16

pytestmark = fake_cuda.ONLY_ON_CPU


_ints, _inc = fake_cuda.ints, fake_cuda.inc_kernel


def _fixed(n, _y, _z, p):
    a = _ints(p, n)
    for i in range(n):
        a[i] = 4


@pytest.fixture
def gpu(monkeypatch, tmp_path):
    fake, dev = fake_cuda.install(monkeypatch)
    fake.kernels.update({"fixed": (4, _fixed), "inc": (4, _inc)})
    (tmp_path / "k.ksl").write_text(KSL)
    prog = sycl.build_program([str(tmp_path / "k.ksl")])
    return fake, dev, prog


def shared(q, n=N):
    a = sycl.malloc_shared(n, np.int32, q)
    np.asarray(a)[:] = 0
    return a


def test_required_work_group_size_in_a_cuda_graph(gpu):
    fake, dev, prog = gpu
    q = sycl.queue(dev)
    a = shared(q)
    k = prog.kernel("fixed")
    g = sycl.command_graph(q)
    with pytest.raises(sycl.exception, match="required work-group size") as err:
        g.add(lambda h: h.parallel_for(k, sycl.nd_range(N, 8), a))
    assert err.value.code() == sycl.errc.nd_range and g.get_nodes() == []
    with g.recording(q):
        with pytest.raises(sycl.exception, match="required work-group size"):
            q.parallel_for(k, sycl.nd_range(N, 2), a)
    assert g.get_nodes() == []
    n = g.add(lambda h: h.parallel_for(k, sycl.nd_range(N, 4), a))
    ex = g.finalize(updatable=True)
    assert ex._device_graph is not None               # one CUDA graph
    with pytest.raises(sycl.exception, match="required work-group size"):
        n.update_nd_range(sycl.nd_range(2 * N, 8))
    ex.update(n)
    q.ext_oneapi_graph(ex).wait()
    assert [block for name, _, block, _ in fake.launched if name == "fixed"] == [(4, 1, 1)]
    assert np.asarray(a).tolist() == [4] * N


def test_order_of_depends_on_on_a_gpu_queue(gpu):
    """The GPU queue's own ``submit``: transitive recording decided when the group
    ends, with the same refusals whatever the order of its calls."""
    fake, dev, prog = gpu
    q1, q2 = sycl.queue(dev), sycl.queue(dev)
    g = sycl.command_graph(q1)
    owning = sycl.command_graph(q1)
    owning.add(lambda h: h.async_malloc(16))
    owning_ex = owning.finalize()
    with g.recording(q1):
        e = q1.submit(lambda h: h.host_task(lambda: None))
        for cgf in (lambda h: (h.async_malloc(16, "host"), h.depends_on(e)),
                    lambda h: (h.ext_oneapi_graph(owning_ex), h.depends_on(e))):
            with pytest.raises(sycl.exception) as err:
                q2.submit(cgf)
            assert err.value.code() == sycl.errc.invalid
            assert q2.ext_oneapi_get_state() == sycl.queue_state.executing and len(g.get_nodes()) == 1
        q2.submit(lambda h: (h.async_malloc(16), h.depends_on(e)))
        assert q2.ext_oneapi_get_state() == sycl.queue_state.recording
        assert g.get_nodes()[-1].get_type() == sycl.node_type.async_malloc
        assert g.get_nodes()[-1].get_predecessors() == [g.get_nodes()[0]]
    g.end_recording()                               # (q2 records until its recording ends too)
    # an eager async_malloc on the GPU is the device's own memory, freed by async_free
    p = sycl.async_malloc(q2, N, "device", np.int32)
    assert p.ptr in fake.buffers
    sycl.async_free(q2, p)
    q2.wait()
    assert p.freed


def test_verbose_print_graph_of_gpu_copies(gpu, tmp_path):
    fake, dev, prog = gpu
    q = sycl.queue(dev)
    a, b = shared(q), shared(q)
    g = sycl.command_graph(q)
    g.add(lambda h: h.memcpy(b, a, 12))
    g.add(lambda h: h.memset(a, 3, 8))
    g.add(lambda h: h.fill(b, np.int32(9), 6))
    g.print_graph(str(tmp_path / "g.dot"), verbose=True)
    text = (tmp_path / "g.dot").read_text()
    pa, pb = f"{a.ptr:#x}", f"{b.ptr:#x}"
    assert re.search(rf"Src: {pa}.*Dst: {pb}.*Length: 12", text)
    assert re.search(rf"Dst: {pa}.*Value: 3.*Length: 8", text)
    assert re.search(rf"Dst: {pb}.*Pattern: 09000000.*Count: 6", text)
