"""Issue 31's GPU-only failures, reproduced without a GPU: the stand-in driver
``fake_cuda.py`` in its lazy mode (streams run their work only when
synchronised, ``cuMemcpy`` lands on the legacy default stream, fresh memory
holds garbage), as the real driver behaves.  Each test failed before its fix;
the same programs run on every device in the tests it names."""
import numpy as np
import pytest

from minisycl import runtime as sycl

import fake_cuda

pytestmark = fake_cuda.ONLY_ON_CPU

KSL = """
device_global<float> ro [[host_access(read)]] = 1.5f;
device_global<int[4]> arr = {1, 2, 3, 4};
kernel fillv(id<1> i, int* x, int v) { x[i] = v; }
kernel dbl(id<1> i, int* x) { x[i] = x[i] * 2; }
"""
N = 4


def _fillv(n, _y, _z, x, v):
    a = fake_cuda.ints(x, n)
    for i in range(n):
        a[i] = v


def _dbl(n, _y, _z, x):
    a = fake_cuda.ints(x, n)
    for i in range(n):
        a[i] *= 2


@pytest.fixture
def gpu(monkeypatch, tmp_path):
    fake, dev = fake_cuda.install(monkeypatch, lazy=True)
    fake.kernels.update({"fillv": (5, _fillv), "dbl": (4, _dbl)})
    (tmp_path / "p.ksl").write_text(KSL)
    return fake, dev, sycl.build_program(str(tmp_path / "p.ksl"))


def ints(q, value=0):
    a = sycl.malloc_shared(N, np.int32, q)
    np.asarray(a)[:] = value
    return a


# -- (a) device_global initial values (test_device_global.py::test_errors, ...) --------------

def test_a_device_global_read_before_any_kernel_has_its_initial_value(gpu):
    """The initial value is written with ``cuMemcpy`` (the legacy stream); the
    read is on the queue's non-blocking stream: ``driver.copy_now`` lands it first."""
    _, dev, prog = gpu
    q = sycl.queue(dev, context=sycl.context(dev))
    v = np.zeros(1, np.float32)
    q.copy(prog.device_global("ro"), v).wait()
    assert v[0] == 1.5
    host = np.zeros(4, np.int32)
    q.copy(np.array([70, 80], np.int32), prog.device_global("arr"), 2, start_index=2).wait()
    q.copy(prog.device_global("arr"), host).wait()
    assert host.tolist() == [1, 2, 70, 80]          # the late initial value did not overwrite the copy


def test_the_stand_in_driver_lands_cuMemcpy_only_on_the_legacy_stream(gpu):
    """What the test above relies on: the stand-in's model of ``cuMemcpy``."""
    fake, dev, _ = gpu
    from minisycl.runtime.cuda import driver
    q = sycl.queue(dev)
    d = sycl.malloc_device(1, np.int32, q)
    word = np.array([7], np.int32)
    driver.call("cuMemcpy", d.ptr, word.ctypes.data, 4)
    out = np.zeros(1, np.int32)
    q.memcpy(out, d, 4).wait()
    assert out[0] != 7                              # the queue's stream does not wait for it
    driver.copy_now(d.ptr, word.ctypes.data, 4, "a test")
    q.memcpy(out, d, 4).wait()
    assert out[0] == 7


# -- (b) async_malloc memory is its block, whatever the block's class -----------------------
# (test_graph_rules.py::test_eager_async_malloc_is_ordinary_memory,
#  test_graph_spec.py::test_memory_pools_zero_init_and_required_size)

def test_async_malloc_memory_behaves_as_the_gpu_allocation_it_is(gpu):
    fake, dev, prog = gpu
    q = sycl.queue(dev)
    p = sycl.async_malloc(q, N, "shared", np.int32)
    q.parallel_for(prog.kernel("fillv"), N, p, 5).wait()
    assert np.asarray(p).tolist() == [5] * N and p[0] == 5      # the block's view (cuda_allocation.array)
    pool = sycl.memory_pool(q.context, q.device, "shared")
    box = []
    q.submit(lambda h: box.append(h.async_malloc_from_pool(N, pool, np.int32))).wait()
    np.asarray(box[0])[:] = 3
    assert box[0].kind == "shared" and list(box[0]) == [3] * N
    d = sycl.async_malloc(q, N, "device", np.int32)
    assert not d.host_accessible and d.__dlpack_device__() == (2, 0)    # kDLCUDA, as the block says
    with pytest.raises(sycl.exception, match="cannot be read or written by the host"):
        np.asarray(d)
    frees = fake.calls["cuMemFree_v2"]
    sycl.free(d, q)                                             # the driver gets its memory back
    assert fake.calls["cuMemFree_v2"] == frees + 1 and d.freed


def test_graph_owned_memory_is_not_released_by_free(gpu):
    fake, dev, _ = gpu
    q = sycl.queue(dev)
    g = sycl.command_graph(q)
    box = []
    g.add(lambda h: box.append(h.async_malloc(N, dtype=np.int32)))
    frees = fake.calls["cuMemFree_v2"]
    with pytest.raises(sycl.exception, match="graph-owned memory") as err:
        sycl.free(box[0], q)
    assert err.value.code() == sycl.errc.invalid and fake.calls["cuMemFree_v2"] == frees


# -- (d) a sub-graph runs on the stream of the queue that runs its parent -------------------
# (test_graph.py::test_scenarios_both_ways[explicit], test_remaining_scenario_variants,
#  test_graph_rules.py::test_owning_memory_is_judged_as_finalized)

