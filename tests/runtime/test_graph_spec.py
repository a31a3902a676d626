"""sycl_ext_oneapi_graph, row by row (issue 18, points 1-9): the rules of both
revisions of the spec (sycl_ext_oneapi_graph and its newer Japanese revision) that the scenarios of test_graph.py
do not reach.  Every refused operation is checked to leave the graph, the
queues and the memory as they were."""
import dataclasses
import gc

import numpy as np
import pytest

from minisycl import runtime as sycl

from graph_checks import refused as invalid

KSL = """
kernel inc(id<1> i, int* p) { p[i] = p[i] + 1; }
kernel dbl(id<1> i, int* p) { p[i] = p[i] * 2; }
kernel fillv(id<1> i, int* p, int v) { p[i] = v; }
kernel add(id<1> i, int* a, int* b, int* out) { out[i] = a[i] + b[i]; }
kernel twice(id<1> i, double* p) { p[i] = p[i] * 2.0; }
"""
N = 16


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("gs")
    (d / "gs.ksl").write_text(KSL)
    return sycl.build_program([str(d / "gs.ksl")])


def ints(q, count=1, value=0):
    out = [sycl.malloc_shared(N, np.int32, q) for _ in range(count)]
    for a in out:
        np.asarray(a)[:] = value
    return out


# -- 1. recorded events after end_recording ------------------------------------------

def test_recorded_event_is_refused_after_its_recording_ends(prog):
    q1, q2 = sycl.queue(), sycl.queue()
    a, = ints(q1)
    g = sycl.command_graph(q1)
    with g.recording(q1):
        e = q1.parallel_for(prog.kernel("inc"), N, a)
    uses = [lambda: q2.parallel_for(prog.kernel("inc"), N, a, depends_on=e),          # another queue's command
            lambda: q2.submit(lambda h: (h.depends_on(e), h.parallel_for(prog.kernel("inc"), N, a))),
            lambda: q2.ext_oneapi_graph(sycl.command_graph(q2).finalize(), depends_on=[e]),
            lambda: q1.parallel_for(prog.kernel("inc"), N, a, depends_on=e),          # its own queue too
            e.wait, lambda: e.status, lambda: e.get_profiling_info("command_start")]
    for use in uses:
        with invalid():
            use()
    # nothing ran, no queue went back into recording, the graph did not grow
    assert np.asarray(a).tolist() == [0] * N
    assert q1.ext_oneapi_get_state() == sycl.queue_state.executing
    assert q2.ext_oneapi_get_state() == sycl.queue_state.executing
    assert len(g.get_nodes()) == 1
    # the explicit API of the same graph still takes it as a dependency (spec: explicit graph building)
    n = g.add(lambda h: (h.depends_on(e), h.parallel_for(prog.kernel("dbl"), N, a)))
    assert n.get_predecessors() == [sycl.node.get_node_from_event(e)]


def test_transitive_recording_is_undone_when_the_command_is_refused(prog):
    q1, q2 = sycl.queue(), sycl.queue()
    a, = ints(q1)
    g = sycl.command_graph(q1)
    g.begin_recording(q1)
    e = q1.parallel_for(prog.kernel("inc"), N, a)
    dyn = sycl.dynamic_parameter(g, a)
    with invalid(match="record & replay"):                # refused by the graph after q2 started recording
        q2.parallel_for(prog.kernel("fillv"), N, dyn, 3, depends_on=e)
    assert q2.ext_oneapi_get_state() == sycl.queue_state.executing and len(g.get_nodes()) == 1
    q2.parallel_for(prog.kernel("dbl"), N, a, depends_on=e)   # a good one records transitively
    assert q2.ext_oneapi_get_state() == sycl.queue_state.recording and len(g.get_nodes()) == 2
    g.end_recording()
    q1.ext_oneapi_graph(g.finalize()).wait()
    assert np.asarray(a)[0] == 2


# -- 2. device and context of executable graphs ---------------------------------------

