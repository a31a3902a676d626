"""Several devices in one program (issue 33 point 2): a context of several
devices, peer access, copies between devices, the same kernels on each
device, device_global storage per device, and copies between a CPU device's
memory and a GPU's.

Every test runs on three rigs of two devices:

* ``fake_gpus``: two GPUs of the stand-in driver (``fake_cuda.py``), which
  fails a call made under the wrong current context, checks each side of a
  peer copy and faults a kernel given another GPU's memory without peer access;
* ``cpus``: two CPU devices of the device configs (one address space);
* ``real_gpus``: the first two NVIDIA GPUs of this machine, skipped (saying why)
  unless there are two: ``python -m pytest tests/runtime/test_multi_device.py -k real_gpus -rs``.
"""
import numpy as np
import pytest

from minisycl import runtime as sycl
from minisycl.runtime.cuda import driver
from minisycl.runtime.cuda.device import cuda_devices

import fake_cuda

#: the rig chooses its devices itself: one run, whatever ``MINISYCL_DEVICE`` names
pytestmark = pytest.mark.cpu_only("the test picks its two devices itself (its rig)")

KSL = """
device_global<int> tag = 3;
kernel inc(id<1> i, int* p) { p[i] = p[i] + 1; }
kernel read_tag(int* out) { out[0] = tag; }
"""
N = 256


_inc = fake_cuda.inc_kernel


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("multi")
    (d / "m.ksl").write_text(KSL)
    return sycl.build_program([str(d / "m.ksl")])


class Rig:
    """Two devices, a fresh context holding both, a queue on each."""

    def __init__(self, kind: str, devices, prog, fake=None):
        self.kind, self.devices, self.prog, self.fake = kind, list(devices), prog, fake
        self.context = sycl.context(self.devices)
        self.queues = [sycl.queue(d, context=self.context, in_order=True) for d in self.devices]

    @property
    def gpus(self) -> bool:
        return self.kind != "cpus"


@pytest.fixture(params=["fake_gpus", "cpus", "real_gpus"])
def rig(request, monkeypatch, prog):
    if request.param == "fake_gpus":
        fake, devices = fake_cuda.install_devices(monkeypatch, 2)
        fake.kernels.update({"inc": (4, _inc)})
        return Rig(request.param, devices, prog, fake)
    if request.param == "cpus":
        cpus = [d for d in sycl.get_devices() if d.backend == "native_cpu"][:2]
        return Rig(request.param, cpus, prog)
    gpus = cuda_devices()
    if len(gpus) < 2:
        pytest.skip(f"needs two NVIDIA GPUs, this machine has {len(gpus)}"
                    + (f" ({driver.why_unavailable()})" if driver.why_unavailable() else ""))
    return Rig(request.param, gpus[:2], prog)


def _device_array(q, values):
    a = sycl.malloc_device(len(values), np.int32, q)
    q.memcpy(a, values, values.nbytes).wait()
    return a


def _read(q, a, n=N):
    out = np.zeros(n, np.int32)
    q.memcpy(out, a, out.nbytes).wait()
    return out


def test_a_context_holds_both_devices(rig):
    d0, d1 = rig.devices
    assert rig.context.get_devices() == [d0, d1]
    assert [q.get_device() for q in rig.queues] == [d0, d1]
    assert all(q.get_context() is rig.context for q in rig.queues)
    alone = sycl.context(d0)
    with pytest.raises(sycl.exception) as err:
        sycl.queue(d1, context=alone)
    assert err.value.code() == sycl.errc.invalid and "not a member of the context" in str(err.value)


def test_a_context_refuses_devices_of_two_backends(monkeypatch):
    _, (gpu,) = fake_cuda.install_devices(monkeypatch, 1)
    with pytest.raises(sycl.exception) as err:
        sycl.context([sycl.default_device(sycl.HOST_CPU), gpu])
    assert err.value.code() == sycl.errc.invalid and "across platforms" in str(err.value)
    with pytest.raises(sycl.exception) as err:
        sycl.context([])
    assert err.value.code() == sycl.errc.invalid


