"""Zero-copy interop (issue 33 point 1): DLPack out and in, the CUDA array
interface, the buffer protocol, lifetimes both ways, native commands and
``interop_handle``; refusals (another device's memory, an unsupported element
type, a consumed capsule, a failing exporter) are ``errc::invalid``.  NumPy here;
torch and CuPy in ``tests/gpu/test_interop_gpu.py`` (skipped without them)."""
import gc

import numpy as np
import pytest

from minisycl import runtime as sycl
from minisycl.runtime import dlpack

KSL = """
kernel scale(id<1> i, float* x, float a) { x[i] = x[i] * a; }
kernel add_into(id<1> i, float* dst, float* src) { dst[i] = dst[i] + src[i]; }
"""


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("interop")
    (d / "interop.ksl").write_text(KSL)
    return sycl.build_program([str(d / "interop.ksl")])


def raises(code, fn, *words):
    with pytest.raises(sycl.exception) as err:
        fn()
    assert err.value.code() == getattr(sycl.errc, code), str(err.value)
    for w in words:
        assert w in str(err.value), str(err.value)


def host_view(q, x):
    """``x``'s contents on the host (a copy for device memory)."""
    out = np.empty(x.count, x.dtype)
    q.memcpy(out, x, out.nbytes).wait()
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint16, np.int64, np.bool_, np.complex64])
def test_numpy_takes_host_visible_usm_without_a_copy(dtype):
    q = sycl.queue()
    x = sycl.malloc_shared(6, dtype, q)
    np.asarray(x)[:] = np.arange(6).astype(dtype)
    a = np.from_dlpack(x)
    assert a.dtype == np.dtype(dtype) and a.shape == (6,)
    assert a.ctypes.data == x.ptr                      # the same bytes
    np.asarray(x)[2] = dtype(1) if dtype is np.bool_ else dtype(42)
    q.wait()
    assert a[2] == np.asarray(x)[2]


@pytest.mark.cpu_only("a host view of USM after free: on a GPU the driver frees managed memory's view at free")
def test_our_memory_outlives_free_while_numpy_holds_it():
    x = sycl.malloc_shared(1024, np.float32)
    np.asarray(x)[:] = 3.0
    before = dlpack.exports_alive()
    a = np.from_dlpack(x)
    sycl.free(x)
    assert float(a.sum()) == 3.0 * 1024                # still mapped
    del a
    gc.collect()
    assert dlpack.exports_alive() == before            # the consumer's deleter ran


def test_an_unconsumed_capsule_releases_its_tensor():
    x = sycl.malloc_shared(4, np.int32)
    before = dlpack.exports_alive()
    for versioned in (None, (1, 0)):
        cap = x.__dlpack__(max_version=versioned)
        assert dlpack.exports_alive() == before + 1
        del cap
        gc.collect()
        assert dlpack.exports_alive() == before


def test_dlpack_device_names_the_memory():
    q = sycl.queue()
    x = sycl.malloc_device(4, np.float32, q)
    kind, ident = x.__dlpack_device__()
    if q.device.backend == "cuda":
        assert (kind, ident) == (dlpack.CUDA, q.device.ordinal)
        cai = x.__cuda_array_interface__
        assert cai["version"] == 3 and cai["data"] == (x.ptr, False) and cai["shape"] == (4,)
        assert cai["typestr"] == "<f4" and cai["stream"] == q._stream.value
    else:
        assert (kind, ident) == (dlpack.CPU, 0)
        assert not hasattr(x, "__cuda_array_interface__")


def test_export_refusals():
    x = sycl.malloc_shared(4, np.float32)
    raises("invalid", lambda: x.__dlpack__(copy=True), "copy=True")
    raises("invalid", lambda: x.__dlpack__(dl_device=(dlpack.CUDA, 7)), "kDLCUDA device 7")
    s = sycl.malloc_shared(2, np.dtype([("a", np.int32), ("b", np.float32)]))
    raises("invalid", lambda: s.__dlpack__(), "has no DLPack type")
    sycl.free(x)
    raises("invalid", lambda: x.__dlpack__(), "freed")


