"""device_global end to end: the scenarios of sycl_ext_oneapi_device_global's examples (issue 6)."""
import numpy as np
import pytest

from minisycl import runtime as sycl
from minisycl.postlink.build import build

SRC = """
struct Pair { int a; float b; };
class Counter { static device_global<long> total; };
device_global<int[4]> arr = {1, 2, 3, 4};
device_global<Pair> pair;
device_global<int> plain;
device_global<int> unused_plain;
device_global<float> ro [[host_access(read)]] = 1.5f;
device_global<float> wo [[host_access(write)]];
device_global<float> no_access [[host_access(none)]];
static device_global<int> scoped [[device_image_scope]] = 7;

kernel write42() { plain = 42; arr[0] = 42; }
kernel read_plain(int* out) { out[0] = plain; out[1] = arr[0]; out[2] = arr[3]; }
kernel ops(int* out) {
  arr[1] += 10;                     // compound assignment through operator[]
  pair.a = arr[1] * 2;              // member access
  pair.b = 0.5f;
  int* p = arr.get();               // get()
  out[0] = p[1] + pair.a;
  atomic_fetch_add(&plain, 1);      // &dg for atomics
  out[1] = plain;
}
kernel bump_total(id<1> i) { atomic_fetch_add(&Counter::total, (long)1); }
kernel read_total(long* out) { out[0] = Counter::total; }
kernel bump_scoped(int* out) { scoped = scoped + 1; out[0] = scoped; }
kernel read_ro(float* out) { out[0] = ro + wo + no_access; }
"""


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("dg")
    (d / "dg.ksl").write_text(SRC)
    bundle, _ = build([str(d / "dg.ksl")], split="kernel")
    return sycl.program(bundle, "dg")


@pytest.fixture(autouse=True)
def fresh_context(monkeypatch):
    """Each test gets its own context, so device-global storage starts afresh
    (it belongs to a (device, context) pair)."""
    contexts = {}
    for cls in {sycl.queue, type(sycl.queue())}:       # (the device's own queue class: a GPU's)
        def init(self, dev=None, _real=cls.__init__, **kw):
            _real(self, dev, **kw)
            if "context" not in kw:
                self.context = contexts.setdefault(self.device.name, sycl.context(self.device))
        monkeypatch.setattr(cls, "__init__", init)


def run(q, prog, name, *args, n=None):
    k = prog.kernel(name)
    e = q.parallel_for(k, n, *args) if n else q.single_task(k, *args)
    e.wait()
    return e


def test_persistence_across_kernels_and_images(prog):
    q = sycl.queue()
    out = sycl.malloc_shared(4, np.int32, q)
    run(q, prog, "write42")              # split=kernel: each kernel is its own image
    run(q, prog, "read_plain", out)
    assert np.asarray(out)[:3].tolist() == [42, 42, 4]
    run(q, prog, "bump_scoped", out)
    run(q, prog, "bump_scoped", out)
    assert out[0] == 9                   # image scope: initialised once (7), then persists


def test_constant_initialisers_and_static_members(prog):
    q = sycl.queue()
    total = sycl.malloc_shared(1, np.int64, q)
    run(q, prog, "bump_total", n=1000)
    run(q, prog, "read_total", total)
    assert total[0] == 1000
    a = np.zeros(4, np.int32)
    q.copy(prog.device_global("arr"), a).wait()
    assert a.tolist() == [1, 2, 3, 4]


def test_operators(prog):
    q = sycl.queue()
    out = sycl.malloc_shared(2, np.int32, q)
    run(q, prog, "ops", out)
    assert out[0] == 12 + 24 and out[1] == 1
    p = np.zeros(2, np.float32)
    q.memcpy(p, prog.device_global("pair"), 8).wait()       # struct: raw bytes
    assert p.view(np.int32)[0] == 24 and p[1] == 0.5


def test_unused_global_reads_zero_then_round_trips(prog):
    q = sycl.queue()
    dg = prog.device_global("unused_plain")
    v = np.full(1, 9, np.int32)
    q.copy(dg, v).wait()
    assert v[0] == 0
    q.copy(np.array([123], np.int32), dg).wait()
    q.copy(dg, v).wait()
    assert v[0] == 123


def test_copy_before_first_use_full_and_partial(prog):
    q = sycl.queue()
    arr = prog.device_global("arr")
    q.copy(np.array([70, 80], np.int32), arr, 2, start_index=2).wait()     # partial, with an offset
    out = sycl.malloc_shared(4, np.int32, q)
    run(q, prog, "read_plain", out)                                  # the kernel sees the copy
    assert out[2] == 80 and out[1] == 1                              # arr[0] (1) untouched
    host = np.zeros(4, np.int32)
    q.copy(arr, host).wait()
    assert host.tolist() == [1, 2, 70, 80]
    e = q.memcpy(arr, np.array([5], np.int32), 4, offset=4)          # memcpy with offset, returns an event
    e.wait()
    q.memcpy(host, arr).wait()
    assert host.tolist() == [1, 5, 70, 80]


