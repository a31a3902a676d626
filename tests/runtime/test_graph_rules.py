"""sycl_ext_oneapi_graph, the rules that held on the common path and broke on the
second one (issue 30, points 1-6): each is checked on every path that reaches it
(explicit add, record & replay, dynamic command groups; kernels with and
without barriers; the native plan, Python steps and, with the stand-in driver
``fake_cuda.py``, the CUDA graph), and a refusal is checked to leave the graph,
the queues and their recording state as they were."""
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from minisycl import runtime as sycl
from minisycl.passes.support import knobs

from graph_checks import refused

KSL = """
device_global<int> dg;
kernel fixed(nd_item<1> it, int* p) [[reqd_work_group_size(4)]] {
  p[it.get_global_id(0)] = (int)it.get_local_range(0);
}
kernel fixed_barrier(nd_item<1> it, int* p) [[reqd_work_group_size(4)]] {
  local int t[4];
  t[it.get_local_id(0)] = 1;
  group_barrier(it);
  p[it.get_global_id(0)] = t[0] + (int)it.get_local_range(0) - 1;
}
kernel fillv(id<1> i, int* p, int v) { p[i] = v; }
kernel inc(id<1> i, int* p) { p[i] = p[i] + 1; }
"""
N = 16
BIG = 1 << 15          # a kernel of this many work-items is a step of its own in the host plan (plan.py)


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("rules")
    (d / "rules.ksl").write_text(KSL)
    return sycl.build_program([str(d / "rules.ksl")])


def ints(q, n=N, value=0):
    a = sycl.malloc_shared(n, np.int32, q)
    np.asarray(a)[:] = value
    return a


# -- 1. kernel properties in graph nodes -----------------------------------------------

KERNELS = ["fixed", "fixed_barrier"]


@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize("size", [N, BIG])
def test_required_work_group_size_is_refused_when_added(prog, name, size):
    q = sycl.queue()
    a = ints(q, size)
    k = prog.kernel(name)
    with refused(sycl.errc.nd_range, match="required work-group size"):            # eager, for reference
        q.parallel_for(k, sycl.nd_range(size, 8), a)
    g = sycl.command_graph(q)
    with refused(sycl.errc.nd_range, match="required work-group size"):            # explicit add
        g.add(lambda h: h.parallel_for(k, sycl.nd_range(size, 8), a))
    g.begin_recording(q)
    with refused(sycl.errc.nd_range, match="required work-group size"):            # recorded
        q.parallel_for(k, sycl.nd_range(size, 2), a)
    assert q.ext_oneapi_get_state() == sycl.queue_state.recording
    g.end_recording(q)
    with refused(sycl.errc.nd_range, match="required work-group size"):            # a dynamic command group
        sycl.dynamic_command_group(g, [lambda h: h.parallel_for(k, sycl.nd_range(size, 4), a),
                                       lambda h: h.parallel_for(k, sycl.nd_range(size, 8), a)])
    assert g.get_nodes() == []
    # the size it requires is taken, and runs on every replay path
    g.add(lambda h: h.parallel_for(k, sycl.nd_range(size, 4), a))
    ex = g.finalize(updatable=True)
    q.ext_oneapi_graph(ex).wait()
    assert set(np.asarray(a).tolist()) == {4}


@pytest.mark.parametrize("name", KERNELS)
def test_update_nd_range_to_a_forbidden_size_is_refused(prog, name):
    q = sycl.queue()
    a = ints(q, 2 * N)
    k = prog.kernel(name)
    g = sycl.command_graph(q)
    n = g.add(lambda h: h.parallel_for(k, sycl.nd_range(N, 4), a))
    ex = g.finalize(updatable=True)
    with refused(sycl.errc.nd_range, match="required work-group size"):
        n.update_nd_range(sycl.nd_range(2 * N, 8))
    ex.update(n)                                  # the node kept its range
    q.ext_oneapi_graph(ex).wait()
    assert np.asarray(a).tolist() == [4] * N + [0] * N
    n.update_nd_range(sycl.nd_range(2 * N, 4))    # an allowed size is taken
    ex.update(n)
    q.ext_oneapi_graph(ex).wait()
    assert np.asarray(a).tolist() == [4] * (2 * N)


# -- 2. a command group is what it is, whatever the order of its calls -------------------

