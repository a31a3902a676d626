"""Specialization constants end to end: the front end's reads, the build's
emulation images and defaults-folded images, the runtime's specialised JIT,
kernel bundles, and every misuse an ``errc::invalid`` naming the constant."""
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from minisycl import runtime as sycl

SOURCE = """
struct Params { int n; float scale; };
specialization_id<int> bound{8};
specialization_id<float> factor = 2.5f;
specialization_id<Params> params{{4, 0.5f}};
specialization_id<int[3]> arr{{1, 2, 3}};
static specialization_id<bool> flag{true};

kernel k(id<1> i, float* out, kernel_handler kh) {
  int n = kh.get_specialization_constant<bound>();
  Params p = kh.get_specialization_constant<params>();
  float s = kh.get_specialization_constant<factor>() * p.scale;
  int a = kh.get_specialization_constant<arr>()[(int)i % 3];
  if (kh.get_specialization_constant<flag>()) s += 1.0f;
  out[i] = s * (float)(n + a + p.n);
}

kernel plain(id<1> i, float* out) { out[i] = 1.0f; }
"""


def expected(bound=8, factor=2.5, params=(4, 0.5), arr=(1, 2, 3), flag=True, n=6):
    s = np.float32(factor) * np.float32(params[1]) + (1.0 if flag else 0.0)
    return [float(np.float32(s) * np.float32(bound + arr[i % 3] + params[0])) for i in range(n)]


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("spec")
    (d / "s.ksl").write_text(SOURCE)
    return sycl.build_program(str(d / "s.ksl"))


def run(prog, values=None, bundle=None):
    q = sycl.queue()
    out = sycl.malloc_shared(6, np.float32, q)

    def cg(h):
        if bundle is not None:
            h.use_kernel_bundle(bundle)
        for name, v in (values or {}).items():
            h.set_specialization_constant(name, v)
        h.parallel_for(prog.kernel("k"), 6, out)
    q.submit(cg).wait()
    return np.asarray(out).tolist()


def invalid(fn, *words):
    with pytest.raises(sycl.exception) as err:
        fn()
    assert err.value.code() == sycl.errc.invalid, err.value
    for w in words:
        assert w in str(err.value), str(err.value)


def test_defaults_come_from_the_defaults_folded_image(prog):
    assert prog.kernel("k").handler and prog.kernel("k").params == ("float*",)
    assert run(prog) == expected()
    main = prog._image_for("k", sycl.default_device(), default=True)
    assert prog.images[main].properties.get("SYCL/misc properties", "specConstsReplacedWithDefault") == 1


def test_values_set_are_folded_and_cached_per_set(prog):
    before = prog.builds
    assert run(prog, {"bound": 100, "params": (10, 2.0), "arr": [5, 6, 7], "flag": False}) == \
        expected(bound=100, params=(10, 2.0), arr=(5, 6, 7), flag=False)
    assert prog.builds == before + 1
    assert run(prog, {"bound": 100, "params": (10, 2.0), "arr": [5, 6, 7], "flag": False}) == \
        expected(bound=100, params=(10, 2.0), arr=(5, 6, 7), flag=False)
    assert prog.builds == before + 1                  # the same values: the cached build
    assert run(prog, {"bound": 101}) == expected(bound=101)
    assert prog.builds == before + 2
    assert run(prog, {"bound": 8}) == expected()     # the defaults again: no new build
    assert prog.builds == before + 2


def test_raw_bytes_and_numpy_values(prog):
    assert run(prog, {"params": np.array([(3, 1.0)], dtype=[("n", "<i4"), ("s", "<f4")])[0]}) == \
        expected(params=(3, 1.0))
    assert run(prog, {"arr": np.array([9, 8, 7], dtype=np.int32)}) == expected(arr=(9, 8, 7))


def test_static_constant_by_its_source_name(prog):
    assert run(prog, {"flag": False}) == expected(flag=False)


@pytest.mark.parametrize("name, value, words", [
    ("bound", 1.5, ["'bound'", "must be an integer"]),
    ("bound", 2 ** 40, ["'bound'", "does not fit"]),
    ("factor", "x", ["'factor'", "must be a number"]),
    ("params", (1,), ["'params'", "1 elements given, the constant has 2"]),
    ("params", b"123", ["'params'", "3 bytes, the constant 8"]),
    ("params", 3, ["'params'", "a struct of 2 elements"]),
    ("arr", [1, 2, 3, 4], ["'arr'", "4 elements given"]),
    ("arr", [1, 2.5, 3], ["'arr'", "element 1", "must be an integer"]),
    ("nope", 1, ["no specialization constant named 'nope'"]),
])
def test_wrong_values_are_invalid_naming_the_constant(prog, name, value, words):
    invalid(lambda: run(prog, {name: value}), *words)