def test_image_scope_copies(prog):
    q = sycl.queue()
    scoped = prog.device_global("scoped")
    v = np.zeros(1, np.int32)
    q.copy(scoped, v).wait()                        # before any kernel: the initial value
    assert v[0] == 7
    q.copy(np.array([100], np.int32), scoped).wait()
    out = sycl.malloc_shared(1, np.int32, q)
    run(q, prog, "bump_scoped", out)
    assert out[0] == 101
    q.copy(scoped, v).wait()
    assert v[0] == 101


@pytest.mark.parametrize("call,text", [
    (lambda q, p: q.copy(np.zeros(5, np.int32), p.device_global("arr"), 5), "Copy to device_global is out of bounds."),
    (lambda q, p: q.copy(p.device_global("arr"), np.zeros(4, np.int32), 2, 3), "Copy from device_global is out of bounds."),
    (lambda q, p: q.memcpy(p.device_global("plain"), np.zeros(2, np.int32), 4, 2), "Copy to device_global is out of bounds."),
    (lambda q, p: q.copy(np.zeros(1, np.float32), p.device_global("ro")), "host_access(read) and cannot be written"),
    (lambda q, p: q.copy(p.device_global("wo"), np.zeros(1, np.float32)), "host_access(write) and cannot be read"),
    (lambda q, p: q.copy(p.device_global("no_access"), np.zeros(1, np.float32)), "host_access(none) and cannot be read"),
    (lambda q, p: q.copy(np.zeros(1, np.float32), p.device_global("no_access")), "host_access(none) and cannot be written"),
    (lambda q, p: p.device_global("nope"), "no device_global named 'nope'"),
])
def test_errors(prog, call, text):
    q = sycl.queue()
    with pytest.raises(sycl.exception) as err:
        call(q, prog)
    assert err.value.code() == sycl.errc.invalid and text in str(err.value)
    v = np.zeros(1, np.float32)
    q.copy(prog.device_global("ro"), v).wait()          # the queue still works
    assert v[0] == 1.5


def test_two_devices_have_independent_instances(prog):
    cpu, pvc = sycl.queue("minisycl_cpu"), sycl.queue("intel_gpu_pvc")
    dg = prog.device_global("plain")
    cpu.copy(np.array([1], np.int32), dg)
    pvc.copy(np.array([2], np.int32), dg)
    a, b = np.zeros(1, np.int32), np.zeros(1, np.int32)
    cpu.copy(dg, a)
    pvc.copy(dg, b)
    assert (a[0], b[0]) == (1, 2)


def test_sycl_external_across_files_and_image_scope_in_two_images(tmp_path):
    (tmp_path / "lib.ksl").write_text("SYCL_EXTERNAL device_global<int> shared = 3;\n"
                                      "SYCL_EXTERNAL device_global<int> solo [[device_image_scope]];\n"
                                      "kernel touch(int* o) { o[0] = solo; }\n")
    (tmp_path / "app.ksl").write_text("SYCL_EXTERNAL extern device_global<int> shared;\n"
                                      "kernel twice(int* o) { shared = shared * 2; o[0] = shared; }\n")
    bundle, _ = build([str(tmp_path / "app.ksl"), str(tmp_path / "lib.ksl")])
    prog = sycl.program(bundle, "app")
    q = sycl.queue()
    o = sycl.malloc_shared(1, np.int32, q)
    q.single_task(prog.kernel("twice"), o).wait()
    assert o[0] == 6
    # the same image-scope variable in images of two bundles: which one would a copy mean?
    lib, _ = build([str(tmp_path / "lib.ksl")])
    both = sycl.program([bundle, lib], "app+lib")
    with pytest.raises(sycl.exception) as err:
        q.copy(np.zeros(1, np.int32), both.device_global("solo")).wait()
    assert err.value.code() == sycl.errc.invalid
    assert str(err.value) == "More than one image exists with the device_global."


def test_image_scope_global_no_kernel_uses(tmp_path):
    (tmp_path / "u.ksl").write_text("static device_global<int> lonely [[device_image_scope]];\n"
                                    "SYCL_EXTERNAL int peek() { return lonely; }\n"
                                    "kernel other(int* o) { o[0] = 1; }\n")
    prog = sycl.program(build([str(tmp_path / "u.ksl")], split="source")[0], "u")
    q, dg, host = sycl.queue(), prog.device_global("lonely"), np.zeros(1, np.int32)
    # the spec: copy and memcpy, either way, throw errc::kernel_not_supported when
    # no kernel of the image holding a device_image_scope variable accesses it
    for op in (lambda: q.copy(host, dg), lambda: q.copy(dg, host), lambda: q.memcpy(dg, host, 4),
               lambda: q.memcpy(host, dg, 4)):
        with pytest.raises(sycl.exception) as err:
            op()
        assert err.value.code() == sycl.errc.kernel_not_supported


