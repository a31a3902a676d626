"""GPU launch-time work-group checks without a GPU (issue 20 point 7): the
dynamic shared memory layout of ``local_memory`` arguments, the limits a launch
is checked against (``errc::invalid`` / ``errc::nd_range`` naming the limit),
the opt-in above 48 KiB, and ``initialize_to_identity`` as memsets on the
stream; the queue's methods run on stand-ins for the driver objects."""
import numpy as np
import pytest

from minisycl import runtime as sycl
from minisycl.runtime.cuda.queue import cuda_queue


class Linked:
    """A built GPU program's answers: static shared bytes, threads per block."""

    def __init__(self, static=0, threads=1024):
        self.static, self.threads, self.allowed = static, threads, []

    def limits(self, kernel):
        return self.static, self.threads

    def allow_dynamic_shared(self, kernel, nbytes):
        self.allowed.append(nbytes)


class Kernel:
    def __init__(self, params):
        self.name, self.params = "k", params


class Device:
    name, local_mem_size = "nvidia_gpu_sm_90", 232448


class Queue:
    device = Device()

    def __init__(self):
        self.memsets = []

    def _memset(self, ptr, value, width, count):
        self.memsets.append((ptr, value, width, count))


def slots(*values):
    import ctypes
    return (ctypes.c_uint64 * len(values))(*values)


def test_local_arguments_become_16_byte_aligned_offsets():
    k = Kernel(["float*", "local float*", "int", "local double*"])
    linked = Linked(static=1024)
    out, dynamic = cuda_queue._shared_memory(Queue(), k, linked, slots(111, 12, 7, 80), (64, 1, 1))
    assert list(out) == [111, 0, 7, 16] and dynamic == 96
    assert linked.allowed == [96]


def test_no_local_arguments_launch_with_no_dynamic_memory():
    k = Kernel(["float*", "int"])
    s = slots(1, 2)
    out, dynamic = cuda_queue._shared_memory(Queue(), k, Linked(), s, None)
    assert out is s and dynamic == 0


def test_too_much_shared_memory_is_errc_invalid_naming_the_limit():
    k = Kernel(["local float*"])
    with pytest.raises(sycl.exception) as e:
        cuda_queue._shared_memory(Queue(), k, Linked(static=4096), slots(232448 - 4000), (32, 1, 1))
    assert e.value.code() == sycl.errc.invalid
    assert "232448" in str(e.value) and "4096 static" in str(e.value) and "local_mem_size" in str(e.value)


def test_more_threads_than_the_kernel_can_run_is_errc_nd_range():
    k = Kernel(["int*"])
    with pytest.raises(sycl.exception) as e:
        cuda_queue._shared_memory(Queue(), k, Linked(threads=512), slots(0), (32, 32, 1))
    assert e.value.code() == sycl.errc.nd_range
    assert "1024" in str(e.value) and "512" in str(e.value) and "MAX_THREADS_PER_BLOCK" in str(e.value)


def test_initialize_to_identity_is_memsets_of_the_identity():
    q = Queue()
    cpu = sycl.queue()
    f, d, b, h = (sycl.malloc_shared(1, t, cpu) for t in (np.float32, np.float64, np.bool_, np.int16))
    cuda_queue.prepare_reductions(q, [sycl.reduction(f, sycl.minimum, initialize_to_identity=True),
                                      sycl.reduction(d, sycl.maximum, initialize_to_identity=True),
                                      sycl.reduction(b, sycl.logical_and, initialize_to_identity=True),
                                      sycl.reduction(h, sycl.bit_and, initialize_to_identity=True),
                                      sycl.reduction(h, sycl.plus), 5])
    assert q.memsets == [(f.ptr, 0x7F800000, 4, 1), (d.ptr, 0, 4, 1), (d.ptr + 4, 0xFFF00000, 4, 1),
                         (b.ptr, 1, 1, 1), (h.ptr, 0xFFFF, 2, 1)]