def _commands(prog, q, state):
    """Command-group calls by name, each a function of the handler."""
    host = np.zeros(4, np.int32)
    dg = prog.device_global("dg")
    a = state["a"]
    pool = sycl.memory_pool(q.context, q.device, "device")
    return {
        "copy to device_global": lambda h: h.memcpy(dg, host, 4),
        "copy from device_global": lambda h: h.copy(dg, host, 1),
        "async_malloc device": lambda h: state.setdefault("ptrs", []).append(h.async_malloc(16, "device")),
        "async_malloc shared": lambda h: state.setdefault("ptrs", []).append(h.async_malloc(16, "shared")),
        "async_malloc host": lambda h: state.setdefault("ptrs", []).append(h.async_malloc(16, "host")),
        "async_malloc_from_pool": lambda h: h.async_malloc_from_pool(16, pool),
        "sub-graph owning memory": lambda h: h.ext_oneapi_graph(state["owning"]),
        "sub-graph": lambda h: h.ext_oneapi_graph(state["plain"]),
        "kernel": lambda h: h.parallel_for(prog.kernel("inc"), N, a),
        "memcpy": lambda h: h.memcpy(a, host, 4),
        "memset": lambda h: h.memset(a, 0, 4),
        "fill": lambda h: h.fill(a, np.int32(1), 2),
        "host_task": lambda h: h.host_task(lambda: None),
        "barrier": lambda h: h.ext_oneapi_barrier(),
        "nothing": lambda h: None,
    }


def _sub_graphs(q, state):
    owning = sycl.command_graph(q)
    owning.add(lambda h: h.async_malloc(16))
    state["owning"] = owning.finalize()
    state["plain"] = sycl.command_graph(q).finalize()


def _outcome(fn):
    try:
        fn()
    except sycl.exception as err:
        return ("refused", err.code(), str(err))
    return ("ok",)


COMMANDS = ["copy to device_global", "copy from device_global", "async_malloc device", "async_malloc shared",
            "async_malloc host", "async_malloc_from_pool", "sub-graph owning memory", "sub-graph", "kernel",
            "memcpy", "memset", "fill", "host_task", "barrier", "nothing"]


