"""USM operations check their arguments before anything runs (issue 17 point 3,
issue 18 point 16): every bad size, count, offset, value or address of
``memcpy``/``memset``/``fill``/``copy``/``prefetch``/``mem_advise`` is
``errc::invalid`` — submitted eagerly through the queue or a handler, added to
a graph or recorded into one — and leaves the queue, the graph and the memory
as they were.  An executable graph whose memory was freed refuses to replay
before any of its nodes runs."""
import numpy as np
import pytest

from minisycl import runtime as sycl

KSL = "kernel fillv(id<1> i, int* x, int v) { x[i] = v; }\n"


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("u")
    (d / "u.ksl").write_text(KSL)
    return sycl.build_program(str(d / "u.ksl"))


@pytest.fixture
def mem():
    """Two int32 allocations of 8 and 4 elements and a float one, with known contents."""
    q = sycl.queue()
    a, b, f = sycl.malloc_shared(8, np.int32, q), sycl.malloc_shared(4, np.int32, q), sycl.malloc_shared(8, np.float32, q)
    np.asarray(a)[:] = np.arange(8)
    np.asarray(b)[:] = [10, 11, 12, 13]
    np.asarray(f)[:] = 0.5
    return {"a": a, "b": b, "f": f}


def outside_usm():
    """An address that no USM allocation holds: a NumPy array's."""
    return np.zeros(64, np.uint8).ctypes.data


#: (name, command on a handler given the memory, words the message must hold)
BAD = [
    ("memcpy-negative-size", lambda h, m: h.memcpy(m["a"], m["b"], -4), "memcpy size must be at least 0"),
    ("memcpy-size-not-an-int", lambda h, m: h.memcpy(m["a"], m["b"], "4"), "memcpy size must be an integer"),
    ("memcpy-float-size", lambda h, m: h.memcpy(m["a"], m["b"], 4.0), "memcpy size must be an integer"),
    ("memcpy-to-address-0", lambda h, m: h.memcpy(0, m["b"], 4), "address 0x0 is not inside a USM allocation"),
    ("memcpy-from-address-0", lambda h, m: h.memcpy(m["a"], 0, 4), "address 0x0 is not inside a USM allocation"),
    ("memcpy-to-non-usm-address", lambda h, m: h.memcpy(outside_usm(), m["b"], 4), "is not inside a USM allocation"),
    ("memcpy-past-an-inner-address", lambda h, m: h.memcpy(m["a"].ptr + 20, m["b"], 16),
     "overruns its 32-byte USM allocation (12 bytes left)"),
    ("memcpy-overrun", lambda h, m: h.memcpy(m["b"], m["a"], 32), "overruns a 16-byte USM allocation"),
    ("memcpy-offset-without-device-global", lambda h, m: h.memcpy(m["a"], m["b"], 4, 4),
     "offset only to or from a device_global"),
    ("memcpy-into-read-only-array", lambda h, m: h.memcpy(np.frombuffer(bytes(16), np.int32), m["b"], 16),
     "read-only"),
    ("memcpy-not-memory", lambda h, m: h.memcpy("a", m["b"], 4), "expects a USM allocation"),
    ("memset-negative-size", lambda h, m: h.memset(m["a"], 0, -1), "memset size must be at least 0"),
    ("memset-overrun", lambda h, m: h.memset(m["b"], 0, 17), "overruns a 16-byte USM allocation"),
    ("memset-value-too-big", lambda h, m: h.memset(m["a"], 1 << 40, 4), "memset value must be at most"),
    ("memset-to-address-0", lambda h, m: h.memset(0, 0, 1), "address 0x0"),
    ("fill-past-the-end", lambda h, m: h.fill(m["a"], 1, 9), "fill of 9 elements overruns memory of 8 elements"),
    ("fill-negative-count", lambda h, m: h.fill(m["a"], 1, -1), "fill count must be at least 0"),
    ("fill-pattern-too-big", lambda h, m: h.fill(m["a"], 1 << 40, 2), "does not fit"),
    ("fill-pattern-not-a-number", lambda h, m: h.fill(m["a"], "x", 2), "must be an integer"),
    ("fill-float-pattern-out-of-range", lambda h, m: h.fill(m["f"], 1e300, 2), "beyond the range"),
    ("fill-an-address", lambda h, m: h.fill(m["a"].ptr, 1, 2), "not an address"),
    ("copy-different-sizes", lambda h, m: h.copy(m["a"], m["b"]), "different sizes (8 and 4 elements)"),
    ("copy-count-past-destination", lambda h, m: h.copy(m["a"], m["b"], 8), "overruns its destination of 4"),
    ("copy-count-past-source", lambda h, m: h.copy(m["b"], m["a"], 5), "overruns its source of 4"),
    ("copy-negative-count", lambda h, m: h.copy(m["a"], m["b"], -1), "copy count must be at least 0"),
    ("copy-element-types-differ", lambda h, m: h.copy(m["a"], m["f"], 4), "element types must match"),
    ("copy-numpy-size-mismatch", lambda h, m: h.copy(np.zeros(3, np.int32), m["b"]), "different sizes"),
    ("copy-start-index-without-device-global", lambda h, m: h.copy(m["a"], m["b"], 2, 1), "start index"),
    ("prefetch-negative", lambda h, m: h.prefetch(m["a"], -1), "prefetch size must be at least 0"),
    ("prefetch-overrun", lambda h, m: h.prefetch(m["a"], 33), "overruns a 32-byte USM allocation"),
    ("mem-advise-negative", lambda h, m: h.mem_advise(m["a"], -8), "mem_advise size must be at least 0"),
    ("mem-advise-advice-not-int", lambda h, m: h.mem_advise(m["a"], 8, "x"), "advice must be an integer"),
]