def test_peer_access_queries_enable_and_disable(rig):
    d0, d1 = rig.devices
    assert d0.ext_oneapi_can_access_peer(d0)
    can = d0.ext_oneapi_can_access_peer(d1, sycl.peer_access.access_supported)
    if rig.kind != "real_gpus":
        assert can                              # the fake's GPUs and CPU devices reach each other
    if not can:
        pytest.skip(f"{d0.name} cannot reach {d1.name}'s memory on this machine")
    assert isinstance(d0.ext_oneapi_can_access_peer(d1, "atomics_supported"), bool)
    d0.ext_oneapi_enable_peer_access(d1)
    d0.ext_oneapi_enable_peer_access(d1)        # again: no error
    d0.ext_oneapi_disable_peer_access(d1)
    if rig.gpus:
        with pytest.raises(sycl.exception) as err:
            d0.ext_oneapi_disable_peer_access(d1)
        assert err.value.code() == sycl.errc.invalid
    for bad in (lambda: d0.ext_oneapi_can_access_peer(d1, "sometimes"), lambda: d0.ext_oneapi_enable_peer_access(1)):
        with pytest.raises(sycl.exception) as err:
            bad()
        assert err.value.code() == sycl.errc.invalid


def test_peer_access_where_the_gpus_cannot(monkeypatch, prog):
    fake, (d0, d1) = fake_cuda.install_devices(monkeypatch, 2)
    fake.kernels.update({"inc": (4, _inc)})
    fake.p2p = {pair: False for pair in fake.p2p}
    assert not d0.ext_oneapi_can_access_peer(d1)
    with pytest.raises(sycl.exception) as err:
        d0.ext_oneapi_enable_peer_access(d1)
    assert err.value.code() == sycl.errc.feature_not_supported
    rig = Rig("fake_gpus", [d0, d1], prog, fake)
    q0, q1 = rig.queues
    a = _device_array(q0, np.arange(N, dtype=np.int32))
    b = sycl.malloc_device(N, np.int32, q1)
    q1.memcpy(b, a, 4 * N).wait()               # copies still work: the driver stages them
    assert (_read(q1, b) == np.arange(N)).all()


def test_copies_between_the_devices(rig):
    q0, q1 = rig.queues
    values = np.arange(N, dtype=np.int32) * 3
    a0 = _device_array(q0, values)
    b1 = sycl.malloc_device(N, np.int32, q1)
    q1.memcpy(b1, a0, values.nbytes).wait()                 # on the destination's queue
    assert (_read(q1, b1) == values).all()
    c0 = sycl.malloc_device(N, np.int32, q0)
    q1.copy(b1, c0, N).wait()                               # to the other device, on the source's queue
    assert (_read(q0, c0) == values).all()
    s1 = sycl.malloc_shared(N, np.int32, q1)
    h0 = sycl.malloc_host(N, np.int32, q0)
    q0.memcpy(s1, a0, values.nbytes).wait()                 # device memory -> the other's shared memory
    q1.memcpy(h0, s1, values.nbytes).wait()                 # and on to the first's host memory
    assert (np.asarray(h0) == values).all()
    if rig.fake is not None:
        assert rig.fake.calls["cuMemcpyPeerAsync"] == 2     # the two device-to-device copies


def test_a_copy_waits_for_an_event_of_the_other_device(rig):
    q0, q1 = rig.queues
    a0 = sycl.malloc_device(N, np.int32, q0)
    nines = np.full(N, 9, np.int32)
    first = q0.memcpy(a0, nines, 4 * N)
    b1 = sycl.malloc_device(N, np.int32, q1)
    q1.memcpy(b1, a0, 4 * N, depends_on=[first]).wait()
    assert (_read(q1, b1) == 9).all()


