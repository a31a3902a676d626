"""The driver calls of a GPU launch and of a wait, pinned (issue 31, point 5).

Each real driver call through ctypes costs the host the better part of a
microsecond, so the launch fast path (``cuda/queue.py``, ``_fast``) makes one
call per launch and a wait on the latest command one ``cuStreamQuery`` when the
kernel is done (one per poll while it is not), and none of them sets or asks for
the current context once the queue's context is current on the thread.  Counted
with the stand-in driver (``fake_cuda.py``): a change that adds a call per
launch or per wait fails here.  The launch is ``cuLaunchKernelEx`` (four
arguments for ctypes to convert instead of ``cuLaunchKernel``'s eleven), and
``cuLaunchKernel`` on a driver without it."""
import ctypes
import mmap

import numpy as np
import pytest

from minisycl import runtime as sycl
from minisycl.runtime.cuda import driver

import fake_cuda

pytestmark = fake_cuda.ONLY_ON_CPU

KSL = """
kernel nop(int* p) { }
kernel add(id<1> i, int* p, int v) { p[i] = p[i] + v; }
"""


def _add(n, _y, _z, p, v):
    a = fake_cuda.ints(p, n)
    for i in range(n):
        a[i] += ctypes.c_int32(v & 0xFFFFFFFF).value


def _gpu(monkeypatch, tmp_path, missing=()):
    fake, dev = fake_cuda.install(monkeypatch)
    fake.missing.update(missing)
    fake.kernels.update({"nop": (1, lambda p: None), "add": (5, _add)})
    (tmp_path / "k.ksl").write_text(KSL)
    return fake, dev, sycl.build_program([str(tmp_path / "k.ksl")])


@pytest.fixture
def gpu(monkeypatch, tmp_path):
    return _gpu(monkeypatch, tmp_path)


def _warmed(dev, prog, malloc=sycl.malloc_device):
    """An in-order queue and 4 zeroed ints of its memory, each kernel launched on it
    and waited for once (its module loaded, its plan made)."""
    q = sycl.queue(dev, in_order=True)
    p = malloc(4, np.int32, q)
    q.fill(p, np.int32(0), 4).wait()
    q.single_task(prog.kernel("nop"), p).wait()
    q.parallel_for(prog.kernel("add"), 4, p, 0).wait()
    return q, p


def test_a_fast_launch_is_one_driver_call(gpu):
    fake, dev, prog = gpu
    q, p = _warmed(dev, prog, sycl.malloc_shared)
    nop, add = prog.kernel("nop"), prog.kernel("add")
    fake.calls.clear()
    for _ in range(5):
        q.single_task(nop, p)                       # the same objects: the previous launch's call again
    assert dict(fake.calls) == {"cuLaunchKernelEx": 5}
    for v in range(5):
        q.parallel_for(add, 4, p, v)                # a new scalar each time: packed, still one call
    q.single_task(nop, p)                           # another kernel in between: its plan looked up
    q.parallel_for(add, 4, p, 10)
    assert dict(fake.calls) == {"cuLaunchKernelEx": 12}
    q.wait()
    assert list(np.asarray(p)) == [0 + 1 + 2 + 3 + 4 + 10] * 4


def test_a_wait_on_the_latest_command_is_one_query_when_it_is_done(gpu):
    fake, dev, prog = gpu
    q, p = _warmed(dev, prog)
    nop = prog.kernel("nop")
    fake.calls.clear()
    e = q.single_task(nop, p)
    e.wait()
    assert dict(fake.calls) == {"cuLaunchKernelEx": 1, "cuStreamQuery": 1}
    e.wait()                                        # known finished: no driver call
    assert e.status == "complete"
    assert dict(fake.calls) == {"cuLaunchKernelEx": 1, "cuStreamQuery": 1}