@settings(max_examples=knobs.fuzz_examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(command=st.sampled_from(COMMANDS), order=st.sampled_from(["before", "after", "submit"]),
       route=st.sampled_from(["transitive", "recording", "explicit"]))
def test_command_group_rules_do_not_depend_on_the_order_of_its_calls(prog, command, order, route):
    """``depends_on(recorded event)`` before the command, after it, or given to
    ``submit``: the same node or the same refusal; a refusal leaves the graph and
    every queue's recording state as they were."""
    q1, q2 = sycl.queue(), sycl.queue()
    outcomes = {}
    for where in ("before", order):
        state = {"a": ints(q1)}
        _sub_graphs(q1, state)
        fn = _commands(prog, q1, state)[command]
        g = sycl.command_graph(q1)
        g.begin_recording(q1)
        e = q1.submit(lambda h: h.host_task(lambda: None))
        target = q1 if route == "recording" else q2
        if route == "explicit":
            g.end_recording(q1)

        def group(h, where=where, e=e, fn=fn):
            if where == "before":
                h.depends_on(e)
            fn(h)
            if where == "after":
                h.depends_on(e)
        if route == "explicit":
            submit = (lambda: g.add(group)) if where != "submit" else \
                (lambda: g.add(fn, depends_on=sycl.node.get_node_from_event(e)))
        else:
            submit = (lambda: target.submit(group)) if where != "submit" else (lambda: target.submit(fn, depends_on=e))
        states = (q1.ext_oneapi_get_state(), q2.ext_oneapi_get_state())
        nodes = [(n, n.get_type(), n.get_predecessors()) for n in g.get_nodes()]
        outcome = _outcome(submit)
        if outcome[0] == "refused":
            assert (q1.ext_oneapi_get_state(), q2.ext_oneapi_get_state()) == states
            assert [(n, n.get_type(), n.get_predecessors()) for n in g.get_nodes()] == nodes
        else:
            added = g.get_nodes()[-1]
            assert len(g.get_nodes()) == len(nodes) + 1 and added.get_predecessors() == [nodes[0][0]]
            outcome = ("ok", added.get_type())
        outcomes[where] = outcome
        g.end_recording()
    assert outcomes[order] == outcomes["before"], (command, route)


def test_a_refused_command_group_after_its_dependency_leaves_no_recording(prog):
    """The path that raised ``AttributeError`` and left the queue recording."""
    q1, q2 = sycl.queue(), sycl.queue()
    g = sycl.command_graph(q1)
    with g.recording(q1):
        e = q1.submit(lambda h: h.host_task(lambda: None))
        for kind in ("host", "shared"):
            with refused(match="only device memory"):
                q2.submit(lambda h: (h.async_malloc(16, kind), h.depends_on(e)))
            assert q2.ext_oneapi_get_state() == sycl.queue_state.executing
        ptr = []
        q2.submit(lambda h: (ptr.append(h.async_malloc(16)), h.depends_on(e)))
        assert q2.ext_oneapi_get_state() == sycl.queue_state.recording
        assert g.get_nodes()[-1].get_type() == sycl.node_type.async_malloc
    with refused(match="graph-owned memory"):
        sycl.free(ptr[0])


def test_eager_async_malloc_is_ordinary_memory(prog):
    q = sycl.queue()
    p = sycl.async_malloc(q, 8, "shared", np.int32)
    q.parallel_for(prog.kernel("fillv"), 8, p, 5).wait()
    assert np.asarray(p).tolist() == [5] * 8 and isinstance(p, sycl.usm_allocation)
    sycl.async_free(q, p)
    q.wait()
    with refused(match="freed"):
        q.parallel_for(prog.kernel("fillv"), 8, p, 5)
    p2 = sycl.async_malloc(q, 8, "device", np.int32)
    sycl.free(p2, q)


# -- 3. dynamic parameters of the newer revision -----------------------------------------

def test_dynamic_parameter_without_a_graph_is_used_in_any_graph(prog):
    q = sycl.queue()
    a, b = ints(q), ints(q)
    dyn = sycl.dynamic_parameter(a)
    graphs, nodes, execs = [], [], []
    for _ in range(2):
        g = sycl.command_graph(q)
        nodes.append(g.add(lambda h: (h.set_arg(0, dyn), h.parallel_for(prog.kernel("fillv"), N, None, 7))))
        execs.append(g.finalize(updatable=True))
        graphs.append(g)
    # the deprecated form, with a graph, is usable in another graph too (newer revision)
    old = sycl.dynamic_parameter(graphs[0], 3)
    other = sycl.command_graph(q)
    other.add(lambda h: (h.set_arg(1, old), h.parallel_for(prog.kernel("fillv"), N, b, None)))
    q.ext_oneapi_graph(other.finalize()).wait()
    assert np.asarray(b).tolist() == [3] * N
    dyn.update(b)
    for n, ex in zip(nodes, execs):
        ex.update(n)
        q.ext_oneapi_graph(ex).wait()
    assert np.asarray(b).tolist() == [7] * N and np.asarray(a).tolist() == [0] * N
    with refused(match="only be used in command graph nodes"):
        q.submit(lambda h: (h.set_arg(0, dyn), h.parallel_for(prog.kernel("fillv"), N, None, 7)))
    with refused(match="only be used in command graph nodes"):
        q.parallel_for(prog.kernel("fillv"), N, dyn, 7)


@pytest.mark.parametrize("how", ["set_arg twice", "argument then set_arg"])
def test_one_argument_registered_with_two_dynamic_parameters(prog, how):
    q = sycl.queue()
    a = ints(q)
    first, second = sycl.dynamic_parameter(1), sycl.dynamic_parameter(2)
    g = sycl.command_graph(q)
    if how == "set_arg twice":
        cgf = lambda h: (h.set_arg(1, first), h.set_arg(1, second), h.parallel_for(prog.kernel("fillv"), N, a, 0))
    else:
        cgf = lambda h: (h.set_arg(1, second), h.parallel_for(prog.kernel("fillv"), N, a, first))
    n = g.add(cgf)
    ex = g.finalize(updatable=True)

    def run():
        ex.update(n)
        q.ext_oneapi_graph(ex).wait()
        return int(np.asarray(a)[0])
    assert run() == 2                   # the value given last
    first.update(10)                    # an update of either sets it
    assert run() == 10
    second.update(20)
    assert run() == 20
    first.update(30)
    assert run() == 30
    with refused(match="kernel 'fillv'"):
        second.update("no")            # refused: the argument keeps its value
    assert run() == 30


# -- 4. graph-owned allocations judged on the executable graph as finalized ---------------

def test_owning_memory_is_judged_as_finalized(prog):
    q = sycl.queue()
    a = ints(q)
    g = sycl.command_graph(q)
    g.add(lambda h: h.parallel_for(prog.kernel("fillv"), N, a, 1))
    ex = g.finalize(updatable=True)
    g.add(lambda h: h.async_malloc(16))            # the modifiable graph owns memory now; ex does not
    outer = sycl.command_graph(q)
    outer.add(lambda h: h.ext_oneapi_graph(ex))    # usable as a sub-graph
    q.ext_oneapi_graph(outer.finalize()).wait()
    assert np.asarray(a).tolist() == [1] * N
    source = sycl.command_graph(q)
    source.add(lambda h: h.parallel_for(prog.kernel("fillv"), N, a, 2))
    ex.update(source)                              # and updatable as a whole
    q.ext_oneapi_graph(ex).wait()
    assert np.asarray(a).tolist() == [2] * N
    # the other way round: finalized owning memory, refused however the modifiable graph changes
    h = sycl.command_graph(q)
    h.add(lambda cgh: cgh.async_malloc(16))
    owning = h.finalize(updatable=True)
    with refused(match="graph-owned allocations"):
        outer.add(lambda cgh: cgh.ext_oneapi_graph(owning))
    with refused(match="graph-owned allocations"):
        owning.update(sycl.command_graph(q))


# -- 5. dynamic command groups: kernels or host tasks, refused when made ------------------

def test_dynamic_command_group_of_other_commands_is_refused_when_made(prog):
    q = sycl.queue()
    a = ints(q)
    g = sycl.command_graph(q)
    calls = []
    for cgfs in ([lambda h: h.memcpy(a, a, 4)],
                 [lambda h: h.parallel_for(prog.kernel("inc"), N, a), lambda h: h.memset(a, 0, 4)],
                 [lambda h: calls.append(1)],
                 [lambda h: h.parallel_for(prog.kernel("inc"), N, a), lambda h: h.host_task(lambda: None)]):
        with refused(match="only types of command-groups|must all be the same type"):
            sycl.dynamic_command_group(g, cgfs)
    assert g.get_nodes() == []
    seen = []
    dcg = sycl.dynamic_command_group(g, [lambda h: (seen.append(0), h.host_task(lambda: None)),
                                         lambda h: (seen.append(1), h.host_task(lambda: None))])
    assert seen == [0, 1]                # evaluated once, in index order, when made
    g.add(dcg)
    g.add(dcg)
    assert seen == [0, 1]


# -- 6. print_graph(verbose=True) ---------------------------------------------------------

def test_verbose_print_graph_shows_arguments_and_addresses(prog, tmp_path):
    q = sycl.queue()
    a, b = ints(q), ints(q)
    g = sycl.command_graph(q)
    g.add(lambda h: h.parallel_for(prog.kernel("fillv"), N, a, 7))
    g.add(lambda h: h.memcpy(b, a, 12))
    g.add(lambda h: h.copy(b, a, 5))
    g.add(lambda h: h.memset(a, 3, 8))
    g.add(lambda h: h.fill(b, np.int32(9), 6))
    g.add(lambda h: h.prefetch(a, 16))
    g.add(lambda h: h.mem_advise(b, 32, 1))
    g.add(lambda h: h.async_malloc(24))
    path = tmp_path / "g.dot"
    g.print_graph(str(path), verbose=True)
    text = path.read_text()
    pa, pb = f"{a.ptr:#x}", f"{b.ptr:#x}"
    assert f"0) int* = {a!r}" in text or pa in text
    assert re.search(rf"Src: {pa}.*Dst: {pb}.*Length: 12", text)
    assert re.search(rf"Src: {pb}.*Dst: {pa}.*Length: 20", text)
    assert re.search(rf"Dst: {pa}.*Value: 3.*Length: 8", text)
    assert re.search(rf"Dst: {pb}.*Pattern: 09000000.*Count: 6", text)
    assert re.search(rf"Ptr: {pa}.*Length: 16", text)
    assert re.search(rf"Ptr: {pb}.*Length: 32.*Advice: 1", text)
    assert "Size: 24" in text
    g.print_graph(str(tmp_path / "short.dot"))
    assert "Src:" not in (tmp_path / "short.dot").read_text()


# -- update: slots packed by dynamic_parameter.update are reused only while nothing was freed --

def test_update_after_a_free_packs_again_and_refuses_freed_memory(prog):
    q = sycl.queue()
    a, b = ints(q), ints(q)
    dyn = sycl.dynamic_parameter(a)
    g = sycl.command_graph(q)
    n = g.add(lambda h: h.parallel_for(prog.kernel("fillv"), N, dyn, 5))
    ex = g.finalize(updatable=True)
    q.ext_oneapi_graph(ex).wait()
    dyn.update(b)                       # packed now, with b alive
    sycl.free(b, q)
    with refused(match="freed"):
        ex.update(n)                    # b is gone since the packing: packed again, refused
    dyn.update(a)
    ex.update(n)
    np.asarray(a)[:] = 0
    q.ext_oneapi_graph(ex).wait()
    assert np.asarray(a).tolist() == [5] * N
