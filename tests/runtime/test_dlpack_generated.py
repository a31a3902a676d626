"""Generated DLPack capsules, well-formed and not (the kind: "an exporter's tensor
we cannot use"): any device type, element type (code, bits, lanes), dimension
count, shape (huge ones too, or none), strides, byte offset, flags, version and
capsule name.  Importing
one either gives an allocation of exactly its bytes or raises ``errc::invalid``;
never another exception, never a crash; the producer's deleter runs exactly once
either way (when the import is released or refused) and never for a capsule that
was not taken.  And generated sequences of exports of our memory, taken by NumPy,
by us or by no one, released in any order around ``free``: the memory outlives
every consumer and every deleter runs once.  ``MINISYCL_FUZZ_EXAMPLES`` sets the
count."""
import ctypes
import gc
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from minisycl import runtime as sycl
from minisycl.passes.support import knobs
from minisycl.runtime import dlpack

EXAMPLES = knobs.fuzz_examples(150)
_QUEUE = sycl.queue(sycl.HOST_CPU)
_deleted: list[int] = []


@dlpack._DELETER
def _count_deleter(address):
    _deleted.append(address)


_new = ctypes.pythonapi.PyCapsule_New
_new.restype, _new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_NAMES = {"legacy": b"dltensor", "versioned": b"dltensor_versioned", "used": b"used_dltensor", "other": b"other"}


class Exporter:
    """An exporter handing out one generated capsule (its memory: a NumPy buffer)."""

    def __init__(self, spec):
        self.spec = spec
        ndim = len(spec["shape"])
        self.data = np.zeros(4096, np.uint8)
        self.shape = (ctypes.c_int64 * max(ndim, 1))(*spec["shape"])
        self.strides = (ctypes.c_int64 * max(ndim, 1))(*spec["strides"]) if spec["strides"] is not None else None
        kind = spec["kind"]
        self.managed = dlpack.DLManagedTensorVersioned() if kind == "versioned" else dlpack.DLManagedTensor()
        t = self.managed.dl_tensor
        t.data, t.ndim, t.byte_offset = self.data.ctypes.data, spec["ndim"], spec["offset"]
        t.device.device_type, t.device.device_id = spec["device"]
        t.dtype.code, t.dtype.bits, t.dtype.lanes = spec["dtype"]
        if not spec["no_shape"]:
            t.shape = self.shape
        if self.strides is not None:
            t.strides = self.strides
        self.managed.deleter = ctypes.cast(_count_deleter, ctypes.c_void_p).value
        if kind == "versioned":
            self.managed.version.major, self.managed.version.minor = spec["version"], 0
            self.managed.flags = spec["flags"]
        self.address = ctypes.addressof(self.managed)
        self.name = _NAMES[kind] if kind != "versioned" else _NAMES["versioned"]
        if spec["name"] != "right":
            self.name = _NAMES[spec["name"]]

    def __dlpack_device__(self):
        return self.spec["claimed_device"]

    def __dlpack__(self, stream=None, max_version=None, **kw):
        return _new(self.address, self.name, None)     # no destructor: the test counts the deleter


devices = st.sampled_from([(1, 0), (2, 0), (3, 0), (13, 0), (4, 0), (1, 3), (99, 0)])
dtypes = st.tuples(st.integers(0, 8), st.sampled_from([0, 1, 7, 8, 16, 32, 64, 128, 255]), st.integers(0, 4))
shapes = st.lists(st.one_of(st.integers(-2, 6), st.sampled_from([1 << 40, 1 << 62])), max_size=4)