def test_a_wait_polls_once_per_not_ready_answer_without_sleeping(gpu, monkeypatch):
    """A kernel not finished at the first query (a launch waited for at once): the
    wait polls back to back, one ``cuStreamQuery`` per answer, no synchronize call
    and no sleep while the answers come within the spin."""
    fake, dev, prog = gpu
    answers = []
    query = fake.cuStreamQuery

    def not_ready_first(stream):
        rc = query(stream)
        return answers.pop() if answers else rc
    monkeypatch.setitem(fake.__dict__, "cuStreamQuery", not_ready_first)
    monkeypatch.setitem(driver._functions, "cuStreamQuery", not_ready_first)
    q, p = _warmed(dev, prog)                       # (its query function: the one above)
    nop = prog.kernel("nop")
    naps = []
    monkeypatch.setattr("time.sleep", naps.append)
    for not_ready in (1, 3, 40):
        fake.calls.clear()
        answers[:] = [600] * not_ready
        q.single_task(nop, p).wait()
        assert dict(fake.calls) == {"cuLaunchKernelEx": 1, "cuStreamQuery": not_ready + 1}
    assert naps == []


def test_a_wait_on_an_earlier_command_records_one_event_and_queries_it(gpu):
    fake, dev, prog = gpu
    q, p = _warmed(dev, prog)
    nop = prog.kernel("nop")
    for made in (1, 0):                             # the CUDA event made once, then taken from the pool
        fake.calls.clear()
        first = q.single_task(nop, p)
        q.single_task(nop, p)
        first.wait()
        del first                                   # (its CUDA event back in the queue's pool)
        assert dict(fake.calls) == {"cuLaunchKernelEx": 2, "cuEventRecord": 1, "cuEventQuery": 1,
                                    **({"cuEventCreate": 1} if made else {})}


def test_a_launch_sets_the_context_only_when_another_is_current(monkeypatch, tmp_path):
    fake, devs = fake_cuda.install_devices(monkeypatch, 2)
    fake.kernels.update({"nop": (1, lambda p: None)})
    (tmp_path / "k.ksl").write_text(KSL)
    prog = sycl.build_program([str(tmp_path / "k.ksl")])
    q0, q1 = sycl.queue(devs[0], in_order=True), sycl.queue(devs[1], in_order=True)
    p0, p1 = sycl.malloc_device(1, np.int32, q0), sycl.malloc_device(1, np.int32, q1)
    nop = prog.kernel("nop")
    q0.single_task(nop, p0).wait()
    q1.single_task(nop, p1).wait()
    fake.calls.clear()
    q1.single_task(nop, p1).wait()                  # its context is current: no context call
    assert dict(fake.calls) == {"cuLaunchKernelEx": 1, "cuStreamQuery": 1}
    q0.single_task(nop, p0)                         # the other GPU: its context made current, once
    q0.single_task(nop, p0).wait()
    assert fake.calls["cuCtxSetCurrent"] == 1 and fake.calls["cuLaunchKernelEx"] == 3
    assert "cuCtxGetCurrent" not in fake.calls


def test_a_driver_without_cuLaunchKernelEx_launches_with_cuLaunchKernel(monkeypatch, tmp_path):
    fake, dev, prog = _gpu(monkeypatch, tmp_path, missing={"cuLaunchKernelEx"})
    q = sycl.queue(dev, in_order=True)
    p = sycl.malloc_shared(4, np.int32, q)
    np.asarray(p)[:] = 0
    add = prog.kernel("add")
    for v in (1, 2, 2):
        q.parallel_for(add, 4, p, v)
    q.wait()
    assert list(np.asarray(p)) == [5] * 4
    assert fake.calls["cuLaunchKernel"] == 3 and "cuLaunchKernelEx" not in fake.calls
    assert fake.launched[-1][1:3] == ((1, 1, 1), (256, 1, 1))