def contents(m):
    return {k: np.asarray(v).copy() for k, v in m.items()}


def refused(fn, words):
    with pytest.raises(sycl.exception) as err:
        fn()
    assert err.value.code() == sycl.errc.invalid, err.value
    assert words in str(err.value), str(err.value)


@pytest.mark.parametrize("name, bad, words", BAD, ids=[b[0] for b in BAD])
def test_refused_eagerly_through_a_handler(mem, name, bad, words):
    q = sycl.queue()
    before = contents(mem)
    refused(lambda: q.submit(lambda h: bad(h, mem)), words)
    after = contents(mem)
    assert all((before[k] == after[k]).all() for k in mem)
    q.memcpy(mem["a"], mem["b"], 16).wait()             # the queue still works
    assert list(mem["a"][:4]) == [10, 11, 12, 13]


@pytest.mark.parametrize("name, bad, words", BAD, ids=[b[0] for b in BAD])
def test_refused_when_added_to_a_graph(mem, name, bad, words):
    q = sycl.queue()
    g = sycl.command_graph(q)
    first = g.add(lambda h: h.memset(mem["b"], 0, 4))
    refused(lambda: g.add(bad_cgf(bad, mem), depends_on=[first]), words)
    assert g.get_nodes() == [first] and first.get_successors() == []
    q.ext_oneapi_graph(g.finalize()).wait()              # the graph still finalizes and runs
    assert list(mem["b"]) == [0, 11, 12, 13]


@pytest.mark.parametrize("name, bad, words", BAD, ids=[b[0] for b in BAD])
def test_refused_when_recorded(mem, name, bad, words):
    q = sycl.queue(in_order=True)
    g = sycl.command_graph(q)
    g.begin_recording(q)
    q.memset(mem["b"], 0, 4)
    refused(lambda: q.submit(bad_cgf(bad, mem)), words)
    assert q.ext_oneapi_get_state() == "recording" and len(g.get_nodes()) == 1
    q.memset(mem["b"], 0, 8)                             # recording goes on, chained to the first node
    g.end_recording(q)
    assert [len(n.get_predecessors()) for n in g.get_nodes()] == [0, 1]
    assert list(mem["b"]) == [10, 11, 12, 13]            # recording ran nothing
    q.ext_oneapi_graph(g.finalize()).wait()
    assert list(mem["b"]) == [0, 0, 12, 13]


def bad_cgf(bad, mem):
    return lambda h: bad(h, mem)


def test_the_queue_shortcuts_check_too(mem):
    """The cases of issue 18 point 16, through ``queue`` itself."""
    q = sycl.queue()
    before = contents(mem)
    refused(lambda: q.copy(mem["a"], mem["b"]), "different sizes")
    refused(lambda: q.fill(mem["b"], 7, 5), "overruns memory of 4 elements")
    refused(lambda: q.fill(mem["b"], 7, -2), "fill count must be at least 0")
    refused(lambda: q.memcpy(mem["a"], mem["b"], -1), "memcpy size must be at least 0")
    refused(lambda: q.memset(mem["a"], 0, -1), "memset size must be at least 0")
    after = contents(mem)
    assert all((before[k] == after[k]).all() for k in mem)


def test_what_fits_runs(mem):
    q = sycl.queue()
    a, b = mem["a"], mem["b"]
    q.memcpy(a.ptr + 16, b, 16).wait()                   # an address inside an allocation, to its end
    assert list(a) == [0, 1, 2, 3, 10, 11, 12, 13]
    q.fill(b, -3, 4).wait()                              # the whole allocation
    assert list(b) == [-3] * 4
    q.fill(b, 9, 0).wait()                               # nothing
    q.copy(b, a, 4).wait()                               # a count that fits both
    q.copy(np.arange(4, dtype=np.int32), b).wait()       # same sizes: no count needed
    assert list(a[:4]) == [-3] * 4 and list(b) == [0, 1, 2, 3]
    host = np.zeros(4, np.int32)
    q.copy(b, host).wait()
    assert host.tolist() == [0, 1, 2, 3]
    q.fill(mem["f"], 2.5, 8).wait()
    assert list(mem["f"]) == [2.5] * 8
    q.memset(b, 0xFF, 4).wait()
    assert b[0] == -1


