"""The child process of ``test_api_types.py``: calls every public runtime entry
point with arguments drawn from a pool of wrong types and values, and reports
each call whose outcome is neither a return nor ``sycl.exception``.

Run as ``python api_fuzz_child.py FOLDER EXAMPLES SEED``; writes
``FOLDER/result.json``: ``{"cases": N, "bad": [[entry, args, error], ...]}``.  A signal or a hang kills
this process, which the parent sees as that.
"""
import json
import os
import signal
import sys

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from minisycl import runtime as sycl
from minisycl.passes.support import knobs

KSL = """
kernel fillv(id<1> i, int* x, int v) { if (i == 0) x[0] = v; }
kernel grp(nd_item<1> it, int* x) { if (it.get_global_id(0) == 0) x[0] = 1; }
kernel one(int* x) { x[0] = 7; }
kernel summ(id<1> i, int* x, reducer<int, plus> r) { r += 1; }
device_global<long> counter;
host int deref(int* p) { return p[0]; }
"""

folder, EXAMPLES, SEED = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.chdir(folder)
with open("m.ksl", "w") as fh:
    fh.write(KSL)
prog = sycl.build_program("m.ksl")
q = sycl.queue()
ctx = q.get_context()
dev = q.get_device()
x = sycl.malloc_shared(16, np.int32, q)
xf = sycl.malloc_shared(16, np.float32, q)
freed = sycl.malloc_shared(4, np.int32, q)
sycl.free(freed)
k, kg, k1, ks = prog.kernel("fillv"), prog.kernel("grp"), prog.kernel("one"), prog.kernel("summ")
dg = prog.device_global("counter")
ev = q.single_task(k1, x)
g = sycl.command_graph(q)
n0 = g.add(lambda h: h.parallel_for(k, 4, x, 1))
eg = sycl.command_graph(q).finalize()
pool = sycl.memory_pool(ctx, dev)
red = sycl.reduction(x, sycl.plus)

class UserRaised(Exception):
    """An exception a user's callable (from ``POOL``) raised: it reaches the
    caller as the user's own, not as the runtime's fault."""