def test_kernel_without_constants_ignores_values(prog):
    q = sycl.queue()
    out = sycl.malloc_shared(2, np.float32, q)
    q.submit(lambda h: (h.set_specialization_constant("bound", 3), h.parallel_for(prog.kernel("plain"), 2, out))).wait()
    q.wait()
    assert np.asarray(out).tolist() == [1.0, 1.0]


def test_kernel_bundle_states(prog):
    ids = sycl.get_kernel_ids(prog)
    assert [i.get_name() for i in ids] == ["k", "plain"]
    b = sycl.get_kernel_bundle(prog, state=sycl.bundle_state.input)
    assert b.state == "input" and b.has_kernel("k") and b.has_kernel(ids[1]) and not b.has_kernel("zzz")
    assert b.contains_specialization_constants() and b.has_specialization_constant("bound")
    assert b.get_specialization_constant("params") == (4, 0.5)
    assert b.get_specialization_constant("arr") == [1, 2, 3]
    b.set_specialization_constant("bound", 7)
    assert b.get_specialization_constant("bound") == 7
    invalid(lambda: b.set_specialization_constant("bound", "7"), "'bound'")
    invalid(lambda: b.set_specialization_constant("zzz", 1), "'zzz'")
    invalid(lambda: b.get_kernel("k"), "input state")
    invalid(lambda: sycl.link(b), "object state")
    obj = sycl.compile(b)
    assert obj.state == "object"
    invalid(lambda: obj.set_specialization_constant("bound", 1), "object state")
    invalid(lambda: sycl.compile(obj), "input state")
    exe = sycl.link([obj])
    assert exe.state == "executable" and exe.get_specialization_constant("bound") == 7
    invalid(lambda: exe.set_specialization_constant("bound", 3), "executable state")
    assert run(prog, bundle=exe) == expected(bound=7)
    exe2 = sycl.build(sycl.get_kernel_bundle(prog, state=sycl.bundle_state.input))
    assert run(prog, bundle=exe2) == expected()
    invalid(lambda: run(prog, bundle=b), "executable state")
    invalid(lambda: run(prog, {"bound": 1}, bundle=exe), "after use_kernel_bundle")
    k = exe.get_kernel("k")
    assert k.spec is not None and k.name == "k"
    exe_default = sycl.get_kernel_bundle(prog)
    assert exe_default.state == "executable" and exe_default.get_kernel("k") is prog.kernel("k")


def test_bundle_misuse(prog):
    invalid(lambda: sycl.get_kernel_bundle("x"), "expects a program")
    invalid(lambda: sycl.get_kernel_bundle(prog, state="ready"), "unknown bundle state")
    invalid(lambda: sycl.get_kernel_bundle(prog, kernel_ids=["zzz"]), "no kernel named 'zzz'")
    invalid(lambda: sycl.queue().submit(lambda h: h.use_kernel_bundle(3)), "expects a kernel_bundle")


# -- generated: constant types and values, the kernel sees exactly the values set ------------

_SCALARS = {"int": (st.integers(-2 ** 31, 2 ** 31 - 1), "(float)"), "short": (st.integers(-2 ** 15, 2 ** 15 - 1), "(float)"),
            "char": (st.integers(-128, 127), "(float)"),
            "float": (st.floats(-1e6, 1e6, width=32), ""), "bool": (st.booleans(), "(float)")}


@st.composite
def constant_types(draw):
    """A specialization constant's type: a scalar, an array of scalars or a struct of scalars."""
    kind = draw(st.sampled_from(["scalar", "array", "struct"]))
    if kind == "scalar":
        return ("scalar", draw(st.sampled_from(sorted(_SCALARS))))
    if kind == "array":
        return ("array", draw(st.sampled_from(["int", "float", "char"])), draw(st.integers(1, 4)))
    return ("struct", tuple(draw(st.lists(st.sampled_from(["int", "float", "char", "short", "bool"]),
                                         min_size=1, max_size=4))))


def _leaves(ty):
    if ty[0] == "scalar":
        return [ty[1]]
    if ty[0] == "array":
        return [ty[1]] * ty[2]
    return list(ty[1])