@pytest.mark.cpu_only("host (NumPy) memory is not usable by a GPU kernel: tests/gpu/test_interop_gpu.py")
def test_numpy_memory_is_a_kernel_argument_without_a_copy(prog):
    q = sycl.queue()
    a = np.arange(8, dtype=np.float32)
    q.parallel_for(prog.kernel("scale"), 8, a, 2.0).wait()
    assert a.tolist() == [2.0 * i for i in range(8)]
    b = np.ones(8, np.float32)
    y = sycl.from_dlpack(b, q)
    q.parallel_for(prog.kernel("add_into"), 8, y, a).wait()
    assert b.tolist() == [1.0 + 2.0 * i for i in range(8)]
    assert np.shares_memory(np.asarray(y), b)
    m = memoryview(bytearray(16)).cast("f")             # the buffer protocol
    q.parallel_for(prog.kernel("scale"), 4, m, 3.0).wait()
    raises("invalid", lambda: q.parallel_for(prog.kernel("scale"), 4, np.zeros(4), 2.0),
           "needs memory of float (float32)")
    ro = np.ones(4, np.float32)
    ro.flags.writeable = False
    raises("invalid", lambda: q.parallel_for(prog.kernel("scale"), 4, ro, 2.0), "read-only")
    raises("invalid", lambda: q.parallel_for(prog.kernel("scale"), 4, np.ones((4, 4), np.float32)[:, 1], 2.0),
           "not contiguous")


@pytest.mark.cpu_only("a queue of this CPU")
def test_an_exporter_is_held_while_we_use_it():
    a = np.arange(4, dtype=np.float32)
    y = sycl.from_dlpack(a)
    base = a.ctypes.data
    del a
    gc.collect()
    assert y.ptr == base and np.asarray(y).tolist() == [0.0, 1.0, 2.0, 3.0]
    sycl.free(y)                                        # releases it early
    raises("invalid", lambda: np.asarray(y), "freed")


class _Exporter:
    """An exporter whose device and behaviour a test chooses."""

    def __init__(self, device=(dlpack.CPU, 0), fail=None, array=None):
        self.device, self.fail, self.array = device, fail, array if array is not None else np.zeros(4, np.float32)

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, max_version=None, **kw):
        if self.fail is not None:
            raise self.fail
        return self.array.__dlpack__()


class _CudaExporter:
    __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (0x7f0000000000, False), "version": 3,
                                "strides": None, "stream": None}


def test_memory_the_device_cannot_use_is_refused():
    q = sycl.queue()
    if q.device.backend == "cuda":
        raises("invalid", lambda: sycl.from_dlpack(np.zeros(4, np.float32), q), "kDLCPU device 0", q.device.name)
        raises("invalid", lambda: sycl.from_dlpack(_Exporter((dlpack.CUDA, q.device.ordinal + 1)), q),
               f"kDLCUDA device {q.device.ordinal + 1}")
    else:
        raises("invalid", lambda: sycl.from_dlpack(_Exporter((dlpack.CUDA, 0)), q), "kDLCUDA device 0",
               q.device.name, "_Exporter")
        raises("invalid", lambda: sycl.from_dlpack(_CudaExporter(), q), "kDLCUDA", "_CudaExporter")
    raises("invalid", lambda: sycl.from_dlpack(_Exporter((4, 0)), q), "kDLOpenCL")


@pytest.mark.cpu_only("host exporters")
def test_bad_exporters_are_invalid():
    q = sycl.queue()
    raises("invalid", lambda: sycl.from_dlpack(_Exporter(fail=RuntimeError("storage was freed")), q),
           "__dlpack__() failed", "storage was freed")
    raises("invalid", lambda: sycl.from_dlpack(_Exporter(array=np.zeros(3, np.float16).view(np.uint16).view("V2")),
                                               q), "_Exporter")
    a = np.zeros(4, np.float32)
    cap = a.__dlpack__()
    np.from_dlpack(_Capsule(cap))                     # consumed once
    raises("invalid", lambda: sycl.from_dlpack(_Capsule(cap), q), "already consumed")
    raises("invalid", lambda: sycl.from_dlpack(object(), q), "got object")
    raises("invalid", lambda: sycl.from_dlpack([1.0, 2.0], q), "got list")


class _Capsule:
    def __init__(self, cap):
        self.cap = cap

    def __dlpack_device__(self):
        return (dlpack.CPU, 0)

    def __dlpack__(self, stream=None, max_version=None, **kw):
        return self.cap


def test_unsupported_dlpack_types_are_invalid():
    with pytest.raises(sycl.exception, match="kDLBfloat"):
        dlpack.dtype_of(4, 16, 1)
    with pytest.raises(sycl.exception, match="4 lanes"):
        dlpack.dtype_of(2, 32, 4)
    assert dlpack.dtype_of(2, 16, 1) == np.float16


def test_dlpack_round_trip_through_our_own_import():
    q = sycl.queue()
    x = sycl.malloc_shared(5, np.int32, q)
    np.asarray(x)[:] = [1, 2, 3, 4, 5]
    y = sycl.from_dlpack(x, q)
    assert y is x                                       # our own memory is itself