@pytest.mark.parametrize("mode", ["explicit", "record"])
def test_a_sub_graph_between_two_kernels_keeps_its_place(gpu, mode):
    _, dev, prog = gpu
    q = sycl.queue(dev)
    a = ints(q, 1)
    sub = sycl.command_graph(q)
    sub.add(lambda h: h.parallel_for(prog.kernel("fillv"), N, a, 5))
    sub_exec = sub.finalize()
    main = sycl.command_graph(q)
    steps = [lambda h: h.parallel_for(prog.kernel("dbl"), N, a), lambda h: h.ext_oneapi_graph(sub_exec),
             lambda h: h.parallel_for(prog.kernel("dbl"), N, a)]
    if mode == "explicit":
        last = None
        for cgf in steps:
            last = main.add(cgf, depends_on=[last] if last is not None else [])
    else:
        rq = sycl.queue(dev, in_order=True, context=q.context)
        with main.recording(rq):
            for cgf in steps:
                rq.submit(cgf)
    q.ext_oneapi_graph(main.finalize()).wait()
    assert list(a) == [10] * N                      # 1 * 2, then 5, then 5 * 2
    nested = sycl.command_graph(q)                  # a sub-graph of a sub-graph, alone in its parent
    nested.add(lambda h: h.ext_oneapi_graph(sub_exec))
    outer = sycl.command_graph(q)
    outer.add(lambda h: h.ext_oneapi_graph(nested.finalize()))
    np.asarray(a)[:] = 0
    q.ext_oneapi_graph(outer.finalize()).wait()
    assert list(a) == [5] * N


# -- bad input: a launch beyond the GPU is errc::nd_range naming the limit -------------------

BIG = """
kernel cube(nd_item<3> it, int* x) { x[it.get_global_linear_id()] = 1; }
kernel one(int* x) { x[0] = 1; }
"""


def _one(x):
    fake_cuda.ints(x, 1)[0] = 1


@pytest.fixture
def big(monkeypatch, tmp_path):
    fake, dev = fake_cuda.install(monkeypatch, lazy=True)
    fake.kernels.update({"cube": (4, lambda *a: None), "one": (1, _one)})
    (tmp_path / "b.ksl").write_text(BIG)
    return fake, dev, sycl.build_program(str(tmp_path / "b.ksl"))


def test_a_work_group_beyond_an_axis_limit_is_nd_range_naming_it(big):
    """128 work-items along SYCL dimension 0 of a 3-D range is CUDA's z axis, whose
    limit is 64 (the CPU takes it: the total is within 1024)."""
    fake, dev, prog = big
    q = sycl.queue(dev)
    x = sycl.malloc_shared(128, np.int32, q)
    with pytest.raises(sycl.exception, match="limit of 64 along that axis") as err:
        q.parallel_for(prog.kernel("cube"), sycl.nd_range((128, 1, 1), (128, 1, 1)), x).wait()
    assert err.value.code() == sycl.errc.nd_range and "dimension 0 (CUDA axis z)" in str(err.value)
    q.parallel_for(prog.kernel("cube"), sycl.nd_range((64, 2, 1), (64, 2, 1)), x).wait()    # within: runs


@pytest.mark.parametrize("rc", [fake_cuda.OUT_OF_RESOURCES, fake_cuda.INVALID_VALUE])
def test_a_launch_the_driver_finds_beyond_the_gpu_is_nd_range_and_the_gpu_goes_on(big, rc):
    """Too many registers for the block (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) is not a
    lost context: the launch is refused naming the limits, and the next one runs."""
    fake, dev, prog = big
    q = sycl.queue(dev)
    x = sycl.malloc_shared(1, np.int32, q)
    x[0] = 0
    fake.refuse["cuLaunchKernelEx"] = rc
    with pytest.raises(sycl.exception) as err:
        q.single_task(prog.kernel("one"), x)
    assert err.value.code() == sycl.errc.nd_range
    assert "threads per block" in str(err.value) and "bytes of shared memory per block" in str(err.value)
    del fake.refuse["cuLaunchKernelEx"]
    q.single_task(prog.kernel("one"), x).wait()
    assert x[0] == 1 and not dev.lost


# -- (c) fresh GPU memory is not zero (test_usm_checks.py::test_a_sub_graph_whose_memory_...) --

def test_fresh_gpu_memory_is_not_zero_and_a_freed_sub_graph_stops_its_parent(gpu):
    """The H200 failure was the test's: it read memory it never wrote, which a
    GPU does not zero (stale managed memory of an earlier allocation).  Written
    first, the check itself holds on the GPU path: nothing of the parent runs."""
    fake, dev, prog = gpu
    q = sycl.queue(dev)
    x, victim = sycl.malloc_shared(N, np.int32, q), sycl.malloc_shared(N, np.int32, q)
    assert list(x) != [0] * N                       # the stand-in's fresh memory: garbage, as the driver's
    np.asarray(x)[:] = 0
    inner = sycl.command_graph(q)
    inner.add(lambda h: h.memset(victim, 0, 4 * N))
    inner_exe = inner.finalize()
    outer = sycl.command_graph(q)
    a = outer.add(lambda h: h.parallel_for(prog.kernel("fillv"), N, x, 6))
    outer.add(lambda h: h.ext_oneapi_graph(inner_exe), depends_on=[a])
    exe = outer.finalize()
    sycl.free(victim)
    launched = len(fake.launched)
    with pytest.raises(sycl.exception, match="freed") as err:
        q.ext_oneapi_graph(exe).wait()
    assert err.value.code() == sycl.errc.invalid
    q.wait()
    assert list(x) == [0] * N and len(fake.launched) == launched