class UserFn:
    """A callable of the pool; what it raises is the user's (``UserRaised``)."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args):
        try:
            return self.fn(*args)
        except Exception as err:  # noqa: BLE001
            raise UserRaised(repr(err)) from err

    def __repr__(self):
        return f"UserFn({self.fn!r})"


#: wrong (and a few right) values of every kind
POOL = [None, "", "abc", "intel_gpu_pvc", b"x", 1.5, float("nan"), -1, 0, 3, 2 ** 31, 2 ** 63, 2 ** 64, -2 ** 63 - 1,
        True, [], [None], [0, 0, 0, 0], (1, 2, 3, 4), {}, {"a": 1}, object(), np.float32(1), np.int64(-1),
        np.array([1.0, 2.0]), np.zeros(4, np.int64), q, dev, ctx, x, xf, freed, k, kg, dg, ev, g, n0, eg, pool, red,
        prog, sycl.range(4), sycl.nd_range(4, 2), sycl.plus, sycl.errc.invalid, UserFn(print), UserFn(lambda h: None),
        UserFn(lambda: None), UserFn(lambda *a: 1), np.dtype(np.int32), "float32", UserFn(sycl.aspect)]
value = st.sampled_from(POOL)


def _dcg(graph, cgfs):
    return sycl.dynamic_command_group(graph, cgfs)


#: entry point name -> (function of drawn values, how many values it takes)
ENTRIES = {
    "queue(a)": (lambda a: sycl.queue(a), 1),
    "queue(in_order=a)": (lambda a: sycl.queue(in_order=a), 1),
    "queue(enable_profiling=a)": (lambda a: sycl.queue(enable_profiling=a), 1),
    "queue(context=a)": (lambda a: sycl.queue(context=a), 1),
    "queue(device_selector=a)": (lambda a: sycl.queue(device_selector=a), 1),
    "queue(a, context=b)": (lambda a, b: sycl.queue(a, context=b), 2),
    "context(a)": (lambda a: sycl.context(a), 1),
    "device.has(a)": (lambda a: dev.has(a), 1),
    "default_device(a)": (lambda a: sycl.default_device(a), 1),
    "q.submit(a)": (lambda a: q.submit(a), 1),
    "q.submit(cgf, depends_on=a)": (lambda a: q.submit(lambda h: None, depends_on=a), 1),
    "q.single_task(a, b)": (lambda a, b: q.single_task(a, b), 2),
    "q.single_task(k, a, depends_on=b)": (lambda a, b: q.single_task(k1, a, depends_on=b), 2),
    "q.parallel_for(a, b, c)": (lambda a, b, c: q.parallel_for(a, b, c), 3),
    "q.parallel_for(k, a, x, b)": (lambda a, b: q.parallel_for(k, a, x, b), 2),
    "q.parallel_for(kg, a, x)": (lambda a: q.parallel_for(kg, a, x), 1),
    "q.parallel_for(ks, a, x, b)": (lambda a, b: q.parallel_for(ks, a, x, b), 2),
    "q.memcpy(a, b, c)": (lambda a, b, c: q.memcpy(a, b, c), 3),
    "q.memcpy(a, b, c, d)": (lambda a, b, c, d: q.memcpy(a, b, c, d), 4),
    "q.memset(a, b, c)": (lambda a, b, c: q.memset(a, b, c), 3),
    "q.fill(a, b, c)": (lambda a, b, c: q.fill(a, b, c), 3),
    "q.copy(a, b, c)": (lambda a, b, c: q.copy(a, b, c), 3),
    "q.copy(a, b, c, d)": (lambda a, b, c, d: q.copy(a, b, c, d), 4),
    "q.copy(a, b)": (lambda a, b: q.copy(a, b), 2),
    "q.ext_oneapi_graph(a)": (lambda a: q.ext_oneapi_graph(a), 1),
    "q.ext_oneapi_submit_barrier(a)": (lambda a: q.ext_oneapi_submit_barrier(a), 1),
    "h.prefetch(a, b)": (lambda a, b: q.submit(lambda h: h.prefetch(a, b)), 2),
    "h.mem_advise(a, b, c)": (lambda a, b, c: q.submit(lambda h: h.mem_advise(a, b, c)), 3),
    "h.depends_on(a)": (lambda a: q.submit(lambda h: h.depends_on(a)), 1),
    "h.set_arg(a, b)": (lambda a, b: q.submit(lambda h: (h.set_arg(a, b), h.parallel_for(k, 4, x, 1))), 2),
    "h.host_task(a)": (lambda a: q.submit(lambda h: h.host_task(a)), 1),
    "h.single_task(a)": (lambda a: q.submit(lambda h: h.single_task(a)), 1),
    "h.parallel_for(k, a, b, c)": (lambda a, b, c: q.submit(lambda h: h.parallel_for(k, a, b, c)), 3),
    "malloc_device(a, b, c)": (lambda a, b, c: sycl.malloc_device(a, b, c), 3),
    "malloc_shared(a, b, c)": (lambda a, b, c: sycl.malloc_shared(a, b, c), 3),
    "malloc_host(a, b, c)": (lambda a, b, c: sycl.malloc_host(a, b, c), 3),
    "malloc_shared(4, int32, a)": (lambda a: sycl.malloc_shared(4, np.int32, a), 1),
    "free(a)": (lambda a: sycl.free(a) if a is not x and a is not xf else None, 1),
    "free(new, a)": (lambda a: sycl.free(sycl.malloc_shared(1, np.int32, q), a), 1),
    "range(a)": (lambda a: sycl.range(a), 1),
    "range(a, b, c)": (lambda a, b, c: sycl.range(a, b, c), 3),
    "nd_range(a, b)": (lambda a, b: sycl.nd_range(a, b), 2),
    "reduction(a, b)": (lambda a, b: sycl.reduction(a, b), 2),
    "reduction(x, plus, a)": (lambda a: sycl.reduction(x, sycl.plus, a), 1),
    "local_memory(a, b)": (lambda a, b: sycl.local_memory(a, b), 2),
    "command_graph(a)": (lambda a: sycl.command_graph(a), 1),
    "command_graph(a, b)": (lambda a, b: sycl.command_graph(a, b), 2),
    "command_graph(q, no_cycle_check=a)": (lambda a: sycl.command_graph(q, no_cycle_check=a), 1),
    "g.add(a)": (lambda a: sycl.command_graph(q).add(a), 1),
    "g.add(depends_on=a)": (lambda a: g.add(depends_on=a), 1),
    "g.add(depends_on_all_leaves=a)": (lambda a: g.add(depends_on_all_leaves=a), 1),
    "g.make_edge(a, b)": (lambda a, b: g.make_edge(a, b), 2),
    "g.make_edge(n0, a)": (lambda a: g.make_edge(n0, a), 1),
    "g.begin_recording(a)": (lambda a: (sycl.command_graph(q).begin_recording(a), q.ext_oneapi_get_graph()
                                        .end_recording()), 1),
    "g.begin_recording(q, a)": (lambda a: sycl.command_graph(q).begin_recording(sycl.queue(), a), 1),
    "g.end_recording(a)": (lambda a: sycl.command_graph(q).end_recording(a), 1),
    "g.finalize(updatable=a)": (lambda a: sycl.command_graph(q).finalize(updatable=a), 1),
    "g.finalize(enable_profiling=a)": (lambda a: sycl.command_graph(q).finalize(enable_profiling=a), 1),
    "g.print_graph(a)": (lambda a: g.print_graph(a), 1),
    "g.print_graph('g.dot', a)": (lambda a: g.print_graph("g.dot", a), 1),
    "eg.update(a)": (lambda a: eg.update(a), 1),
    "node.update_range(a)": (lambda a: n0.update_range(a), 1),
    "node.update_nd_range(a)": (lambda a: n0.update_nd_range(a), 1),
    "node.get_node_from_event(a)": (lambda a: sycl.node.get_node_from_event(a), 1),
    "dynamic_parameter(a, b)": (lambda a, b: sycl.dynamic_parameter(a, b), 2),
    "dynamic_parameter(g, 1).update(a)": (lambda a: sycl.dynamic_parameter(g, 1).update(a), 1),
    "dynamic_command_group(a, b)": (lambda a, b: _dcg(a, b), 2),
    "dcg.set_active_index(a)": (lambda a: _dcg(g, [lambda h: None]).set_active_index(a), 1),
    "memory_pool(a)": (lambda a: sycl.memory_pool(a), 1),
    "memory_pool(a, b)": (lambda a, b: sycl.memory_pool(a, b), 2),
    "memory_pool(ctx, dev, a)": (lambda a: sycl.memory_pool(ctx, dev, a), 1),
    "memory_pool(zero_init=a)": (lambda a: sycl.memory_pool(zero_init=a), 1),
    "memory_pool(initial_threshold=a)": (lambda a: sycl.memory_pool(initial_threshold=a), 1),
    "pool.has_property(a)": (lambda a: pool.has_property(a), 1),
    "async_malloc(a, b)": (lambda a, b: sycl.async_malloc(a, b), 2),
    "async_malloc(q, 4, a)": (lambda a: sycl.async_malloc(q, 4, a), 1),
    "async_malloc(q, 4, 'device', a)": (lambda a: sycl.async_malloc(q, 4, "device", a), 1),
    "async_malloc_from_pool(q, a, b)": (lambda a, b: sycl.async_malloc_from_pool(q, a, b), 2),
    "async_free(q, a)": (lambda a: sycl.async_free(q, a) if a is not x and a is not xf else None, 1),
    "load_bundle(a)": (lambda a: sycl.load_bundle(a), 1),
    "build_program(a)": (lambda a: sycl.build_program(a), 1),
    "build_program(m.ksl, targets=a)": (lambda a: sycl.build_program("m.ksl", targets=a), 1),
    "build_program(m.ksl, split=a)": (lambda a: sycl.build_program("m.ksl", split=a), 1),
    "prog.kernel(a)": (lambda a: prog.kernel(a), 1),
    "prog.host_function(a)": (lambda a: prog.host_function(a), 1),
    "prog.host_function('deref')(a)": (lambda a: prog.host_function("deref")(a), 1),
    "prog.device_global(a)": (lambda a: prog.device_global(a), 1),
    "dg.has_property(a)": (lambda a: dg.has_property(a), 1),
    "dg.get_property(a)": (lambda a: dg.get_property(a), 1),
    "ev.get_profiling_info(a)": (lambda a: sycl.queue(enable_profiling=True).single_task(k1, x)
                                 .get_profiling_info(a), 1),
}


class Hang(BaseException):
    """A call that ran longer than ``LIMIT`` seconds (Python code only: a hang in
    native code is seen by the parent's timeout)."""


def _hang(signum, frame):
    raise Hang()


LIMIT = 20
signal.signal(signal.SIGALRM, _hang)


def attempt(name, args):
    fn, _ = ENTRIES[name]
    signal.alarm(LIMIT)
    try:
        fn(*args)
    except (sycl.exception, UserRaised):
        return None
    except Hang:
        return f"no answer in {LIMIT} s"
    except Exception as err:  # noqa: BLE001 - what the test looks for
        return f"{type(err).__name__}: {err}"[:300]
    finally:
        signal.alarm(0)
    return None


bad, cases, kinds = [], [0], set()


def report(name, args, err):
    """Keep the first case of each (entry point, error type)."""
    if err is not None and (name, err.split(":")[0]) not in kinds:
        kinds.add((name, err.split(":")[0]))
        bad.append([name, [repr(a)[:60] for a in args], err])


@settings(max_examples=max(EXAMPLES, 1), deadline=None, database=None, derandomize=SEED == 0,
          phases=[Phase.generate], suppress_health_check=list(HealthCheck))
@given(data=st.data())
def run(data):
    name = data.draw(st.sampled_from(sorted(ENTRIES)))
    args = [data.draw(value) for _ in range(ENTRIES[name][1])]
    cases[0] += 1
    report(name, args, attempt(name, args))


# first every entry point with every pool value in each place (wrong values
# alone), then random combinations
import time
for name, (_, arity) in sorted(ENTRIES.items()):
    t0 = time.time()
    for pos in range(arity):
        for v in POOL:
            args = [POOL[9]] * arity         # 3: a harmless valid count
            args[pos] = v
            cases[0] += 1
            report(name, args, attempt(name, args))
    if knobs.fuzz_verbose():
        print(f"{time.time() - t0:6.2f}s {name}", file=sys.stderr, flush=True)
if EXAMPLES:
    run()
with open("result.json", "w") as fh:                 # (not stdout: a call may have closed it)
    json.dump({"cases": cases[0], "bad": bad}, fh)