def test_native_command_and_interop_handle(prog):
    q = sycl.queue(in_order=True)
    x = sycl.malloc_shared(4, np.float32, q)
    seen = []

    def native(ih):
        seen.append((ih.get_backend(), ih.get_native_queue(), ih.get_native_mem(x), ih.ext_codeplay_has_graph()))
    e = q.ext_codeplay_enqueue_native_command(native)
    e.wait()
    q.submit(lambda h: h.host_task(lambda ih: seen.append(ih.get_native_device()))).wait()
    backend, stream, mem, in_graph = seen[0]
    assert mem == x.ptr and not in_graph
    if q.device.backend == "cuda":
        assert backend == "cuda" and stream == q._stream.value and seen[1] == q.device.ordinal
    else:
        assert backend == "native_cpu" and stream is None and seen[1] is None
    raises("invalid", lambda: q.ext_codeplay_enqueue_native_command(3), "expects a callable")


def test_native_command_is_a_graph_node(prog):
    q = sycl.queue(in_order=True)
    x = sycl.malloc_shared(4, np.float32, q)
    q.memset(x, 0, 16).wait()
    runs = []
    g = sycl.command_graph(q)
    a = g.add(lambda h: h.parallel_for(prog.kernel("scale"), 4, x, 2.0))
    n = g.add(lambda h: h.ext_codeplay_enqueue_native_command(lambda ih: runs.append(ih.get_native_queue())),
              depends_on=[a])
    assert n.get_type() == sycl.node_type.native_command
    ex = g.finalize()
    q.ext_oneapi_graph(ex).wait()
    q.ext_oneapi_graph(ex).wait()
    assert len(runs) >= 1


def test_struct_layouts_match_the_ctypes_structures():
    """``dlpack.ll`` writes and reads the structures natively: its types have
    ``dlpack.h``'s layout (the ``ctypes.Structure`` definitions), field by field."""
    import ctypes
    import pathlib

    from minisycl.passes.ir import new_context, parse_and_link
    from minisycl.runtime.engine import shared_machine
    text = (pathlib.Path(dlpack.__file__).parent / "dlpack.ll").read_text()
    ref = parse_and_link([text], new_context())
    data = shared_machine().target_data
    for ours, theirs in (("DLTensor", dlpack.DLTensor), ("DLManagedTensor", dlpack.DLManagedTensor),
                         ("DLManagedTensorVersioned", dlpack.DLManagedTensorVersioned)):
        ty = ref.get_struct_type(ours)
        assert data.get_abi_size(ty) == ctypes.sizeof(theirs), ours
        fields = [f for f in theirs._fields_ if ours != "DLTensor" or f[0] not in ("device", "dtype")]
        if ours == "DLTensor":          # (the device and the dtype are spelled out field by field in the IR)
            offsets = [data.get_element_offset(ty, i) for i in (0, 1, 3, 4, 7, 8, 9)]
            assert offsets == [theirs.data.offset, theirs.device.offset, theirs.ndim.offset, theirs.dtype.offset,
                               theirs.shape.offset, theirs.strides.offset, theirs.byte_offset.offset]
        elif ours == "DLManagedTensor":
            assert [data.get_element_offset(ty, i) for i in range(3)] == [getattr(theirs, f[0]).offset
                                                                          for f in fields]
        else:
            assert [data.get_element_offset(ty, i) for i in (0, 2, 3, 4, 5)] == [getattr(theirs, f[0]).offset
                                                                                for f in fields]
    assert ctypes.sizeof(dlpack.DLManagedTensor) == 64 and ctypes.sizeof(dlpack.DLManagedTensorVersioned) == 80
    x = sycl.malloc_shared(6, np.int16)
    for versioned in (None, (1, 0)):
        handle, address, device, dtype, count, read_only = dlpack.take(x.__dlpack__(max_version=versioned))
        assert (address, count, dtype, device, read_only) == (x.ptr, 6, np.dtype(np.int16), (1, 0), False)
        managed = (dlpack.DLManagedTensorVersioned if versioned else
                   dlpack.DLManagedTensor).from_address(dlpack.managed_address(handle))
        assert managed.dl_tensor.data == x.ptr and managed.dl_tensor.ndim == 1 and managed.dl_tensor.shape[0] == 6
        assert (managed.dl_tensor.dtype.code, managed.dl_tensor.dtype.bits, managed.dl_tensor.dtype.lanes) == (0, 16, 1)
        assert (managed.dl_tensor.device.device_type, managed.dl_tensor.device.device_id) == (1, 0)
        assert managed.dl_tensor.strides[0] == 1 and managed.dl_tensor.byte_offset == 0
        if versioned:
            assert (managed.version.major, managed.version.minor, managed.flags) == (1, 0, 0)
        dlpack.give_back(handle)
    # a type met before is looked up by the native take itself: six items, no Python on the way
    assert len(dlpack._take(x.__dlpack__(max_version=(1, 0)), dlpack._BY_KEY)) == 6


