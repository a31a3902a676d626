"""``device_global`` copies without a count copy the whole of ``T`` (issue 18
point 10; the extension's ``count = sizeof(T) / sizeof(remove_all_extents_t<T>)``,
``numBytes = sizeof(T)``): a start index or offset past zero with the default
count runs past the end, "out of bounds" in both directions, and the refused
copy changes neither side.  Counts, indices and offsets are checked as every
USM operation's are."""
import numpy as np
import pytest

from minisycl import runtime as sycl

SRC = """
device_global<int[4]> arr = {1, 2, 3, 4};
device_global<long[2][3]> grid;
kernel read_arr(int* out) { for (int i = 0; i < 4; i++) out[i] = arr[i]; }
"""


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("dgc")
    (d / "dgc.ksl").write_text(SRC)
    return sycl.build_program(d / "dgc.ksl")


@pytest.fixture
def q():
    dev = sycl.default_device()
    return sycl.queue(dev, context=sycl.context(dev))        # fresh storage for each test


def device_values(q, prog):
    out = np.zeros(4, np.int32)
    q.copy(prog.device_global("arr"), out).wait()
    return out.tolist()


def refused(fn, text):
    with pytest.raises(sycl.exception) as err:
        fn()
    assert err.value.code() == sycl.errc.invalid and text in str(err.value), str(err.value)


def test_the_default_count_is_the_whole_of_t(q, prog):
    q.copy(np.array([5, 6, 7, 8], np.int32), prog.device_global("arr")).wait()
    assert device_values(q, prog) == [5, 6, 7, 8]
    grid = np.zeros(6, np.int64)
    q.copy(prog.device_global("grid"), grid).wait()                    # 2 x 3 longs: six elements
    assert grid.tolist() == [0] * 6


@pytest.mark.parametrize("start", [1, 3, 4])
def test_a_start_index_with_the_default_count_is_out_of_bounds_both_ways(q, prog, start):
    arr = prog.device_global("arr")
    host = np.full(4, 9, np.int32)
    refused(lambda: q.copy(host, arr, start_index=start), "Copy to device_global is out of bounds.")
    refused(lambda: q.copy(arr, host, start_index=start), "Copy from device_global is out of bounds.")
    refused(lambda: q.memcpy(arr, host, offset=4 * start), "Copy to device_global is out of bounds.")
    refused(lambda: q.memcpy(host, arr, offset=4 * start), "Copy from device_global is out of bounds.")
    assert host.tolist() == [9] * 4 and device_values(q, prog) == [1, 2, 3, 4]


def test_an_explicit_count_that_fits_from_a_start_index(q, prog):
    arr = prog.device_global("arr")
    q.copy(np.array([70, 80], np.int32), arr, 2, start_index=2).wait()
    assert device_values(q, prog) == [1, 2, 70, 80]
    tail = np.zeros(1, np.int32)
    q.copy(arr, tail, 1, start_index=3).wait()
    assert tail.tolist() == [80]
    out = sycl.malloc_shared(4, np.int32, q)
    q.single_task(prog.kernel("read_arr"), out).wait()          # kernels see it too
    assert list(out) == [1, 2, 70, 80]


@pytest.mark.parametrize("call, text", [
    (lambda q, dg: q.copy(np.zeros(4, np.int32), dg, -1), "copy count must be at least 0"),
    (lambda q, dg: q.copy(np.zeros(4, np.int32), dg, 1, -1), "copy start index must be at least 0"),
    (lambda q, dg: q.copy(dg, np.zeros(4, np.int32), "2"), "copy count must be an integer"),
    (lambda q, dg: q.memcpy(dg, np.zeros(4, np.int32), -4), "memcpy size must be at least 0"),
    (lambda q, dg: q.memcpy(dg, np.zeros(4, np.int32), 4, -4), "memcpy offset must be at least 0"),
    (lambda q, dg: q.copy(np.zeros(2, np.int32), dg), "overruns a 8-byte array"),      # T is 16 bytes
    (lambda q, dg: q.copy(dg, np.zeros(4, np.int32)[::-1]), "contiguous"),
    (lambda q, dg: q.copy(dg, np.frombuffer(bytes(16), np.int32)), "read-only"),
    (lambda q, dg: q.memcpy(dg, 0, 4), "address 0x0 is not inside a USM allocation"),
])
def test_bad_counts_offsets_and_host_memory(q, prog, call, text):
    refused(lambda: call(q, prog.device_global("arr")), text)
    assert device_values(q, prog) == [1, 2, 3, 4]