def test_executable_graph_only_on_its_device_and_context(prog):
    cpu = sycl.queue()
    d = sycl.malloc_shared(N, np.float64, cpu)
    np.asarray(d)[:] = 1.5
    g = sycl.command_graph(cpu)
    g.add(lambda h: h.parallel_for(prog.kernel("twice"), N, d))
    ex = g.finalize()
    tgl = sycl.queue("intel_gpu_tgllp")                  # no fp64: the graph must not run there
    assert not tgl.device.has(sycl.aspect.fp64)
    with invalid(match="cannot be submitted to a queue of intel_gpu_tgllp"):
        tgl.ext_oneapi_graph(ex)
    other_context = sycl.queue(cpu.device, context=sycl.context(cpu.device))
    with invalid(match="device and context must be the graph's"):
        other_context.ext_oneapi_graph(ex)
    parent = sycl.command_graph(tgl)
    with invalid():
        parent.add(lambda h: h.ext_oneapi_graph(ex))     # nor as a sub-graph of another device's graph
    assert parent.get_nodes() == [] and np.asarray(d).tolist() == [1.5] * N
    cpu.ext_oneapi_graph(ex).wait()
    assert np.asarray(d)[0] == 3.0
    # command_graph(context, device): the device must belong to the context
    with invalid(match="not associated with the graph's context"):
        sycl.command_graph(sycl.context("minisycl_cpu"), tgl.device)
    ctx = sycl.context("intel_gpu_tgllp")
    g2 = sycl.command_graph(ctx, tgl.device)
    assert g2.context is ctx and g2.device == tgl.device


# -- 3. graph-owned memory in every node kind that takes USM -------------------------

