"""A typed API (issue 27, point 7; ``runtime/validate.py``): every public runtime
entry point refuses wrong types, wrong kinds of object and out-of-range values
with ``sycl.exception(errc.invalid)`` naming the parameter — never a
``TypeError``, ``AttributeError``, ``struct.error``, nor a silent acceptance;
``copy`` checks element types, device globals included.

The generator (``api_fuzz_child.py``, in a child process so that a signal or
a hang is seen as that) calls each entry point with every value of a pool of
wrong values in each place, then random combinations:
``MINISYCL_FUZZ_EXAMPLES=N`` draws N of them (default 300) from a random seed.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from minisycl import runtime as sycl
from minisycl.passes.support import knobs

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = knobs.fuzz_examples(300)


def test_every_entry_point_with_wrong_arguments_raises_only_sycl_exceptions(tmp_path):
    seed = 1 if knobs.fuzz_examples(-1) != -1 else 0
    r = subprocess.run([sys.executable, os.path.join(HERE, "api_fuzz_child.py"), str(tmp_path), str(EXAMPLES),
                        str(seed)], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["cases"] > 5000
    assert result["bad"] == [], "\n".join(map(str, result["bad"]))


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("t")
    (d / "t.ksl").write_text("kernel fill(id<1> i, int* x) { x[i] = 1; }\n"
                             "kernel one(int* x) { x[0] = 7; }\n"
                             "device_global<long> wide_counter;\n"
                             "device_global<float> scale;\n")
    return sycl.build_program(d / "t.ksl")


def invalid(fn, *words):
    with pytest.raises(sycl.exception) as err:
        fn()
    assert err.value.code() == sycl.errc.invalid, (err.value.code(), str(err.value))
    for w in words:
        assert w in str(err.value), str(err.value)


# -- the examples, and values that were silently taken ----------------------

def test_a_launch_too_large_to_count_is_invalid(prog):
    q = sycl.queue()
    x = sycl.malloc_shared(4, np.int32, q)
    invalid(lambda: q.parallel_for(prog.kernel("fill"), 2 ** 63, x), "2^63")
    invalid(lambda: q.submit(lambda h: h.parallel_for(prog.kernel("fill"), 2 ** 63, x)), "2^63")


def test_memory_pool_load_bundle_and_build_program_check_their_arguments(tmp_path):
    q = sycl.queue()
    invalid(lambda: sycl.memory_pool(q), "memory_pool context must be a context", "got queue")
    invalid(lambda: sycl.load_bundle(None), "load_bundle path must be a file name")
    invalid(lambda: sycl.load_bundle(1), "load_bundle path")             # never an open file descriptor
    invalid(lambda: sycl.build_program(None), "build_program sources")
    (tmp_path / "a.ksl").write_text("kernel one(int* x) { x[0] = 7; }\n")
    invalid(lambda: sycl.build_program(tmp_path / "a.ksl", targets=3), "build_program targets")
    invalid(lambda: sycl.build_program(tmp_path / "a.ksl", split="every"), "build_program split")
    # one target name is one target, never its characters
    with pytest.raises(sycl.exception) as err:
        sycl.build_program(tmp_path / "a.ksl", targets="no_such_target")
    assert "no_such_target" in str(err.value) and "'n'" not in str(err.value)


def test_a_queue_that_is_not_a_queue_is_refused():
    invalid(lambda: sycl.malloc_shared(4, np.int32, "not a queue"), "queue", "got str")
    invalid(lambda: sycl.malloc_device(4, np.int32, 3), "queue", "got int")
    invalid(lambda: sycl.async_malloc(None, 4), "async_malloc queue")


def test_flags_are_booleans_not_truth_values():
    invalid(lambda: sycl.queue(in_order="no"), "queue in_order must be True or False")
    invalid(lambda: sycl.queue(enable_profiling=1), "queue enable_profiling")
    q = sycl.queue()
    invalid(lambda: sycl.command_graph(q).finalize(updatable="yes"), "finalize updatable")
    invalid(lambda: sycl.memory_pool(zero_init=np.array([1, 2])), "zero_init")
    invalid(lambda: sycl.reduction(sycl.malloc_shared(1, np.int32, q), sycl.plus, "yes"), "initialize_to_identity")
    invalid(lambda: sycl.command_graph(q).begin_recording(q, updatable="x"), "updatable")


def test_graph_add_takes_one_node_or_a_list_and_refuses_the_rest():
    q = sycl.queue()
    g = sycl.command_graph(q)
    a = g.add()
    b = g.add(depends_on=a)                     # a single node, as property::node::depends_on(node)
    c = g.add(depends_on=[a, b])
    assert b.get_predecessors() == [a] and c.get_predecessors() == [a, b]
    invalid(lambda: g.add(depends_on=3), "add depends_on must be a node or a list of nodes")
    invalid(lambda: g.add(depends_on=[a, "b"]), "add depends_on")
    invalid(lambda: g.make_edge(a, None), "make_edge dest must be a node")
    invalid(lambda: g.begin_recording("q"), "begin_recording queues must be a queue")
    invalid(lambda: sycl.dynamic_command_group(g, 3), "list of command-group functions")


def test_set_arg_out_of_range_is_refused_not_a_hang(prog):
    q = sycl.queue()
    x = sycl.malloc_shared(4, np.int32, q)
    invalid(lambda: q.submit(lambda h: (h.set_arg(2 ** 62, x), h.single_task(prog.kernel("one")))),
            "set_arg index", "out of range")
    invalid(lambda: q.submit(lambda h: h.set_arg("0", x)), "set_arg index must be an integer")


def test_selectors_and_aspects_are_checked():
    invalid(lambda: sycl.queue(device_selector=lambda d: None), "integer score")
    invalid(lambda: sycl.queue(3), "device")
    invalid(lambda: sycl.default_device().has(""), "not an aspect")
    invalid(lambda: sycl.default_device().has(3), "aspect")


def test_copy_checks_element_types_against_a_device_global(prog):
    q = sycl.queue()
    counter, scale = prog.device_global("wide_counter"), prog.device_global("scale")
    invalid(lambda: q.copy(np.array([1.5]), counter), "holds i64, not float64")
    invalid(lambda: q.copy(np.array([1], np.int32), counter), "holds i64, not int32")
    invalid(lambda: q.copy(np.array([1], np.int32), scale), "holds float, not int32")
    invalid(lambda: q.copy(sycl.malloc_shared(1, np.float64, q), counter), "not float64")
    out = np.zeros(1, np.float32)
    invalid(lambda: q.copy(counter, out), "not float32")
    q.copy(np.array([41], np.int64), counter).wait()
    got = np.zeros(1, np.int64)
    q.copy(counter, got).wait()
    assert got[0] == 41
    q.copy(np.array([2.5], np.float32), scale).wait()
    # memcpy copies bytes, as SYCL's does
    q.memcpy(counter, np.array([1.5]), 8).wait()


def test_copy_checks_element_types_between_arrays_and_usm():
    q = sycl.queue()
    invalid(lambda: q.copy(np.zeros(4, np.float32), sycl.malloc_shared(4, np.int32, q)), "element types must match")