def test_two_contexts_on_one_device_are_independent(prog):
    dev = sycl.default_device()
    q1, q2 = sycl.queue(dev, context=sycl.context(dev)), sycl.queue(dev, context=sycl.context(dev))
    out = sycl.malloc_shared(4, np.int32, q1)
    run(q1, prog, "write42")
    run(q1, prog, "read_plain", out)
    assert out[0] == 42
    run(q2, prog, "read_plain", out)            # same program images, other context: fresh storage
    assert out[0] == 0


def test_init_mode_and_csr_reach_the_bundle(tmp_path):
    (tmp_path / "f.ksl").write_text("device_global<int> f [[init_mode(reset), implement_in_csr(true)]];\n"
                                    "kernel k(int* o) { o[0] = f; }\n")
    bundle, _ = build([str(tmp_path / "f.ksl")])
    info = next(iter(bundle.device_globals.values()))
    assert info["init_mode"] == "1" and info["implement_in_csr"] == "true"
    prog = sycl.program(bundle, "f")
    o = sycl.malloc_shared(1, np.int32, sycl.queue())
    sycl.queue().single_task(prog.kernel("k"), o).wait()       # no effect on these devices
    assert o[0] == 0


def test_copy_to_device_global_in_a_graph_node_is_invalid(prog):
    q = sycl.queue()
    graph = sycl.command_graph(q.context, q.device)
    with pytest.raises(sycl.exception) as err:
        graph.add(lambda h: h.copy(np.zeros(1, np.int32), prog.device_global("plain")))
    assert err.value.code() == sycl.errc.invalid
    with graph.recording(q), pytest.raises(sycl.exception) as err:     # record & replay too
        q.memcpy(prog.device_global("plain"), np.zeros(1, np.int32))
    assert err.value.code() == sycl.errc.invalid


def test_handler_forms_and_dependencies(prog):
    q = sycl.queue()
    arr = prog.device_global("arr")
    src = sycl.malloc_shared(4, np.int32, q)                 # USM as the source this time
    e1 = q.fill(src, 9, 4)
    e2 = q.submit(lambda h: (h.depends_on(e1), h.copy(src, arr, 4)))
    dst = np.zeros(4, np.int32)
    q.submit(lambda h: (h.depends_on([e2]), h.memcpy(dst, arr, 16, 0))).wait()
    assert dst.tolist() == [9, 9, 9, 9]


def test_programs_sharing_a_name_must_agree_on_its_size(tmp_path):
    """Two bundles in one context share the storage of an external device_global
    of the same name (one definition per name); a program whose definition is
    larger than the storage a program before it made is refused instead of
    writing past it."""
    small, large = tmp_path / "small.ksl", tmp_path / "large.ksl"
    small.write_text("device_global<int> odr_shared = 5;\nkernel put_small(int* out) { out[0] = odr_shared; }\n")
    large.write_text("device_global<long> odr_shared;\nkernel put_large(long* out) { odr_shared = 1; out[0] = odr_shared; }\n")
    q = sycl.queue()
    out, wide = sycl.malloc_shared(1, np.int32, q), sycl.malloc_shared(1, np.int64, q)
    q.single_task(sycl.build_program(small).kernel("put_small"), out).wait()
    with pytest.raises(sycl.exception) as err:
        q.single_task(sycl.build_program(large).kernel("put_large"), wide).wait()
    assert err.value.code() == sycl.errc.invalid
    assert "odr_shared" in str(err.value) and "8 bytes" in str(err.value) and "4 bytes" in str(err.value)
    q.single_task(sycl.build_program(small).kernel("put_small"), out).wait()    # the same definition again: fine


def test_zero_initialised_globals_store_no_bytes_and_read_zero(tmp_path):
    """A zero-initialised device_global puts no bytes in the bundle (64 MB of
    zeros would otherwise be 128 MB of hex in its header), and the runtime
    still starts it at zero, on first use by a kernel and by a copy; a
    non-zero initialiser is still stored."""
    n = 1 << 24
    (tmp_path / "z.ksl").write_text(
        f"device_global<int[{n}]> big;\ndevice_global<long> zero = 0;\ndevice_global<int> seven = 7;\n"
        "kernel read(int* out) { out[0] = big[0] + big[16777215]; out[1] = (int)zero; out[2] = seven; big[5] = 3; }\n")
    bundle, _ = build([str(tmp_path / "z.ksl")])
    path = tmp_path / "z.bundle"
    path.write_bytes(bundle.to_bytes())
    assert path.stat().st_size < 1 << 20
    infos = {g["name"]: g for g in bundle.device_globals.values()}
    assert infos["big"]["init"] == "" and infos["zero"]["init"] == ""
    assert bytes.fromhex(infos["seven"]["init"]) == (7).to_bytes(4, "little")
    prog = sycl.load_bundle(str(path))
    q = sycl.queue()
    out = sycl.malloc_shared(3, np.int32, q)
    out[:] = 99
    run(q, prog, "read", out).wait()
    assert list(out) == [0, 0, 7]
    v = np.full(8, 9, np.int32)
    q.copy(prog.device_global("big"), v, count=8).wait()
    assert list(v) == [0, 0, 0, 0, 0, 3, 0, 0]
