"""Issue 27 point 2: every object a user can hold keeps alive what it needs to
run, and no JIT code is freed while anything can reach it.

Each test takes an object (a kernel, a host function, a device_global handle,
an event, an executable graph, a USM allocation), drops the program and queue
references it came from, collects garbage and loads other programs (so freed
code would be overwritten by new code at the same addresses), then uses it.
"""
import gc

import numpy as np
import pytest

import minisycl.runtime as sycl
from minisycl.postlink.build import build

HOST = """
int twice(int x) { return 2 * x; }
kernel fill(id<1> i, int* out, int v) { out[i] = twice(v) + (int)i; }
"""

SHAPES = """
class Shape { float side; virtual float area() [[indirectly_callable]] { return 0.0f; } };
class Square : Shape { float area() override [[indirectly_callable]] { return side * side; } };
kernel make(Shape* s) { new ((Square*)s) Square(); s->side = 3.0f; }
kernel areas(Shape* s, float* out) [[calls_indirectly]] { out[0] = s->area(); }
void make_on_host(Shape* s) { new ((Square*)s) Square(); s->side = 4.0f; }
float area_on_host(Shape* s) { return s->area(); }
"""

COUNTER = """
device_global<int> counter = 5;
kernel bump(int* out) { counter = counter + 1; out[0] = counter; }
"""

#: a class whose vtables come first in a program's data, so the same classes sit elsewhere
PADDING = """
class Pad { int x; virtual float first() { return -1.0f; } virtual float second() { return -2.0f; } };
class Pad2 : Pad { float first() override { return -3.0f; } };
void make_pad(Pad* p) { new ((Pad2*)p) Pad2(); }
"""

#: other code, loaded between dropping a program and using what was taken from it
CHURN = """
float poly(float x) { return ((x * 3.0f + 2.0f) * x - 7.0f) * x + 1.0f; }
kernel churn(id<1> i, float* x) { x[i] = poly(x[i]) + poly(x[i] + 1.0f); }
int mix(int a, int b) { return (a * 31) ^ (b + 17); }
"""


@pytest.fixture
def bundle(tmp_path):
    def make(name, source):
        path = tmp_path / f"{name}.ksl"
        path.write_text(source)
        out = tmp_path / f"{name}.bundle"
        out.write_bytes(build([str(path)])[0].to_bytes())
        return str(out)
    return make


def _churn(path, q, rounds=8):
    """Load, run and drop other programs, so that freed code would be reused."""
    x = sycl.malloc_shared(64, np.float32, q)
    for _ in range(rounds):
        p = sycl.load_bundle(path)
        q.parallel_for(p.kernel("churn"), 64, x).wait()
        assert p.host_function("mix")(1, 2) == (31 ^ 19)
        del p
        gc.collect()


def test_host_function_outlives_its_program(bundle):
    path, churn = bundle("host", HOST), bundle("churn", CHURN)
    q = sycl.queue()
    twice = sycl.load_bundle(path).host_function("twice")
    gc.collect()
    _churn(churn, q)
    for _ in range(5):                      # repeated reloads of the same bundle, each dropped
        assert sycl.load_bundle(path).host_function("twice")(4) == 8
        gc.collect()
    assert twice(21) == 42


def test_kernel_outlives_program_and_queue(bundle):
    path, churn = bundle("host", HOST), bundle("churn", CHURN)
    q = sycl.queue()
    out = sycl.malloc_shared(4, np.int32, q)
    k = sycl.load_bundle(path).kernel("fill")
    q.parallel_for(k, 4, out, 1).wait()
    del q
    gc.collect()
    q = sycl.queue()
    _churn(churn, q)
    q.parallel_for(k, 4, out, 3).wait()
    assert np.asarray(out).tolist() == [6, 7, 8, 9]


def test_virtual_calls_through_objects_a_dropped_program_built(bundle):
    """A kernel writes its vtable's address into USM memory; the program is
    dropped, other code is loaded, and a reload of the bundle calls through
    the object: the first program's vtable and code must still be there."""
    path, churn = bundle("shapes", SHAPES), bundle("churn", CHURN)
    q = sycl.queue()
    obj = sycl.malloc_shared(4, np.int64, q)
    out = sycl.malloc_shared(1, np.float32, q)
    q.single_task(sycl.load_bundle(path).kernel("make"), obj).wait()
    gc.collect()
    _churn(churn, q)
    for _ in range(3):
        q.single_task(sycl.load_bundle(path).kernel("areas"), obj, out).wait()
        gc.collect()
        assert out[0] == 9.0


def test_virtual_calls_through_objects_a_dropped_host_module_built(bundle):
    """The same through host functions: the host module's vtables stay (the
    object is used by another program, whose code is laid out differently)."""
    path, churn = bundle("shapes", SHAPES), bundle("churn", CHURN)
    other = bundle("other", PADDING + SHAPES)
    q = sycl.queue()
    obj = sycl.malloc_shared(4, np.int64, q)
    sycl.load_bundle(path).host_function("make_on_host")(obj)
    gc.collect()
    _churn(churn, q)
    for _ in range(3):
        assert sycl.load_bundle(other).host_function("area_on_host")(obj) == 16.0
        gc.collect()


def test_device_global_handle_event_and_graph_outlive_their_program(bundle):
    path, churn = bundle("counter", COUNTER), bundle("churn", CHURN)
    q = sycl.queue()
    out = sycl.malloc_shared(1, np.int32, q)
    prog = sycl.load_bundle(path)
    handle = prog.device_global("counter")
    bump = prog.kernel("bump")
    g = sycl.command_graph(q)
    g.begin_recording(q)
    q.single_task(bump, out)
    g.end_recording(q)
    ex = g.finalize()
    ev = q.single_task(bump, out)
    del prog, bump, g, q
    gc.collect()
    q = sycl.queue()
    _churn(churn, q)
    ev.wait()
    q.ext_oneapi_graph(ex).wait()
    q.ext_oneapi_graph(ex).wait()
    assert out[0] == 8
    value = np.zeros(1, np.int32)
    q.copy(handle, value).wait()
    assert value[0] == 8


def test_usm_allocation_outlives_its_queue():
    q = sycl.queue()
    a = sycl.malloc_shared(16, np.int32, q)
    a[:] = np.arange(16)
    del q
    gc.collect()
    q = sycl.queue()
    b = sycl.malloc_device(16, np.int32, q)
    q.copy(a, b).wait()
    back = np.zeros(16, np.int32)
    q.copy(b, back).wait()
    assert back.tolist() == list(range(16))
    sycl.free(a, q)
    sycl.free(b, q)
