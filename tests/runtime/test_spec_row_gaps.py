"""Rows of sycl_ext_oneapi_graph that no other test checked (issue 30, point 15;
``tests/spec_rows.py`` names them): each refusal is ``errc::invalid`` and
leaves the graphs and queues as they were."""
import numpy as np
import pytest

from minisycl import runtime as sycl


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("gaps")
    (d / "g.ksl").write_text("kernel inc(id<1> i, int* p) { p[i] = p[i] + 1; }\n")
    return sycl.build_program([str(d / "g.ksl")])


def refused(fn, text):
    with pytest.raises(sycl.exception) as err:
        fn()
    assert err.value.code() == sycl.errc.invalid and text in str(err.value)


def one_kernel_graph(prog, q, n=4):
    p = sycl.malloc_shared(n, np.int32, q)
    np.asarray(p)[:] = 0                    # (a GPU's fresh memory is not zero)
    g = sycl.command_graph(q)
    g.add(lambda h: h.parallel_for(prog.kernel("inc"), n, p))
    return g, p


def test_node_from_an_event_of_no_graph_is_invalid(prog):
    q = sycl.queue()
    p = sycl.malloc_shared(4, np.int32, q)
    e = q.parallel_for(prog.kernel("inc"), 4, p)
    refused(lambda: sycl.node.get_node_from_event(e), "not associated with a command graph node")


def test_whole_graph_update_needs_the_same_context_and_device(prog):
    q = sycl.queue()
    g, p = one_kernel_graph(prog, q)
    ex = g.finalize(updatable=True)
    other_context = sycl.queue(q.device, context=sycl.context(q.device))
    other_device = sycl.queue("intel_gpu_pvc" if q.device.name != "intel_gpu_pvc" else "intel_gpu_tgllp")
    refused(lambda: ex.update(one_kernel_graph(prog, other_context)[0]), "different context")
    refused(lambda: ex.update(one_kernel_graph(prog, other_device)[0]), "different device")
    q.ext_oneapi_graph(ex).wait()              # unchanged: still its own argument
    assert np.asarray(p).tolist() == [1] * 4


def test_recording_a_list_of_queues_refuses_one_already_recording(prog):
    q1, q2 = sycl.queue(), sycl.queue()
    first, second = sycl.command_graph(q1), sycl.command_graph(q1)
    first.begin_recording(q1)
    refused(lambda: second.begin_recording([q2, q1]), "already in the recording state")
    assert q2.ext_oneapi_get_state() == sycl.queue_state.executing      # no queue of the list started
    refused(lambda: second.end_recording([q1]), "recording to a different graph")
    assert q1.ext_oneapi_get_state() == sycl.queue_state.recording
    first.end_recording([q1])
    assert q1.ext_oneapi_get_state() == sycl.queue_state.executing


def test_depends_on_all_leaves_makes_a_node_after_every_leaf(prog):
    q = sycl.queue()
    p = sycl.malloc_shared(4, np.int32, q)
    g = sycl.command_graph(q)
    first = g.add(lambda h: h.parallel_for(prog.kernel("inc"), 4, p))
    second = g.add(lambda h: h.parallel_for(prog.kernel("inc"), 4, p), depends_on=[first])
    other = g.add(lambda h: h.parallel_for(prog.kernel("inc"), 4, p))
    last = g.add(depends_on_all_leaves=True)
    assert last.get_predecessors() == [second, other]
    assert first not in last.get_predecessors()


def test_a_graph_owning_memory_has_one_executable_graph_and_is_no_recorded_command(prog):
    q = sycl.queue()
    g = sycl.command_graph(q)
    g.add(lambda h: h.async_malloc(16))
    ex = g.finalize()
    refused(g.finalize, "single executable graph alive")
    recorder = sycl.queue()
    target = sycl.command_graph(recorder)
    target.begin_recording(recorder)
    refused(lambda: recorder.ext_oneapi_graph(ex), "graph-owned allocations")
    refused(lambda: recorder.submit(lambda h: h.ext_oneapi_graph(ex)), "graph-owned allocations")
    assert target.get_nodes() == [] and recorder.ext_oneapi_get_state() == sycl.queue_state.recording
    target.end_recording(recorder)