def test_the_same_kernel_runs_on_each_device(rig):
    built = rig.prog.builds
    loads = rig.fake.calls["cuModuleLoadDataEx"] if rig.fake is not None else 0
    arrays = [_device_array(q, np.arange(N, dtype=np.int32) + 100 * i) for i, q in enumerate(rig.queues)]
    for q, a in zip(rig.queues, arrays):
        q.parallel_for(rig.prog.kernel("inc"), N, a)
    for i, (q, a) in enumerate(zip(rig.queues, arrays)):
        assert (_read(q, a) == np.arange(N) + 100 * i + 1).all()
    assert rig.prog.builds == built + 2                     # one program (image, cache entry) per device
    if rig.fake is not None:
        assert rig.fake.calls["cuModuleLoadDataEx"] == loads + 2
        assert {launch[0] for launch in rig.fake.launched} == {"inc"}


def test_a_kernel_reaches_the_other_devices_memory_after_peer_access(rig):
    d0, d1 = rig.devices
    q0, q1 = rig.queues
    a0 = _device_array(q0, np.zeros(N, np.int32))
    if rig.gpus:
        with pytest.raises(sycl.exception) as err:
            q1.parallel_for(rig.prog.kernel("inc"), N, a0).wait()
        assert err.value.code() == sycl.errc.invalid and d0.name in str(err.value)
        if not d1.ext_oneapi_can_access_peer(d0):
            pytest.skip(f"{d1.name} cannot reach {d0.name}'s memory on this machine")
        d1.ext_oneapi_enable_peer_access(d0)
    try:
        q1.parallel_for(rig.prog.kernel("inc"), N, a0).wait()
        q1.submit(lambda h: h.parallel_for(rig.prog.kernel("inc"), N, a0)).wait()
    finally:
        if rig.gpus:
            d1.ext_oneapi_disable_peer_access(d0)
    assert (_read(q0, a0) == 2).all()


def test_a_repeated_launch_sees_peer_access_disabled(rig):
    """The launch fast path reuses the checks of a launch repeated with the same
    objects; another GPU's memory is checked again each time, since peer access
    may have been disabled in between (the GPU would fault and its context be lost)."""
    d0, d1 = rig.devices
    q0, q1 = rig.queues
    a0 = _device_array(q0, np.zeros(N, np.int32))
    k = rig.prog.kernel("inc")
    if rig.gpus:
        if not d1.ext_oneapi_can_access_peer(d0):
            pytest.skip(f"{d1.name} cannot reach {d0.name}'s memory on this machine")
        d1.ext_oneapi_enable_peer_access(d0)
    for _ in range(3):
        q1.parallel_for(k, N, a0).wait()
    if not rig.gpus:
        assert (_read(q0, a0) == 3).all()
        return
    d1.ext_oneapi_disable_peer_access(d0)
    for _ in range(2):
        with pytest.raises(sycl.exception) as err:
            q1.parallel_for(k, N, a0).wait()
        assert err.value.code() == sycl.errc.invalid and d0.name in str(err.value)
    assert not d1.lost
    assert (_read(q0, a0) == 3).all()


def test_device_global_storage_is_per_device(rig):
    tag = rig.prog.device_global("tag")
    q0, q1 = rig.queues
    q0.copy(np.array([5], np.int32), tag).wait()
    q1.copy(np.array([7], np.int32), tag).wait()
    got = [np.zeros(1, np.int32) for _ in rig.queues]
    for q, out in zip(rig.queues, got):
        q.copy(tag, out).wait()
    assert [int(g[0]) for g in got] == [5, 7]
    if rig.fake is None:                        # (the fake's modules have no globals for a kernel to read)
        for q, want in zip(rig.queues, (5, 7)):
            out = sycl.malloc_shared(1, np.int32, q)
            q.single_task(rig.prog.kernel("read_tag"), out).wait()
            assert int(np.asarray(out)[0]) == want
    other = sycl.queue(rig.devices[0], context=sycl.context(rig.devices[0]))
    fresh = np.zeros(1, np.int32)
    other.copy(tag, fresh).wait()
    assert int(fresh[0]) == 3                   # another context: its own storage, the initial value