@st.composite
def specs(draw):
    shape = draw(shapes)
    device = draw(devices)
    return {"kind": draw(st.sampled_from(["legacy", "versioned"])), "device": device,
            "claimed_device": draw(st.sampled_from([device, device, (1, 0), (2, 0)])),
            "dtype": draw(dtypes), "shape": shape, "ndim": draw(st.sampled_from([len(shape)] * 3 + [-1, 70])),
            "strides": draw(st.one_of(st.none(), st.lists(st.integers(-3, 40), min_size=len(shape),
                                                          max_size=len(shape)))),
            "offset": draw(st.sampled_from([0, 0, 8, 64])), "flags": draw(st.sampled_from([0, 1, 2])),
            "version": draw(st.sampled_from([1, 1, 1, 0, 2])),
            "name": draw(st.sampled_from(["right"] * 6 + ["used", "other"])),
            "no_shape": draw(st.sampled_from([False] * 5 + [True]))}


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None)
@given(specs())
def test_generated_capsules_import_or_are_invalid(spec):
    ndim = spec["ndim"]
    if ndim > len(spec["shape"]) or ndim < 0 and ndim != -1:
        spec = dict(spec, ndim=len(spec["shape"]))       # (the shape array must hold ndim values)
    q = _QUEUE
    e = Exporter(spec)
    _deleted.clear()
    try:
        x = sycl.from_dlpack(e, q)
    except sycl.exception as err:
        assert err.code() == sycl.errc.invalid, str(err)
        taken = spec["name"] == "right" and spec["claimed_device"][0] in (1, 3, 13) and \
            (spec["kind"] == "legacy" or spec["version"] == 1)
        assert _deleted == ([e.address] if taken else []), (spec, str(err))
        return
    # it worked: exactly the producer's bytes, as NumPy would read them
    shape = spec["shape"][:spec["ndim"]]
    assert x.ptr == e.data.ctypes.data + spec["offset"]
    assert x.count == math.prod(shape) < 1 << 63 and min(shape or [0]) >= 0
    assert not (spec["no_shape"] and shape)             # (a tensor of dimensions needs its shape array)
    code, bits, lanes = spec["dtype"]
    assert lanes == 1 and x.dtype.itemsize * 8 == bits and x.dtype.kind == "iufcb"[[0, 1, 2, 5, 6].index(code)]
    assert x.read_only == bool(spec["kind"] == "versioned" and spec["flags"] & 1)
    assert _deleted == []
    sycl.free(x)
    assert _deleted == [e.address]


class _Holder:
    """An exporter of one capsule already made (how a consumer would be handed it)."""

    def __init__(self, cap):
        self.cap = cap

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, **kw):
        return self.cap


#: what a step does: export from allocation 0 or 1 (consumed by NumPy, by us, or left
#: unconsumed), drop one of the things held, or free an allocation
steps = st.lists(st.tuples(st.sampled_from(["numpy", "ours", "capsule", "drop", "free"]), st.integers(0, 1),
                           st.booleans(), st.integers(0, 7)), max_size=12)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None)
@given(steps, st.sampled_from([np.int8, np.uint16, np.float32, np.float64, np.complex64, np.bool_]))
def test_generated_exports_keep_memory_until_the_last_consumer_lets_go(plan, dtype):
    """Exports (legacy and versioned) taken by NumPy, by our own import, or never
    taken, released in any order, the allocation freed in between: every view reads
    the allocation's bytes while it lives, an export of a freed allocation is
    ``errc::invalid``, and once all is dropped every deleter has run exactly once
    (``exports_alive`` back where it was)."""
    gc.collect()
    before = dlpack.exports_alive()
    q = _QUEUE
    allocations = [sycl.malloc_shared(16, dtype, q) for _ in range(2)]
    for i, x in enumerate(allocations):
        np.asarray(x)[:] = (np.arange(16) + 16 * i).astype(dtype)
    expect = [np.asarray(x).copy() for x in allocations]
    held = []
    for action, which, versioned, pick in plan:
        x = allocations[which]
        if action == "drop":
            if held:
                held.pop(pick % len(held))
            continue
        if action == "free":
            if not x.freed:
                sycl.free(x)
            continue
        if x.freed:
            with pytest.raises(sycl.exception) as err:
                x.__dlpack__(max_version=(1, 0) if versioned else None)
            assert err.value.code() == sycl.errc.invalid and "freed" in str(err.value)
            continue
        cap = x.__dlpack__(max_version=(1, 0) if versioned else None)
        if action == "numpy":
            view = np.from_dlpack(_Holder(cap))
            assert view.ctypes.data == x.ptr and view.dtype == np.dtype(dtype)
            held.append((view, which))
        elif action == "ours":
            y = sycl.from_dlpack(_Holder(cap), q)
            assert y.ptr == x.ptr and y.count == 16 and y.dtype == np.dtype(dtype)
            held.append((y, which))
        else:
            held.append((cap, which))
        del cap
        assert dlpack.exports_alive() >= before + 1
    for thing, which in held:               # still mapped, whether freed or not
        if not isinstance(thing, _CAPSULE):
            assert np.array_equal(np.asarray(thing), expect[which])
    held.clear()
    view = y = thing = None                 # noqa: F841 - (the last of each, still referenced here)
    gc.collect()
    assert dlpack.exports_alive() == before


_CAPSULE = type(_new(1, None, None))