@given(types=st.lists(constant_types(), min_size=1, max_size=3), data=st.data())
@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
def test_generated_constants_reach_the_kernel(tmp_path_factory, types, data):
    decls, reads, structs, values, defaults = [], [], [], {}, {}
    slot = 0
    for c, ty in enumerate(types):
        leaves = _leaves(ty)
        dflt = [data.draw(_SCALARS[t][0]) for t in leaves]
        lit = [("true" if v else "false") if t == "bool" else (f"{v!r}f" if t == "float" else str(v))
               for t, v in zip(leaves, dflt)]
        if ty[0] == "scalar":
            decls.append(f"specialization_id<{ty[1]}> c{c}{{{lit[0]}}};")
            reads.append(f"out[{slot}] = {_SCALARS[ty[1]][1]}kh.get_specialization_constant<c{c}>();")
        elif ty[0] == "array":
            decls.append(f"specialization_id<{ty[1]}[{ty[2]}]> c{c}{{{{{', '.join(lit)}}}}};")
            for j in range(ty[2]):
                reads.append(f"out[{slot + j}] = (float)kh.get_specialization_constant<c{c}>()[{j}];")
        else:
            fields = " ".join(f"{t} f{j};" for j, t in enumerate(ty[1]))
            structs.append(f"struct S{c} {{ {fields} }};")
            decls.append(f"specialization_id<S{c}> c{c}{{{{{', '.join(lit)}}}}};")
            reads.append(f"S{c} v{c} = kh.get_specialization_constant<c{c}>();")
            for j in range(len(ty[1])):
                reads.append(f"out[{slot + j}] = (float)v{c}.f{j};")
        new = [data.draw(_SCALARS[t][0]) for t in leaves]
        if data.draw(st.booleans()):
            values[f"c{c}"] = new[0] if ty[0] == "scalar" else (list(new) if ty[0] == "array" else tuple(new))
            defaults.update({slot + j: v for j, v in enumerate(new)})
        else:
            defaults.update({slot + j: v for j, v in enumerate(dflt)})
        slot += len(leaves)
    src = "\n".join(structs + decls) + "\nkernel g(float* out, kernel_handler kh) {\n  " + "\n  ".join(reads) + "\n}\n"
    d = tmp_path_factory.mktemp("gen")
    (d / "g.ksl").write_text(src)
    prog = sycl.build_program(str(d / "g.ksl"))
    q = sycl.queue()
    out = sycl.malloc_shared(slot, np.float32, q)
    q.submit(lambda h: ([h.set_specialization_constant(n, v) for n, v in values.items()],
                        h.single_task(prog.kernel("g"), out))).wait()
    want = [float(np.float32(float(defaults[i]))) for i in range(slot)]
    assert np.asarray(out).tolist() == want, src


def test_gpu_build_folds_the_handler_parameter(prog):
    """A device without launchers (an NVIDIA GPU) gets the kernel's body reading
    the constant global instead of the handler parameter."""
    from minisycl.passes.ir import Module
    from minisycl.runtime.spec_constants import SPEC_GLOBAL, fold_handler_parameters
    index = next(i for i, im in enumerate(prog.images) if "k" in im.entry_points
                 and "SYCL/specialization constants" in im.properties)
    module = Module.parse(prog._image_view(index).text())
    blob = prog.spec_table("k").buffer({})
    assert fold_handler_parameters(module, ["k", "plain"], blob) == ["k"]
    body = module.functions["k"].body
    assert f"store ptr @{SPEC_GLOBAL}, ptr %kh.addr" in body
    assert re.search(r"%kh(?![-a-zA-Z$._0-9])", body) is None
    assert f"@{SPEC_GLOBAL} = private unnamed_addr constant [{len(blob)} x i8]" in module.text()
    module.verify()


def test_gpu_code_of_a_specialised_kernel_never_reads_the_handler(prog):
    """The PTX runtime/cuda builds for a set of values (no GPU needed to generate it):
    the constants are folded in, the kernel_handler parameter is never loaded."""
    from minisycl.passes.ir import emit_ptx
    from minisycl.runtime.cuda.codegen import PTX_FEATURES, lower_images
    index = next(i for i, im in enumerate(prog.images) if "k" in im.entry_points
                 and "SYCL/specialization constants" in im.properties)
    table = prog.spec_table("k")
    blob = table.buffer({"bound": table.encode(table.find("bound"), 100)})
    try:
        ptx = emit_ptx([lower_images([prog.images[index].ir], ["img"], False, ["k"], blob).text()], "sm_90",
                       PTX_FEATURES, keep=["k"])
    except Exception as err:                        # an llvmlite without the NVPTX back end
        pytest.skip(f"no PTX generation here: {err}")
    entry = ptx[ptx.index(".entry k("):]
    params = re.findall(r"k_param_(\d+)", entry[:entry.index(")")])
    assert params and f"[k_param_{params[-1]}]" not in entry