def test_copies_between_a_cpu_device_and_a_gpu_are_staged(rig):
    if not rig.gpus:
        pytest.skip("needs a GPU")
    cpu = sycl.queue(sycl.HOST_CPU)
    q0 = rig.queues[0]
    values = np.arange(N, dtype=np.int32) - 7
    g = _device_array(q0, values)
    usm = sycl.malloc_shared(N, np.int32, cpu)              # a CPU device's memory
    cpu.memcpy(usm, g, values.nbytes).wait()                # GPU device memory -> CPU USM, on the CPU queue
    assert (np.asarray(usm) == values).all()
    np.asarray(usm)[:] += 1
    cpu.memcpy(g, usm, values.nbytes).wait()                # and back
    assert (_read(q0, g) == values + 1).all()
    q0.copy(usm, g, N).wait()                               # the GPU queue takes the CPU's memory too
    back = sycl.malloc_device(N, np.int32, q0)
    cpu.copy(g, back, N).wait()                             # GPU to GPU memory, asked of the CPU queue
    assert (_read(q0, back) == values + 1).all()
    for bad in (lambda: cpu.memset(g, 0, 16), lambda: cpu.fill(g, np.int32(1), 4)):
        with pytest.raises(sycl.exception) as err:
            bad()
        assert err.value.code() == sycl.errc.invalid and q0.device.name in str(err.value)
    with pytest.raises(sycl.exception) as err:             # a kernel on the GPU cannot reach pageable CPU memory
        q0.parallel_for(rig.prog.kernel("inc"), N, usm).wait()
    assert err.value.code() == sycl.errc.invalid


def test_cpu_devices_share_memory(rig):
    if rig.gpus:
        pytest.skip("CPU devices only")
    q0, q1 = rig.queues
    a = sycl.malloc_shared(N, np.int32, q0)
    q1.parallel_for(rig.prog.kernel("inc"), N, a).wait()    # one address space: no peer access needed
    assert (np.asarray(a) == 1).all()


# -- finalizers: whatever the collector frees, the thread's context stays its own ------------

def _a_queue_with_events(gpu, prog):
    q = sycl.queue(gpu, enable_profiling=True)
    q.memcpy(sycl.malloc_device(4, np.int32, q), np.zeros(4, np.int32), 16).wait()
    return q


def _a_launched_graph(gpu, prog):
    q = sycl.queue(gpu)
    a = sycl.malloc_device(4, np.int32, q)
    g = sycl.command_graph(q)
    g.add(lambda h: h.memset(a, 0, 16))
    ex = g.finalize()
    q.ext_oneapi_graph(ex).wait()
    return ex


def _a_released_export(gpu, prog):
    q = sycl.queue(gpu)
    a = sycl.malloc_device(4, np.int32, q)
    capsule = a.__dlpack__(stream=-1)
    sycl.free(a)                        # freed when the consumer lets go: the capsule's destructor
    return capsule


@pytest.mark.parametrize("make", [_a_queue_with_events, _a_launched_graph, _a_released_export])
def test_finalizers_leave_the_current_context_alone(monkeypatch, prog, make):
    """An object of one GPU collected while another GPU's context is current
    (between that GPU's ``activate`` and the driver call it was for) must not
    leave its own context current: the interrupted call would run under the
    wrong GPU (a generated interleaving found it: ``CUDA_ERROR_INVALID_CONTEXT``)."""
    import gc

    from minisycl.runtime.cuda import device as cuda_device_mod

    fake, gpus = fake_cuda.install_devices(monkeypatch, 2)
    held = [make(gpus[1], prog)]
    held.append(held)                   # a cycle: only the collector frees it
    q0 = sycl.queue(gpus[0])
    gpus[0].activate()
    mine = fake.current
    del held
    gc.collect()
    assert fake.current == mine and cuda_device_mod._current.context is gpus[0].primary_context()
    a = sycl.malloc_device(4, np.int32, q0)             # the next call on GPU 0 runs under its context
    q0.memcpy(a, np.arange(4, dtype=np.int32), 16).wait()
    assert (_read(q0, a, 4) == np.arange(4)).all()