class _Odd:
    """An exporter whose interface is malformed in the way a test chooses."""

    def __init__(self, **attrs):
        for k, v in attrs.items():
            setattr(self, k, v)


@pytest.mark.parametrize("bad", [
    {"__dlpack_device__": lambda: "x", "__dlpack__": lambda **kw: None},
    {"__dlpack_device__": lambda: (1,), "__dlpack__": lambda **kw: None},
    {"__dlpack_device__": lambda: (1, 0), "__dlpack__": lambda **kw: 42},
    {"__cuda_array_interface__": {"shape": ("a",), "typestr": "<f4", "data": (0, False), "version": 3}},
    {"__cuda_array_interface__": {"shape": (4,), "typestr": "<q9", "data": (0, False), "version": 3}},
    {"__cuda_array_interface__": {"shape": (-4,), "typestr": "<f4", "data": (0, False), "version": 3}},
    {"__cuda_array_interface__": {"shape": (4,), "typestr": "<f4", "version": 3}},
    {"__cuda_array_interface__": 7},
])
def test_malformed_exporters_are_invalid(bad):
    q = sycl.queue()
    with pytest.raises(sycl.exception) as err:
        sycl.from_dlpack(_Odd(**bad), q)
    assert err.value.code() == sycl.errc.invalid, str(err.value)


def test_read_only_memory_goes_out_read_only():
    """Memory taken read-only is exported with the versioned capsule's read-only flag;
    the legacy capsule cannot say it, so it is refused there."""
    a = np.arange(4, dtype=np.float32)
    a.flags.writeable = False
    y = sycl.from_dlpack(a, sycl.queue(sycl.HOST_CPU))
    assert y.read_only
    back = np.from_dlpack(y)
    assert back.ctypes.data == a.ctypes.data and not back.flags.writeable
    raises("invalid", lambda: y.__dlpack__(), "read-only", "versioned")
    handle, _, _, _, _, read_only = dlpack.take(y.__dlpack__(max_version=(1, 0)))
    assert read_only
    dlpack.give_back(handle)


def test_a_consumer_may_release_an_export_from_another_thread_without_the_gil():
    """A consumer can call our deleter from any thread, holding the GIL or not (a
    ctypes ``CFUNCTYPE`` call lets it go): the deleter takes it to drop its reference."""
    import ctypes
    import threading
    x = sycl.malloc_shared(8, np.float32)
    gc.collect()
    before = dlpack.exports_alive()
    get = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_GetPointer",
                                                                                 ctypes.pythonapi))
    rename = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_SetName",
                                                                                ctypes.pythonapi))
    for versioned in (None, (1, 0)):
        cap = x.__dlpack__(max_version=versioned)
        name = b"dltensor_versioned" if versioned else b"dltensor"
        address = get(cap, name)
        assert rename(cap, b"used_" + name) == 0       # taken, as a consumer takes it
        managed = (dlpack.DLManagedTensorVersioned if versioned else dlpack.DLManagedTensor).from_address(address)
        deleter = dlpack._DELETER(managed.deleter)     # a CFUNCTYPE: called without the GIL
        del cap
        gc.collect()
        assert dlpack.exports_alive() == before + 1    # a taken capsule's end leaves the tensor alone
        worker = threading.Thread(target=deleter, args=(address,))
        worker.start()
        worker.join(timeout=30)
        assert not worker.is_alive()
        assert dlpack.exports_alive() == before


def test_the_native_half_links_against_registered_python_functions_only():
    """``dlpack.ll`` calls the Python C API through the addresses ``dlpack_native``
    registers (and libc's malloc/free): every function it declares is one of them."""
    import pathlib
    import re

    from minisycl.runtime import dlpack_native
    text = (pathlib.Path(dlpack.__file__).parent / "dlpack.ll").read_text()
    declared = set(re.findall(r"^declare [^@]*@([A-Za-z_][\w.]*)\(", text, re.M))
    assert declared - {"malloc", "free"} - {d for d in declared if d.startswith("llvm.")} == set(dlpack_native._API)
    assert {symbol for symbol, _ in dlpack_native._ENTRIES.values()} <= set(re.findall(r"^define ptr @(\w+)\(",
                                                                                        text, re.M))