@pytest.mark.parametrize("missing", [(), ("cuLaunchKernelEx",)])
def test_a_refused_launch_names_its_geometry_with_either_launch_call(monkeypatch, tmp_path, missing):
    fake, dev, prog = _gpu(monkeypatch, tmp_path, missing=missing)
    q = sycl.queue(dev, in_order=True)
    p = sycl.malloc_shared(300, np.int32, q)
    add = prog.kernel("add")
    q.parallel_for(add, 300, p, 1).wait()
    call = "cuLaunchKernel" if missing else "cuLaunchKernelEx"
    fake.refuse[call] = fake_cuda.OUT_OF_RESOURCES
    for _ in range(2):                              # the checked launch, then the fast path's reuse
        with pytest.raises(sycl.exception) as err:
            q.parallel_for(add, 300, p, 1)
        assert err.value.code() == sycl.errc.nd_range
        assert "blocks of 256x1x1 threads, a grid of 2x1x1 and 0 bytes" in str(err.value)
    del fake.refuse[call]
    q.parallel_for(add, 300, p, 1).wait()


def test_a_handle_by_value_reaches_c_whole(monkeypatch):
    """``driver.by_value``'s parameter object passes a 64-bit address to a C function
    called without declared argument types (the launch path's calls): checked with
    libc's ``memset(p, 0, 0)``, which returns ``p``, on memory mapped high."""
    libc = ctypes.CDLL(None)
    monkeypatch.setattr(driver, "_lib", libc)
    area = mmap.mmap(-1, 4096)
    address = ctypes.addressof(ctypes.c_char.from_buffer(area))
    arg = driver.by_value(ctypes.c_void_p(address))
    assert not isinstance(arg, ctypes.c_void_p)     # (the parameter object, not the handle)
    memset = libc.memset
    memset.restype = ctypes.c_void_p
    assert memset(arg, 0, 0) == address
    assert memset(driver.by_value(ctypes.c_void_p(None)), 0, 0) is None     # a null handle: NULL


def test_a_fault_names_the_kernels_launched_since_the_last_wait(gpu):
    """The launch path keeps each kernel's latest place on the stream (no list per
    launch): a fault found at a wait names those launched after the last wait."""
    fake, dev, prog = gpu
    q = sycl.queue(dev, in_order=True)
    p = sycl.malloc_shared(4, np.int32, q)
    nop, add = prog.kernel("nop"), prog.kernel("add")
    q.parallel_for(add, 4, p, 1).wait()
    q.single_task(nop, p).wait()
    for v in range(3):
        q.single_task(nop, p)
    q.parallel_for(add, 4, p, 2)                    # add again, after the wait
    q.single_task(nop, p).wait()
    q.single_task(nop, p)                           # only nop since that wait
    fake.refuse["cuStreamQuery"] = fake.refuse["cuStreamSynchronize"] = fake_cuda.ILLEGAL_ADDRESS
    with pytest.raises(sycl.exception) as err:
        q.wait()
    assert err.value.code() == sycl.errc.runtime
    assert "(kernels launched since the last wait: 'nop')" in str(err.value) and "context is lost" in str(err.value)
    assert dev.lost


def test_a_fault_names_each_kernel_launched_since_the_last_wait_once(gpu):
    fake, dev, prog = gpu
    q = sycl.queue(dev, in_order=True)
    p = sycl.malloc_shared(4, np.int32, q)
    nop, add = prog.kernel("nop"), prog.kernel("add")
    q.single_task(nop, p).wait()
    for v in range(3):
        q.parallel_for(add, 4, p, v)
        q.single_task(nop, p)
    fake.refuse["cuStreamQuery"] = fake.refuse["cuStreamSynchronize"] = fake_cuda.ILLEGAL_ADDRESS
    with pytest.raises(sycl.exception) as err:
        q.single_task(nop, p).wait()
    names = str(err.value).split("kernels launched since the last wait: ")[1].split(")")[0]
    assert sorted(names.split(", ")) == ["'add'", "'nop'"]