@pytest.mark.parametrize("make", [_a_queue_with_events, _a_launched_graph, _a_released_export])
def test_finalizers_of_a_driver_no_longer_loaded_call_nothing(prog, make):
    """Objects of a stand-in driver's GPUs collected after another driver was
    loaded in its place (the real one, on a GPU machine) must not hand their
    handles to it: the real driver crashed on them at the end of a test run."""
    import gc

    with pytest.MonkeyPatch.context() as mp:
        _, gpus = fake_cuda.install_devices(mp, 2)
        held = [make(gpus[1], prog)]
        held.append(held)
    with pytest.MonkeyPatch.context() as mp:
        later, _ = fake_cuda.install_devices(mp, 2)
        del held
        gc.collect()
        assert not later.calls, f"the later driver was called: {dict(later.calls)}"


# -- a generator: random interleavings of work on the two GPUs and the CPU ------------------

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from minisycl.passes.support import knobs  # noqa: E402

_OPS = st.lists(st.tuples(st.sampled_from(["alloc", "copy", "inc", "peer", "event_copy", "free"]),
                          st.integers(0, 2), st.integers(0, 7), st.integers(0, 7),
                          st.sampled_from(["device", "shared", "host"])), min_size=1, max_size=25)


@settings(max_examples=knobs.fuzz_examples(40), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=_OPS)
def test_interleaved_work_on_two_gpus_and_the_cpu(prog, ops):
    """Allocations of every kind on either GPU or the CPU, copies between any two
    of them on any queue (some after an event of another queue), kernels on
    either GPU, peer access turned on and off, frees: the stand-in driver refuses
    any call made under the wrong context, and each allocation's contents
    follow a NumPy model.  A kernel given another GPU's device memory without
    peer access must be ``errc::invalid`` and change nothing."""
    n = 16
    with pytest.MonkeyPatch.context() as mp:
        fake, gpus = fake_cuda.install_devices(mp, 2)
        fake.kernels.update({"inc": (4, _inc)})
        rig = Rig("fake_gpus", gpus, prog, fake)
        queues = rig.queues + [sycl.queue(sycl.HOST_CPU)]
        live: list = []                 # (allocation, queue index, model)
        for op, qi, a, b, kind in ops:
            q = queues[qi]
            if op == "alloc" or not live:
                alloc = {"device": sycl.malloc_device, "shared": sycl.malloc_shared,
                         "host": sycl.malloc_host}[kind](n, np.int32, q)
                model = np.arange(n, dtype=np.int32) * (len(live) + 1)
                q.memcpy(alloc, model, model.nbytes).wait()
                live.append((alloc, qi, model.copy()))
                continue
            (x, xq, xm), (y, _, ym) = live[a % len(live)], live[b % len(live)]
            if op in ("copy", "event_copy"):
                # (a command on the source's queue first: the copy depends on its event)
                before = queues[xq].memcpy(x, x, 0) if op == "event_copy" else None
                q.memcpy(y, x, 4 * n, depends_on=[before] if before is not None else None).wait()
                ym[:] = xm
            elif op == "inc":
                gq = qi % 2                 # a GPU queue
                # a CPU device's USM (pageable), or another GPU's device memory without peer access
                foreign = xq == 2 or (not x.host_accessible and x.device is not gpus[gq]
                                      and not gpus[gq].impl.peer_enabled(x.device))
                if foreign:
                    with pytest.raises(sycl.exception) as err:
                        queues[gq].parallel_for(prog.kernel("inc"), n, x).wait()
                    assert err.value.code() == sycl.errc.invalid
                else:
                    queues[gq].parallel_for(prog.kernel("inc"), n, x).wait()
                    xm += 1
            elif op == "peer":
                d, other = gpus[qi % 2], gpus[1 - qi % 2]
                if d.impl.peer_enabled(other):
                    d.ext_oneapi_disable_peer_access(other)
                else:
                    d.ext_oneapi_enable_peer_access(other)
            elif op == "free" and len(live) > 1:
                alloc, _, _ = live.pop(a % len(live))
                sycl.free(alloc)
        for alloc, xq, model in live:
            out = np.zeros(n, np.int32)
            queues[(xq + 1) % 3].memcpy(out, alloc, out.nbytes).wait()     # read through another queue
            assert (out == model).all()
        assert not fake.peers - {(0, 1), (1, 0)}


