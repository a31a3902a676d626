"""Executable graph update against a model (issue 28 point 1's fast paths): random
sequences of dynamic-parameter updates (some refused), node updates, new ranges
and replays, each replay's memory compared with what a Python model of the
extension's rules computes.

The rules: a node of the executable graph runs the arguments and range its node
had at ``finalize`` or at the last ``update`` naming it, whatever happened to
the modifiable graph since; a refused ``dynamic_parameter.update`` changes
nothing.  The cheap ways an update takes (only the changed argument packed
again, a node's copy changed in place, its plan entry repointed: ``update.py``,
``plan.py``) must keep them for every kind of argument (a struct by value,
whose slot points into its own slots, a pointer, integers) and for both kinds of
plan step (a small kernel in the native plan, a large one run on its own)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from minisycl import runtime as sycl
from minisycl.passes.support import knobs

KSL = """
struct Pair { int a; float b; double c; };
kernel mix(id<1> i, Pair s, int* p, int v, long t) { p[i] = p[i] + v + s.a + (int)t; }
"""
BIG = 1 << 15          # a kernel of this many work-items is a step of its own in the host plan (plan.py)
PAIR = np.dtype({"names": ["a", "b", "c"], "formats": [np.int32, np.float32, np.float64], "offsets": [0, 4, 8],
                 "itemsize": 16})
KINDS = ("s", "p", "v", "t")           # the kernel's arguments, in order


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("model")
    (d / "model.ksl").write_text(KSL)
    return sycl.build_program([str(d / "model.ksl")])


def _pair(a: int) -> bytes:
    value = np.zeros((), PAIR)
    value["a"], value["b"], value["c"] = a, 0.5, 2.0
    return value.tobytes()


small = st.integers(-1000, 1000)
ranges = st.sampled_from([1, 2, 4, BIG])
# an argument: its dynamic parameter, a value, or (t only) v's dynamic parameter, which a long takes
# where an int refuses it: an update that one kernel argument takes and another refuses changes nothing
node_args = st.tuples(*[st.one_of(st.just("dyn"), small if k != "p" else st.integers(0, 1),
                                  *([st.just("dyn_v")] if k == "t" else [])) for k in KINDS])
operation = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(KINDS), small, st.booleans()),
    st.tuples(st.just("update"), st.lists(st.integers(0, 5), min_size=1, max_size=3)),
    st.tuples(st.just("range"), st.integers(0, 5), ranges),
    st.tuples(st.just("replay")),
    # the common use: a new value, the node updated, a replay
    st.tuples(st.just("cycle"), st.sampled_from(KINDS), small, st.integers(0, 5)))


@settings(max_examples=knobs.fuzz_examples(40), deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(nodes=st.lists(st.tuples(node_args, ranges), min_size=1, max_size=6),
       initial=st.tuples(small, st.integers(0, 1), small, small),
       ops=st.lists(operation, min_size=1, max_size=16))
# v's new value taken by the first node's long, refused by the second's int: the first is rolled back
@example(nodes=[(("dyn", 0, 1, "dyn_v"), 4), (("dyn", 0, "dyn", 2), 4)], initial=(1, 0, 5, 0),
         ops=[("set", "v", 7, False), ("update", [0, 1]), ("replay",)])
def test_updates_and_replays_follow_the_model(prog, nodes, initial, ops):
    q = sycl.queue(in_order=True)
    mem = [sycl.malloc_shared(BIG, np.int32, q) for _ in range(2)]
    floats = sycl.malloc_shared(BIG, np.float32, q)     # a pointer of the wrong type: refused
    try:
        for m in mem:
            q.memset(m, 0, m.nbytes).wait()
        _run(prog, q, mem, floats, nodes, initial, ops)
    finally:
        for m in (*mem, floats):
            sycl.free(m, q)


def _run(prog, q, mem, floats, nodes, initial, ops):
    current = dict(zip(KINDS, initial))                  # each dynamic parameter's value (model)
    as_arg = {"s": _pair, "p": lambda i: mem[i], "v": int, "t": int}
    g = sycl.command_graph(q)
    dyn = {k: sycl.dynamic_parameter(g, as_arg[k](current[k])) for k in KINDS}
    made, prev = [], None
    for args, r in nodes:
        real = [dyn[k] if a == "dyn" else dyn["v"] if a == "dyn_v" else as_arg[k](a) for k, a in zip(KINDS, args)]
        prev = g.add(lambda h, real=real, r=r: h.parallel_for(prog.kernel("mix"), r, *real),
                     depends_on=[prev] if prev is not None else None)
        made.append(prev)
    ex = g.finalize(updatable=True)
    modifiable_range = [r for _, r in nodes]

    def resolved(j):
        s, p, v, t = (current[k] if a == "dyn" else current["v"] if a == "dyn_v" else a
                      for k, a in zip(KINDS, nodes[j][0]))
        return s, p, v, (t + (1 << 31)) % (1 << 32) - (1 << 31)       # (int)t
    runs = [(resolved(j), modifiable_range[j]) for j in range(len(nodes))]    # what the executable graph runs
    expected = [np.zeros(BIG, np.int64) for _ in mem]
    for op in _expanded(ops):
        if op[0] == "set":
            _, kind, value, valid = op
            if kind == "p":
                value = value & 1
            if valid:
                dyn[kind].update(as_arg[kind](value))
                current[kind] = value
                continue
            bad = {"s": _pair(value)[:15], "p": floats, "v": (1 << 40) + value, "t": 1 << 70}[kind]
            if all(args[KINDS.index(kind)] != "dyn" for args, _ in nodes):
                dyn[kind].update(bad)   # no kernel argument refuses it (a long takes v's)
                current[kind] = bad
                continue
            with pytest.raises(sycl.exception) as info:
                dyn[kind].update(bad)
            assert info.value.code() == sycl.errc.invalid
        elif op[0] == "update":
            picked = sorted({j % len(nodes) for j in op[1]})
            ex.update(made[picked[0]] if len(picked) == 1 else [made[j] for j in picked])
            for j in picked:
                runs[j] = (resolved(j), modifiable_range[j])
        elif op[0] == "range":
            j = op[1] % len(nodes)
            made[j].update_range(sycl.range(op[2]))
            modifiable_range[j] = op[2]
        else:
            q.ext_oneapi_graph(ex).wait()
            for (s, p, v, t), r in runs:
                expected[p][:r] += v + s + t
            for m, want in zip(mem, expected):
                assert (np.asarray(m).astype(np.int64) == want).all(), (nodes, ops)


def _expanded(ops):
    """The operations, a "cycle" as its three steps."""
    for op in ops:
        if op[0] == "cycle":
            yield "set", op[1], op[2], True
            yield "update", [op[3]]
            yield ("replay",)
        else:
            yield op