def test_fill_in_a_replayed_graph_keeps_its_pattern(mem):
    q = sycl.queue()
    g = sycl.command_graph(q)
    g.add(lambda h: h.fill(mem["a"], 5, 6))
    exe = g.finalize()
    for _ in range(2):
        np.asarray(mem["a"])[:] = 0
        q.ext_oneapi_graph(exe).wait()
        assert list(mem["a"]) == [5] * 6 + [0, 0]


# --- replay after free -------------------------------------------------------------------

@pytest.mark.parametrize("use", ["memcpy", "memset", "fill", "copy", "prefetch", "kernel", "kernel-address"])
def test_replay_after_a_free_is_refused_before_anything_runs(prog, use):
    q = sycl.queue()
    x = sycl.malloc_shared(8, np.int32, q)
    victim = sycl.malloc_shared(8, np.int32, q)
    g = sycl.command_graph(q)
    first = g.add(lambda h: h.parallel_for(prog.kernel("fillv"), 8, x, 1))
    uses = {"memcpy": lambda h: h.memcpy(victim, x, 32), "memset": lambda h: h.memset(victim, 0, 32),
            "fill": lambda h: h.fill(victim, 3, 8), "copy": lambda h: h.copy(x, victim),
            "prefetch": lambda h: h.prefetch(victim, 32),
            "kernel": lambda h: h.parallel_for(prog.kernel("fillv"), 8, victim, 2),
            "kernel-address": lambda h: h.parallel_for(prog.kernel("fillv"), 8, victim.ptr, 2)}
    g.add(uses[use], depends_on=[first])
    exe = g.finalize()
    q.ext_oneapi_graph(exe).wait()
    assert list(x) == [1] * 8
    np.asarray(x)[:] = 0
    sycl.free(victim)
    with pytest.raises(sycl.exception) as err:
        q.ext_oneapi_graph(exe).wait()
    assert err.value.code() == sycl.errc.invalid
    assert "the executable graph cannot run: node" in str(err.value)
    assert list(x) == [0] * 8                            # the first node did not run either
    with pytest.raises(sycl.exception):                  # and it stays refused
        q.ext_oneapi_graph(exe).wait()


def test_a_sub_graph_whose_memory_was_freed_stops_its_parent_before_it_runs(prog):
    q = sycl.queue()
    x, victim = sycl.malloc_shared(4, np.int32, q), sycl.malloc_shared(4, np.int32, q)
    np.asarray(x)[:] = 0                                 # (a GPU's fresh memory is not zero)
    inner = sycl.command_graph(q)
    inner.add(lambda h: h.memset(victim, 0, 16))
    inner_exe = inner.finalize()
    outer = sycl.command_graph(q)
    a = outer.add(lambda h: h.parallel_for(prog.kernel("fillv"), 4, x, 6))
    outer.add(lambda h: h.ext_oneapi_graph(inner_exe), depends_on=[a])
    exe = outer.finalize()
    sycl.free(victim)
    with pytest.raises(sycl.exception) as err:
        q.ext_oneapi_graph(exe).wait()
    assert err.value.code() == sycl.errc.invalid and "freed" in str(err.value)
    assert list(x) == [0] * 4


def test_an_update_to_live_memory_makes_the_graph_run_again(prog):
    q = sycl.queue()
    old, new = sycl.malloc_shared(4, np.int32, q), sycl.malloc_shared(4, np.int32, q)
    g = sycl.command_graph(q)
    p = sycl.dynamic_parameter(g, old)
    n = g.add(lambda h: h.parallel_for(prog.kernel("fillv"), 4, p, 8))
    exe = g.finalize(updatable=True)
    sycl.free(old)
    with pytest.raises(sycl.exception):
        q.ext_oneapi_graph(exe).wait()
    p.update(new)
    exe.update(n)
    q.ext_oneapi_graph(exe).wait()
    assert list(new) == [8] * 4


def test_frees_of_other_memory_do_not_stop_a_graph(prog):
    q = sycl.queue()
    x = sycl.malloc_shared(4, np.int32, q)
    g = sycl.command_graph(q)
    g.add(lambda h: h.parallel_for(prog.kernel("fillv"), 4, x, 4))
    exe = g.finalize()
    sycl.free(sycl.malloc_shared(4, np.int32, q))
    q.ext_oneapi_graph(exe).wait()
    assert list(x) == [4] * 4


def test_an_address_handed_out_again_has_one_index_entry():
    """A driver may hand out an address again while an object for it is still
    registered (its memory released without ``free``): the address index keeps
    one entry, so freeing the new allocation leaves nothing stale behind."""
    from minisycl.runtime import memory
    q = sycl.queue()
    a = sycl.malloc_shared(4, np.int32, q)
    memory.register(a)                      # the same address registered again
    sycl.free(a, q)
    assert memory.allocation_at(a.ptr) is None
    b = sycl.malloc_shared(4, np.int32, q)
    assert memory.allocation_at(b.ptr) is b
    sycl.free(b, q)