def test_a_launch_is_counted_on_the_stream_only_once_it_is_there(gpu, monkeypatch):
    """A wait takes the queue's count of commands before its query as what the query
    covers (``_done``); a launch counts itself after its driver call, so that a wait
    from another thread during that call does not take the kernel for finished."""
    fake, dev, prog = gpu
    q, p = _warmed(dev, prog)
    seen = []
    launch = fake.cuLaunchKernelEx

    def counting(*args):
        seen.append(q._seq)
        return launch(*args)
    monkeypatch.setattr(q, "_cu_launch", counting)
    nop, add = prog.kernel("nop"), prog.kernel("add")
    before = q._seq
    q.single_task(nop, p)                           # the reused launch
    q.parallel_for(add, 4, p, 7)                    # new scalar
    q.parallel_for(add, sycl.range(4), p, 7)        # a range object: the checked path
    assert seen == [before, before + 1, before + 2] and q._seq == before + 3
    q.wait()


@pytest.mark.parametrize("not_a_kernel", [None, "add", 42, print])
@pytest.mark.parametrize("warm", [False, True])
def test_a_non_kernel_is_invalid_on_the_fast_path(gpu, not_a_kernel, warm):
    """What is not a kernel, given to a fresh queue's fast path (its last launch is
    none) or to one that has launched: ``errc::invalid``, and no launch.  On the
    H200, ``None`` on a fresh queue matched the empty last launch and raised
    ``AttributeError``."""
    fake, dev, prog = gpu
    if warm:
        q, p = _warmed(dev, prog)
    else:
        q = sycl.queue(dev, in_order=True)
        p = sycl.malloc_device(4, np.int32, q)
    fake.calls.clear()
    for launch in (lambda: q.single_task(not_a_kernel, p), lambda: q.parallel_for(not_a_kernel, 4, p, 1)):
        with pytest.raises(sycl.exception) as info:
            launch()
        assert info.value.code() == sycl.errc.invalid and "expected a kernel" in str(info.value)
    assert "cuLaunchKernelEx" not in fake.calls


@pytest.mark.parametrize("refusal", [fake_cuda.OUT_OF_RESOURCES, 1, 2])       # resources, invalid value, memory
@pytest.mark.parametrize("frame", [512 * 1024, 1 << 30])
def test_a_stack_frame_beyond_local_memory_is_a_runtime_error_naming_both(monkeypatch, tmp_path, refusal, frame):
    """A kernel whose private memory per work-item (its stack frame) reaches
    CUDA's 512 KiB of local memory per thread (the H200 refused a frame of
    exactly 512 KiB and ran one of 256 KiB): the driver refuses the launch
    (with one of several codes), and the error is ``errc::runtime`` naming both
    sizes, as the same kernel's stack overflow is on the CPU (seen on the H200:
    ``errc::nd_range`` about 1x1x1 blocks)."""
    fake, dev, prog = _gpu(monkeypatch, tmp_path)
    answer = type(fake)._cuFuncGetAttribute

    def frame_size(self, out, attribute, fn):
        if fake_cuda._value(attribute) == 3:            # CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES
            return fake_cuda._out(out, frame)
        return answer(self, out, attribute, fn)
    monkeypatch.setattr(type(fake), "_cuFuncGetAttribute", frame_size)
    fake.__dict__.pop("cuFuncGetAttribute", None)
    from minisycl.runtime.cuda import driver
    monkeypatch.delitem(driver._functions, "cuFuncGetAttribute", raising=False)
    q = sycl.queue(dev, in_order=True)
    p = sycl.malloc_shared(4, np.int32, q)
    fake.refuse["cuLaunchKernelEx"] = refusal
    with pytest.raises(sycl.exception) as err:
        q.single_task(prog.kernel("nop"), p)
    assert err.value.code() == sycl.errc.runtime
    assert f"{frame} bytes of private memory per work-item" in str(err.value) and "524288" in str(err.value)