_REPEATS = st.lists(st.tuples(st.sampled_from(["inc", "inc", "inc", "peer", "free"]), st.integers(0, 2)),
                    min_size=1, max_size=20)


@settings(max_examples=knobs.fuzz_examples(40), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=_REPEATS)
def test_repeated_launches_follow_peer_access_and_frees(prog, ops):
    """The launch fast path reuses what it checked for a launch repeated with the
    same objects: a launch on GPU 1 of one of three allocations (GPU 0's device
    memory, GPU 1's, GPU 0's shared memory), again and again, with peer access
    from GPU 1 to GPU 0 turned on and off and allocations freed in between, must
    give what a first launch gives: ``errc::invalid`` for GPU 0's device memory
    without peer access or a freed allocation (nothing changed, the GPU not
    lost), else the kernel's result."""
    n = 16
    with pytest.MonkeyPatch.context() as mp:
        fake, (d0, d1) = fake_cuda.install_devices(mp, 2)
        fake.kernels.update({"inc": (4, _inc)})
        rig = Rig("fake_gpus", (d0, d1), prog, fake)
        q0, q1 = rig.queues
        k = prog.kernel("inc")
        makers = [lambda: sycl.malloc_device(n, np.int32, q0), lambda: sycl.malloc_device(n, np.int32, q1),
                  lambda: sycl.malloc_shared(n, np.int32, q0)]
        allocs = [make() for make in makers]
        for a in allocs:
            q1.memset(a, 0, 4 * n).wait()
        d1.ext_oneapi_enable_peer_access(d0)
        counts = [0, 0, 0]
        freed = [None, None, None]          # the last freed allocation of each slot (launched again: refused)
        for step, (op, i) in enumerate(ops):
            if op == "peer":
                (d1.ext_oneapi_disable_peer_access if d1.impl.peer_enabled(d0) else d1.ext_oneapi_enable_peer_access)(d0)
            elif op == "free":
                sycl.free(allocs[i])
                freed[i], allocs[i], counts[i] = allocs[i], makers[i](), 0
                q1.memset(allocs[i], 0, 4 * n).wait()
            elif freed[i] is not None and step % 2:             # (now and then, the freed one)
                with pytest.raises(sycl.exception, match="freed") as err:
                    q1.parallel_for(k, n, freed[i]).wait()
                assert err.value.code() == sycl.errc.invalid
            elif i == 0 and not d1.impl.peer_enabled(d0):
                with pytest.raises(sycl.exception) as err:
                    q1.parallel_for(k, n, allocs[i]).wait()
                assert err.value.code() == sycl.errc.invalid and d0.name in str(err.value)
            else:
                q1.parallel_for(k, n, allocs[i]).wait()
                counts[i] += 1
        assert not d0.lost and not d1.lost
        for a, c, q in zip(allocs, counts, (q0, q1, q0)):
            assert (_read(q, a, n) == c).all()
