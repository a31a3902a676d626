"""Which build a specialised launch runs (``program.linked_for``): a device without
launchers (an NVIDIA GPU) folds a set of values into one kernel's code, so the
build a launch gets must be made with that kernel's values folded in.  On the
H200, a second kernel launched with the same values as the first got the first
one's build, in which the second kernel still had its defaults.  The back end
here is a stand-in that records what each build was asked to fold; a generator
launches random kernels with random values in random order."""
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from minisycl import runtime as sycl
from minisycl.passes.support import knobs

SOURCE = """
specialization_id<int> trip{4};
specialization_id<int> stride{2};
kernel a(float* y, kernel_handler kh) { y[0] = (float)kh.get_specialization_constant<trip>(); }
kernel b(float* y, kernel_handler kh) { y[0] = (float)(kh.get_specialization_constant<trip>() * 2); }
kernel c(float* y, kernel_handler kh) { y[0] = (float)kh.get_specialization_constant<stride>(); }
kernel plain(float* y) { y[0] = 1.0f; }
specialization_id<float> scale{1.0f};
kernel d(float* y, kernel_handler kh) {
  y[0] = kh.get_specialization_constant<scale>() * (float)(kh.get_specialization_constant<trip>()
                                                            + kh.get_specialization_constant<stride>());
}
"""

#: the stand-in back end's tests: what they check of a GPU's builds needs no GPU, and runs once
STAND_IN = pytest.mark.cpu_only("a stand-in back end of a device without launchers, on the host")


class _Built(SimpleNamespace):
    """What the stand-in back end built: the kernels and what was folded into each."""


class _FoldingBackend:
    """A GPU-like back end (``whole_program``, no launchers) that records its builds."""

    whole_program = True
    runs_on_host = False

    def __init__(self):
        self.builds = []

    def link_images(self, images, kernels, names, signatures, fold, sub_group_size):
        built = _Built(kernels=list(kernels), fold=dict(fold or {}))
        self.builds.append(built)
        return built

    def bind_globals(self, prog, linked, ctx):
        pass


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("builds")
    (d / "s.ksl").write_text(SOURCE)
    return sycl.build_program(str(d / "s.ksl"))


def _device(cpu):
    return SimpleNamespace(name="stand-in-gpu", aspects=cpu.aspects, sub_group_sizes=[32], impl=_FoldingBackend())


def _values(prog, name, trip, stride):
    table = prog.spec_table(name)
    wanted = {"trip": trip, "stride": stride}
    return table.buffer({n: table.encode(table.find(n), v) for n, v in wanted.items() if table.find(n) is not None})


@STAND_IN
def test_two_kernels_given_the_same_values_get_builds_with_their_own_values(prog):
    dev = _device(sycl.queue().device)
    ctx = SimpleNamespace(id="stand-in")
    spec = _values(prog, "a", 64, 1)
    first, _ = prog.linked_for("a", dev, ctx, spec)
    second, _ = prog.linked_for("b", dev, ctx, _values(prog, "b", 64, 1))
    assert first.fold["a"] == spec
    assert second.fold["b"] == _values(prog, "b", 64, 1)


@STAND_IN
@settings(max_examples=knobs.fuzz_examples(40), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c", "plain"]), st.sampled_from([None, 4, 16, 64]),
                          st.sampled_from([None, 1, 2])), min_size=1, max_size=12))
def test_every_launch_runs_a_build_with_its_kernels_values(prog, launches):
    dev = _device(sycl.queue().device)
    ctx = SimpleNamespace(id=f"stand-in-{id(launches)}")
    for name, trip, stride in launches:
        spec = None
        if name != "plain" and (trip is not None or stride is not None):
            spec = _values(prog, name, trip if trip is not None else 4, stride if stride is not None else 2)
        linked, _ = prog.linked_for(name, dev, ctx, spec)
        assert name in linked.kernels
        if spec is not None:
            assert linked.fold[name] == spec, (name, trip, stride)
        elif name != "plain":
            assert name not in linked.fold or linked.fold[name] == prog.spec_table(name).defaults


def test_kernels_given_the_same_values_each_read_them(prog):
    """The same on the devices present (the GPU's builds, the CPU's launchers):
    each kernel launched with the values after another was reads them."""
    q = sycl.queue()
    out = sycl.malloc_shared(1, np.float32, q)
    got = {}
    for name in ("a", "b", "c", "a"):
        q.submit(lambda h, name=name: (h.set_specialization_constant("trip", 64),
                                       h.set_specialization_constant("stride", 3),
                                       h.single_task(prog.kernel(name), out))).wait()
        got[name] = float(np.asarray(out)[0])
    assert got == {"a": 64.0, "b": 128.0, "c": 3.0}


@STAND_IN
@settings(max_examples=knobs.fuzz_examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.dictionaries(st.sampled_from(["trip", "stride", "scale"]),
                                st.one_of(st.integers(-2 ** 31, 2 ** 31 - 1), st.booleans(), st.floats(width=32),
                                          st.sampled_from([0.0, -0.0, float("nan"), -float("nan")]),
                                          st.just(np.int32(7)), st.just(np.float64(2.0)),
                                          st.sampled_from([np.float32(0.0), np.float32(-0.0)]))),
                min_size=1, max_size=8))
def test_values_given_again_specialise_as_the_first_time(prog, sets):
    """``kernel.specialized`` answers values given before from a table: the answer
    (or the error) is what encoding them afresh gives, whatever their types (-0.0
    and 0.0 are equal values but other constants)."""
    k = prog.kernel("d")
    for values in sets:
        for _ in range(2):
            try:
                want = k._specialize(values).spec
            except sycl.exception as err:
                with pytest.raises(sycl.exception) as got:
                    k.specialized(values)
                assert got.value.code() == err.code() and str(got.value) == str(err)
                continue
            assert k.specialized(values).spec == want