@pytest.mark.parametrize("mode", ["explicit", "record"])
def test_graph_owned_memory_in_every_node_kind(prog, mode):
    q = sycl.queue(in_order=True)
    src = sycl.malloc_shared(N, np.int32, q)
    np.asarray(src)[:] = np.arange(N)
    out, total = ints(q, 2)
    seen = []
    box = []

    def host(p):
        # graph-owned memory is device memory: a host task orders around it but cannot
        # read it (a GPU's host cannot), so it only says that it ran between the kernels
        seen.append("ran")

    steps = [lambda h: box.append(h.async_malloc(N, dtype=np.int32)),
             lambda h: h.memset(box[0], 0xFF, 4 * N),                  # every int -1
             lambda h: h.fill(box[0], 7, N // 2),                      # first half 7
             lambda h: h.parallel_for(prog.kernel("inc"), N, box[0]),  # 8 ... 8, 0 ... 0
             lambda h: h.host_task(lambda: host(box[0])),
             lambda h: h.memcpy(out, box[0], 4 * N),
             lambda h: h.copy(src, box[0], N),                         # 0 1 2 ...
             lambda h: h.parallel_for(prog.kernel("add"), N, box[0], out, total),
             lambda h: h.async_free(box[0])]
    g = sycl.command_graph(q)
    if mode == "explicit":
        prev = []
        for step in steps:
            prev = [g.add(step, depends_on=prev)]
    else:
        with g.recording(q):
            for step in steps:
                q.submit(step)
    kinds = [n.get_type().name for n in g.get_nodes()]
    assert kinds == ["async_malloc", "memset", "memfill", "kernel", "host_task", "memcpy", "memcpy", "kernel",
                     "async_free"]
    ex = g.finalize()
    for _ in range(2):
        q.ext_oneapi_graph(ex).wait()
    half = [8] * (N // 2) + [0] * (N // 2)
    assert seen == ["ran", "ran"]
    assert np.asarray(out).tolist() == half
    assert np.asarray(total).tolist() == [i + v for i, v in enumerate(half)]


# -- 4. get_required_mem_size, memory pools, allocation kinds ------------------------

def build_counter(g, prog, alloc, out):
    """malloc -> inc -> copy out: each run adds one to graph-owned memory."""
    box = []
    m = g.add(lambda h: box.append(alloc(h)))
    k = g.add(lambda h: h.parallel_for(prog.kernel("inc"), N, box[0]), depends_on=[m])
    g.add(lambda h: h.memcpy(out, box[0], 4 * N), depends_on=[k])
    return box[0]


def test_memory_pools_zero_init_and_required_size(prog):
    q = sycl.queue()
    out, = ints(q)
    pool = sycl.memory_pool(q.context, q.device, "device", zero_init=True)
    assert pool.get_alloc_kind() == "device" and pool.has_property("zero_init")
    g = sycl.command_graph(q)
    build_counter(g, prog, lambda h: h.async_malloc_from_pool(N, pool, np.int32), out)
    ex = g.finalize()
    assert ex.get_required_mem_size() == 4 * N
    q.ext_oneapi_graph(ex).wait()
    q.ext_oneapi_graph(ex).wait()
    assert np.asarray(out)[0] == 2                        # not zeroed between runs
    g.add()                                               # the modifiable graph grows; ex does not
    assert ex.get_required_mem_size() == 4 * N
    del ex
    gc.collect()
    q.ext_oneapi_graph(g.finalize()).wait()
    assert np.asarray(out)[0] == 1                        # zeroed again by the new finalize
    # without zero_init the memory keeps what the last run left
    plain = sycl.command_graph(q)
    build_counter(plain, prog, lambda h: h.async_malloc(N, "device", np.int32), out)
    ex = plain.finalize()
    q.ext_oneapi_graph(ex).wait()
    first = int(np.asarray(out)[0])                       # (fresh memory: any value, zero or not)
    del ex
    gc.collect()
    q.ext_oneapi_graph(plain.finalize()).wait()
    assert int(np.asarray(out)[0]) & 0xFFFFFFFF == (first + 1) & 0xFFFFFFFF
    # recording takes pools too
    rq = sycl.queue(q.device, in_order=True, context=q.context)
    rec = sycl.command_graph(rq)
    with rec.recording(rq):
        p = sycl.async_malloc_from_pool(rq, N, pool, np.int32)
        rq.parallel_for(prog.kernel("fillv"), N, p, 9)
        rq.memcpy(out, p, 4 * N)
    ex = rec.finalize()
    assert ex.get_required_mem_size() == 4 * N and rec.get_nodes()[0].get_type() == sycl.node_type.async_malloc
    q.ext_oneapi_graph(ex).wait()
    assert np.asarray(out)[0] == 9
    # outside a graph a pool gives ordinary memory of its kind
    shared_pool = sycl.memory_pool(q.context, q.device, "shared")
    box = []
    q.submit(lambda h: box.append(h.async_malloc_from_pool(4, shared_pool, np.int32))).wait()
    np.asarray(box[0])[:] = 6                             # host memory: written and read by the host
    assert box[0].kind == "shared" and np.asarray(box[0]).tolist() == [6] * 4


@pytest.mark.parametrize("kind", ["host", "shared"])
def test_non_device_graph_allocations_are_invalid(prog, kind):
    q = sycl.queue()
    g = sycl.command_graph(q)
    g.add()
    pool = sycl.memory_pool(q.context, q.device, kind)
    for cgf in (lambda h: h.async_malloc(N, kind, np.int32), lambda h: h.async_malloc_from_pool(N, pool)):
        with invalid(match=f"not usm::alloc::{kind}"):
            g.add(cgf)
    with g.recording(q):
        with invalid():
            sycl.async_malloc(q, N, kind)
    assert len(g.get_nodes()) == 1 and g.finalize().get_required_mem_size() == 0
    with invalid(match="not associated"):
        sycl.memory_pool(sycl.context("minisycl_cpu"), sycl.queue("intel_gpu_tgllp").device)
    with invalid(match="unknown USM allocation kind"):
        sycl.memory_pool(q.context, q.device, "system")


# -- 5. whole-graph update ---------------------------------------------------------------

def crossed(g, prog, a, b, v, swap):
    """fill a and b, then inc of each, the edges crossed or not (the same counts either way)."""
    fa = g.add(lambda h: h.parallel_for(prog.kernel("fillv"), N, a, v))
    fb = g.add(lambda h: h.parallel_for(prog.kernel("fillv"), N, b, v + 1))
    g.add(lambda h: h.parallel_for(prog.kernel("inc"), N, a), depends_on=[fb if swap else fa])
    g.add(lambda h: h.parallel_for(prog.kernel("inc"), N, b), depends_on=[fa if swap else fb])


def test_whole_graph_update_needs_corresponding_edges(prog):
    q = sycl.queue()
    a, b, a2, b2 = ints(q, 4)
    g1 = sycl.command_graph(q)
    crossed(g1, prog, a, b, 1, swap=False)
    ex = g1.finalize(updatable=True)
    swapped = sycl.command_graph(q)
    crossed(swapped, prog, a2, b2, 5, swap=True)
    with invalid(match="Node 2 depends on nodes \\[1\\] in the source graph but on nodes \\[0\\] in this graph"):
        ex.update(swapped)
    g1.add()                                   # added after finalize: not part of ex
    q.ext_oneapi_graph(ex).wait()                     # unchanged: still g1's arguments
    assert (np.asarray(a)[0], np.asarray(b)[0], np.asarray(a2)[0]) == (2, 3, 0)
    same = sycl.command_graph(q)
    crossed(same, prog, a2, b2, 5, swap=False)
    ex.update(same)
    q.ext_oneapi_graph(ex).wait()
    assert (np.asarray(a2)[0], np.asarray(b2)[0]) == (6, 7)


def test_whole_graph_update_node_types(prog):
    q = sycl.queue()
    a, b = ints(q, 2)
    said = []
    g1, g2 = sycl.command_graph(q), sycl.command_graph(q)
    for g, word, dst in ((g1, "one", a), (g2, "two", b)):
        k = g.add(lambda h, dst=dst: h.parallel_for(prog.kernel("inc"), N, dst))
        g.add(lambda h, word=word: h.host_task(lambda: said.append(word)), depends_on=[k])
    ex = g1.finalize(updatable=True)
    ex.update(g2)                              # host tasks are updated as a whole (newer revision)
    q.ext_oneapi_graph(ex).wait()
    assert said == ["two"] and np.asarray(b)[0] == 1 and np.asarray(a)[0] == 0
    # a memcpy node is not updatable, even against a memcpy node
    m1, m2 = sycl.command_graph(q), sycl.command_graph(q)
    m1.add(lambda h: h.memcpy(a, b, 4))
    m2.add(lambda h: h.memcpy(b, a, 4))
    exm = m1.finalize(updatable=True)
    with invalid(match="node_type::memcpy node"):
        exm.update(m2)
    q.ext_oneapi_graph(exm).wait()
    assert np.asarray(a)[0] == 1               # still a <- b
    # corresponding nodes must have the same type
    k1, h2 = sycl.command_graph(q), sycl.command_graph(q)
    k1.add(lambda h: h.parallel_for(prog.kernel("inc"), N, a))
    h2.add(lambda h: h.host_task(lambda: None))
    with invalid(match="mismatched node types"):
        k1.finalize(updatable=True).update(h2)


# -- 6. dynamic command groups -----------------------------------------------------------

def test_dynamic_command_group_runs_when_made_and_keeps_dependencies(prog):
    q = sycl.queue()
    a, b, c = ints(q, 3)
    g = sycl.command_graph(q)
    with g.recording(q):
        ea = q.parallel_for(prog.kernel("fillv"), N, a, 3)
        eb = q.parallel_for(prog.kernel("fillv"), N, b, 4)
    calls = []
    dcg = sycl.dynamic_command_group(g, [
        lambda h: (calls.append(0), h.depends_on(ea), h.parallel_for(prog.kernel("add"), N, a, a, c)),
        lambda h: (calls.append(1), h.depends_on([ea]), h.parallel_for(prog.kernel("add"), N, a, b, c))])
    assert calls == [0, 1]                     # when made, once, in index order (the constructor's errors need it)
    n = g.add(dcg)
    assert calls == [0, 1]                     # not again at add
    assert n.get_predecessors() == [sycl.node.get_node_from_event(ea)]
    ex = g.finalize(updatable=True)
    q.ext_oneapi_graph(ex).wait()
    assert np.asarray(c)[0] == 6
    dcg.set_active_index(1)
    ex.update(n)
    q.ext_oneapi_graph(ex).wait()
    assert np.asarray(c)[0] == 7
    # different dependencies across the functions
    uneven = sycl.dynamic_command_group(g, [
        lambda h: (h.depends_on(ea), h.parallel_for(prog.kernel("inc"), N, c)),
        lambda h: (h.depends_on(eb), h.parallel_for(prog.kernel("inc"), N, c))])
    with invalid(match="same dependencies"):
        g.add(uneven)
    assert len(g.get_nodes()) == 3


def test_dynamic_parameters_only_in_explicit_kernel_nodes(prog):
    q = sycl.queue()
    a, b = ints(q, 2)
    g = sycl.command_graph(q)
    dyn = sycl.dynamic_parameter(g, a)
    with invalid(match="do not represent kernel executions"):
        g.add(lambda h: (h.set_arg(0, dyn), h.memcpy(b, a, 4)))
    with invalid(match="do not represent kernel executions"):
        g.add(lambda h: (h.set_arg(0, dyn), h.host_task(lambda: None)))
    with invalid(match="only be used in command graph nodes"):
        q.submit(lambda h: (h.set_arg(0, dyn), h.memcpy(b, a, 4))).wait()      # a normal submission
    with g.recording(q):
        with invalid(match="record & replay"):
            q.submit(lambda h: (h.set_arg(0, dyn), h.set_arg(1, 3), h.parallel_for(prog.kernel("fillv"), N)))
        with invalid(match="record & replay"):
            q.parallel_for(prog.kernel("fillv"), N, dyn, 3)
    assert g.get_nodes() == [] and np.asarray(b)[0] == 0
    n = g.add(lambda h: (h.set_arg(0, dyn), h.set_arg(1, 3), h.parallel_for(prog.kernel("fillv"), N)))
    ex = g.finalize(updatable=True)
    dyn.update(b)
    ex.update(n)
    q.ext_oneapi_graph(ex).wait()
    assert np.asarray(b)[0] == 3 and np.asarray(a)[0] == 0


# -- 7. enable_profiling -------------------------------------------------------------------

def test_profiling_needs_enable_profiling_at_finalize(prog):
    q = sycl.queue(enable_profiling=True)
    a, = ints(q)
    g = sycl.command_graph(q)
    g.add(lambda h: h.parallel_for(prog.kernel("inc"), N, a))
    e = q.ext_oneapi_graph(g.finalize())
    with invalid(match="enable_profiling"):
        e.get_profiling_info("command_start")
    e = q.ext_oneapi_graph(g.finalize(enable_profiling=True))
    q.wait()
    times = [e.get_profiling_info(w) for w in ("command_submit", "command_start", "command_end")]
    assert times == sorted(times) and np.asarray(a)[0] == 2


# -- 8. graph support of devices ------------------------------------------------------------

def cpu_variant(name, withheld):
    return sycl.device(dataclasses.replace(sycl.default_device(sycl.HOST_CPU).config, name=name), withheld=withheld)


def test_devices_without_graph_support(prog):
    none = cpu_variant("cpu_without_graphs", [sycl.aspect.ext_oneapi_graph, sycl.aspect.ext_oneapi_limited_graph])
    with invalid(match="does not support command graphs"):
        sycl.command_graph(sycl.queue(none))
    with invalid(match="does not support command graphs"):
        sycl.command_graph(sycl.context(none), none)
    limited = cpu_variant("cpu_limited_graphs", [sycl.aspect.ext_oneapi_graph])
    assert limited.has(sycl.aspect.ext_oneapi_limited_graph) and not limited.has(sycl.aspect.ext_oneapi_graph)
    q = sycl.queue(limited)
    a, = ints(q)
    g = sycl.command_graph(q)
    g.add(lambda h: h.parallel_for(prog.kernel("inc"), N, a))
    with invalid(sycl.errc.feature_not_supported, match="Device does not support Command Graph update"):
        g.finalize(updatable=True)
    q.ext_oneapi_graph(g.finalize()).wait()           # everything but update works
    assert np.asarray(a)[0] == 1
    # a graph aspect implies the limited one
    assert not cpu_variant("x", [sycl.aspect.ext_oneapi_limited_graph]).has(sycl.aspect.ext_oneapi_graph)


@pytest.mark.parametrize("items", [16, 1 << 15])
def test_finalize_refuses_commands_the_device_cannot_run(prog, items):
    q = sycl.queue("intel_gpu_tgllp")
    d = sycl.malloc_shared(items, np.float64, q)
    g = sycl.command_graph(q)
    g.add(lambda h: h.parallel_for(prog.kernel("twice"), items, d))
    with invalid(sycl.errc.feature_not_supported, match="fp64"):
        g.finalize()


# -- 9. barriers, recording properties, states, print_graph, feature-test constants --------

def test_recorded_barrier_with_wait_list(prog):
    q = sycl.queue()                           # out of order
    a, b, c = ints(q, 3)
    g = sycl.command_graph(q)
    with g.recording(q):
        e1 = q.parallel_for(prog.kernel("fillv"), N, a, 2)
        q.parallel_for(prog.kernel("fillv"), N, b, 3)
        q.submit(lambda h: h.ext_oneapi_barrier([e1]))
        q.parallel_for(prog.kernel("inc"), N, a)
        q.submit(lambda h: h.ext_oneapi_barrier())   # no wait list: the queue's leaves (and the barrier before)
    fa, fb, bar, inc, bar_all = g.get_nodes()
    assert bar.get_type() == sycl.node_type.ext_oneapi_barrier
    assert bar.get_predecessors() == [fa]      # only its wait list
    assert inc.get_predecessors() == [bar]
    assert set(bar_all.get_predecessors()) == {fb, inc, bar}
    q.ext_oneapi_graph(g.finalize()).wait()
    assert (np.asarray(a)[0], np.asarray(b)[0]) == (3, 3)
    with g.recording(q):                       # the queue shortcut records the same node
        q.ext_oneapi_submit_barrier([q.parallel_for(prog.kernel("inc"), N, c)])
    assert g.get_nodes()[-1].get_predecessors() == [g.get_nodes()[-2]]


def test_begin_recording_properties_and_state_enums(prog):
    q1, q2 = sycl.queue(), sycl.queue()
    g = sycl.command_graph(q1)
    assert g.state is sycl.graph_state.modifiable and q1.ext_oneapi_get_state() is sycl.queue_state.executing
    g.begin_recording(q1, ["assume_buffer_outlives_graph"])
    assert q1.ext_oneapi_get_state() is sycl.queue_state.recording
    g.end_recording()
    with g.recording([q1, q2], {"assume_data_outlives_buffer": True}):
        assert q2.ext_oneapi_get_graph() is g
    with invalid(match="'in_order' is not a command-graph property"):
        g.begin_recording([q1, q2], ["in_order"])
    other = sycl.queue("intel_gpu_tgllp")
    with invalid(match="differs from the graph"):
        g.begin_recording([q1, other])         # all checked first: q1 does not start either
    assert q1.ext_oneapi_get_state() is sycl.queue_state.executing
    assert g.finalize().state is sycl.graph_state.executable


def test_print_graph_to_an_unwritable_path(prog, tmp_path):
    g = sycl.command_graph(sycl.queue())
    g.add()
    (tmp_path / "dir.dot").mkdir()
    for path in (tmp_path / "missing" / "g.dot", tmp_path / "dir.dot"):
        with invalid(match="print_graph cannot write"):
            g.print_graph(str(path))
    g.print_graph(str(tmp_path / "ok.dot"))
    assert (tmp_path / "ok.dot").read_text().startswith("digraph dot {")


def test_feature_test_constants():
    assert sycl.SYCL_EXT_ONEAPI_GRAPH == 1 and sycl.SYCL_EXT_ONEAPI_DEVICE_GLOBAL == 1
