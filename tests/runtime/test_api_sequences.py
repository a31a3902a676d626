"""Sequences of runtime API calls against a small model (issue 27, points 7 and
9): a hypothesis state machine allocates, frees, fills, copies and memsets USM,
launches a kernel, and records and replays a command graph, each step with
valid or invalid arguments, and checks every allocation's contents against a
NumPy model after each step; a use of freed memory, an overrun or a wrong type
must be ``sycl.exception(errc.invalid)`` and change nothing.

It runs in a child process (``test_sequences_in_a_child``) so that a crash is
seen as one; ``MINISYCL_FUZZ_EXAMPLES=N`` runs N sequences (default 30).
"""
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from minisycl import runtime as sycl
from minisycl.passes.support import knobs

EXAMPLES = knobs.fuzz_examples(30)
LONG_RUN = knobs.fuzz_examples(-1) != -1
#: the state machine is collected only in the child process, which names it on its command line
IN_CHILD = any(arg.endswith("::TestUSMQueueGraph") for arg in sys.argv)
KSL = "kernel add(id<1> i, int* x, int v) { x[i] = x[i] + v; }\n"


def test_sequences_in_a_child(tmp_path):
    r = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-x",
                        f"{os.path.abspath(__file__)}::TestUSMQueueGraph", "--basetemp", str(tmp_path / "b")],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert " 1 passed" in r.stdout, r.stdout[-2000:]


_PROGRAM = []


def program():
    if not _PROGRAM:
        import tempfile
        path = os.path.join(tempfile.mkdtemp(prefix="minisycl-seq-"), "seq.ksl")
        with open(path, "w") as fh:
            fh.write(KSL)
        _PROGRAM.append(sycl.build_program(path))
    return _PROGRAM[0]


class USMQueueGraph(RuleBasedStateMachine):
    """The model: for each allocation its NumPy copy, or ``None`` once freed."""

    def __init__(self):
        super().__init__()
        self.prog = program()
        self.q = sycl.queue()
        self.allocs: list = []          # (allocation, model array or None)
        self.graph = None
        self.graph_model = None         # what one replay of the executable graph does: (index, value)

    def refused(self, fn):
        with pytest.raises(sycl.exception) as err:
            fn()
        assert err.value.code() == sycl.errc.invalid, str(err.value)

    def live(self, i):
        return self.allocs[i % len(self.allocs)] if self.allocs else (None, None)

    @rule(count=st.integers(0, 64), kind=st.sampled_from(["device", "shared", "host"]))
    def allocate(self, count, kind):
        a = getattr(sycl, f"malloc_{kind}")(count, np.int32, self.q)
        self.q.memset(a, 0, 4 * count).wait()           # (a GPU's fresh memory is not zero)
        self.allocs.append((a, np.zeros(count, np.int32)))

    @rule(count=st.one_of(st.integers(-5, -1), st.just(2 ** 70), st.floats(), st.text(max_size=2)))
    def allocate_wrong(self, count):
        with pytest.raises(sycl.exception):
            sycl.malloc_shared(count, np.int32, self.q)

    @precondition(lambda self: self.allocs)
    @rule(i=st.integers(0, 99))
    def free(self, i):
        a, model = self.live(i)
        if model is None:
            self.refused(lambda: sycl.free(a, self.q))
        else:
            sycl.free(a, self.q)
            self.allocs[self.allocs.index((a, model))] = (a, None)

    @precondition(lambda self: self.allocs)
    @rule(i=st.integers(0, 99), value=st.integers(-2 ** 31, 2 ** 31 - 1), count=st.integers(0, 80))
    def fill(self, i, value, count):
        a, model = self.live(i)
        if model is None or count > len(model):
            self.refused(lambda: self.q.fill(a, np.int32(value), count))
            return
        self.q.fill(a, np.int32(value), count).wait()
        model[:count] = value

    @precondition(lambda self: self.allocs)
    @rule(i=st.integers(0, 99), byte=st.integers(0, 255), nbytes=st.integers(0, 300))
    def memset(self, i, byte, nbytes):
        a, model = self.live(i)
        if model is None or nbytes > model.nbytes:
            self.refused(lambda: self.q.memset(a, byte, nbytes))
            return
        self.q.memset(a, byte, nbytes).wait()
        model.view(np.uint8)[:nbytes] = byte

    @precondition(lambda self: len(self.allocs) >= 2)
    @rule(i=st.integers(0, 99), j=st.integers(0, 99), count=st.one_of(st.none(), st.integers(0, 80)))
    def copy(self, i, j, count):
        (s, ms), (d, md) = self.live(i), self.live(j)
        if ms is None or md is None or (count is None and len(ms) != len(md)) or \
                (count is not None and (count > len(ms) or count > len(md))):
            self.refused(lambda: self.q.copy(s, d, count))
            return
        self.q.copy(s, d, count).wait()
        n = len(ms) if count is None else count
        md[:n] = ms[:n].copy()

    @precondition(lambda self: self.allocs)
    @rule(i=st.integers(0, 99), wrong=st.sampled_from([np.zeros(4, np.float32), "x", None, 1.5]))
    def copy_wrong_type(self, i, wrong):
        a, _ = self.live(i)
        self.refused(lambda: self.q.copy(wrong, a))

    @precondition(lambda self: self.allocs)
    @rule(i=st.integers(0, 99), value=st.integers(-1000, 1000))
    def launch(self, i, value):
        a, model = self.live(i)
        if model is None:
            self.refused(lambda: self.q.parallel_for(self.prog.kernel("add"), len(a), a, value))
            return
        self.q.parallel_for(self.prog.kernel("add"), len(model), a, value).wait()
        model += np.int32(value)

    @precondition(lambda self: self.allocs)
    @rule(i=st.integers(0, 99), value=st.integers(-1000, 1000))
    def record_graph(self, i, value):
        a, model = self.live(i)
        g = sycl.command_graph(self.q)
        if model is None:
            self.refused(lambda: g.add(lambda h: h.parallel_for(self.prog.kernel("add"), len(a), a, value)))
            return
        g.add(lambda h: h.parallel_for(self.prog.kernel("add"), len(model), a, value))
        self.graph, self.graph_model = g.finalize(), (a, value)

    @precondition(lambda self: self.graph is not None)
    @rule()
    def replay_graph(self):
        a, value = self.graph_model
        entry = next(((x, m) for x, m in self.allocs if x is a), None)
        if entry is None or entry[1] is None:
            self.refused(lambda: self.q.ext_oneapi_graph(self.graph))
            return
        self.q.ext_oneapi_graph(self.graph).wait()
        entry[1][:] += np.int32(value)

    @invariant()
    def contents_match_the_model(self):
        for a, model in self.allocs:
            if model is not None:
                seen = np.empty_like(model)        # device memory is read through a copy, as on a GPU
                self.q.copy(a, seen).wait()
                assert np.array_equal(seen, model), (a, model, seen)


TestUSMQueueGraph = USMQueueGraph.TestCase
TestUSMQueueGraph.settings = settings(max_examples=EXAMPLES, stateful_step_count=25, deadline=None, database=None,
                                      derandomize=not LONG_RUN,
                                      suppress_health_check=list(HealthCheck))
if not IN_CHILD:        # collected only in the child process
    del TestUSMQueueGraph
