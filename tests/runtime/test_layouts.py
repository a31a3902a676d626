"""The layouts of a program's classes from Python (issue 29 point 6): ``prog.sizeof``
and ``prog.dtype`` carry what the front end computed, the bundle keeps it, and it
is what LLVM itself lays out for the emitted struct types (checked on generated
classes), so host code never hard-codes an object's size."""
import numpy as np
import llvmlite.binding as llvm
import pytest
from hypothesis import given, settings, strategies as st

from minisycl import runtime as sycl
from minisycl.frontend import compile_source
from minisycl.frontend.data_layout import DATALAYOUT
from minisycl.postlink.bundle import Bundle, BundleError

SOURCE = """
struct P { int a; float b; };
class Animal { float weight; int legs[4]; virtual float speed() [[indirectly_callable]] { return 1.0f; } };
class Dog : Animal { P p; double w; long tag; char c; };
struct Grid { P cells[2][3]; half h; bool ok; };
kernel k(Dog* d, Grid* g) { d->w = 2.5; d->p.b = 1.5f; d->legs[3] = 7; g->cells[1][2].a = 9; g->ok = true; }
"""


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    path = tmp_path_factory.mktemp("layouts") / "animals.ksl"
    path.write_text(SOURCE)
    return sycl.build_program([str(path)])


def test_sizes_and_fields(prog):
    assert prog.sizeof("P") == 8
    assert prog.sizeof("Animal") == 32                  # vptr, float, int[4], padding to 8
    assert prog.sizeof("Dog") == 64                     # Animal, P, double, long, char, padding
    dog = prog.dtype("Dog")
    assert dog.itemsize == 64 and dog.names == ("weight", "legs", "p", "w", "tag", "c")
    assert dog.fields["legs"][0] == np.dtype((np.int32, (4,))) and dog.fields["legs"][1] == 12
    assert dog.fields["p"][0].names == ("a", "b") and dog.fields["p"][1] == 32
    grid = prog.dtype("Grid")
    assert grid.fields["cells"][0].shape == (2, 3) and grid.fields["h"][0] == np.float16


def test_a_kernel_writes_what_the_dtype_reads(prog):
    q = sycl.queue(sycl.HOST_CPU)
    d = sycl.malloc_shared(2, prog.dtype("Dog"), q)
    g = sycl.malloc_shared(1, prog.dtype("Grid"), q)
    np.asarray(d)[:] = np.zeros(2, prog.dtype("Dog"))
    q.single_task(prog.kernel("k"), d, g).wait()
    dog = np.asarray(d)[0]
    assert dog["w"] == 2.5 and dog["p"]["b"] == 1.5 and dog["legs"][3] == 7
    assert np.asarray(g)[0]["cells"][1][2]["a"] == 9 and bool(np.asarray(g)[0]["ok"])


@pytest.mark.parametrize("name", ["Nope", "", 3, None])
def test_unknown_class_is_invalid(prog, name):
    with pytest.raises(sycl.exception) as err:
        prog.sizeof(name)
    assert err.value.code() == sycl.errc.invalid
    with pytest.raises(sycl.exception):
        prog.dtype(name)


def test_layouts_survive_the_bundle(prog, tmp_path):
    data = prog.bundles[0].to_bytes()
    again = Bundle.from_bytes(data)
    assert again.layouts == prog.bundles[0].layouts and "Dog" in again.layouts


def _nested(depth):
    ty = "int"
    for _ in range(depth):
        ty = ["array", ty, 1]
    return ty


def _with_layouts(bundle, layouts):
    copy = Bundle.from_bytes(bundle.to_bytes())
    copy.layouts = layouts
    return copy.to_bytes()


@pytest.mark.parametrize("layouts, problem", [
    ({"A": {"size": 0, "align": 1, "base": None, "fields": []}}, "size"),
    ({"A": {"size": 8, "align": 1, "base": None, "fields": [["x", 0, "quad"]]}}, "fields[0][2]"),
    ({"A": {"size": 8, "align": 1, "base": None, "fields": [["x", 99, "int"]]}}, "fields[0][1]"),
    ({"A": {"size": 8, "align": 1, "base": ["B"], "fields": []}}, "base"),
    ({"A": {"size": 8, "align": 1, "base": None}}, "layouts.A"),
    ({"A": {"size": 8, "align": 1, "base": None, "fields": [["x", 0, ["array", "int"]]]}}, "fields[0][2]"),
    ({"A": {"size": 8, "align": 1, "base": None, "fields": [["x", 0, ["class"]]]}}, "fields[0][2]"),
    ({"A": {"size": 8, "align": 1, "base": None, "fields": [["x", 0, _nested(40)]]}}, "nested"),
    ({"A": {"size": 8, "align": 1, "base": None, "fields": [["x", 0, _nested(3)]]}}, None),
])
def test_malformed_layouts_are_refused_on_load(prog, layouts, problem):
    data = _with_layouts(prog.bundles[0], layouts)
    if problem is None:
        Bundle.from_bytes(data)
        return
    with pytest.raises(BundleError) as err:
        Bundle.from_bytes(data)
    assert problem in str(err.value)


@pytest.mark.parametrize("layouts", [
    {"A": {"size": 8, "align": 4, "base": None, "fields": [["x", 0, ["class", "A"]]]}},     # contains itself
    {"A": {"size": 8, "align": 4, "base": ["A", 0], "fields": []}},                          # its own base
    {"A": {"size": 8, "align": 4, "base": None, "fields": [["x", 0, ["class", "Z"]]]}},     # unknown class
    {"A": {"size": 4, "align": 4, "base": None, "fields": [["x", 0, "double"]]}},           # past its end
    {"A": {"size": 8, "align": 4, "base": ["B", 0], "fields": [["x", 4, "int"]]},
     "B": {"size": 8, "align": 4, "base": None, "fields": [["x", 0, "int"]]}},               # a name twice
])
def test_inconsistent_layouts_are_invalid_at_use(prog, layouts):
    p = sycl.program(Bundle.from_bytes(_with_layouts(prog.bundles[0], layouts)))
    with pytest.raises(sycl.exception) as err:
        p.dtype("A")
    assert err.value.code() == sycl.errc.invalid


# -- a generator: random structs, laid out by the front end and by LLVM --------------------------

SCALARS = ["bool", "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "half", "float", "double"]


@st.composite
def programs(draw):
    """Up to four structs, each with fields of scalar, pointer, array and earlier-struct types,
    some deriving from an earlier struct, some polymorphic."""
    structs, lines = [], []
    for i in range(draw(st.integers(1, 4))):
        fields = []
        for j in range(draw(st.integers(1, 5))):
            kind = draw(st.sampled_from(SCALARS + ["ptr", "struct"] if structs else SCALARS + ["ptr"]))
            ty = {"ptr": "float*", "struct": draw(st.sampled_from(structs)) if structs else "int"}.get(kind, kind)
            dims = "".join(f"[{draw(st.integers(1, 3))}]" for _ in range(draw(st.integers(0, 2))))
            fields.append(f"{ty} f{i}_{j}{dims};")
        base = f" : {draw(st.sampled_from(structs))}" if structs and draw(st.booleans()) else ""
        virtual = " virtual int v() [[indirectly_callable]] { return 0; }" if draw(st.booleans()) else ""
        name = f"S{i}"
        lines.append(f"struct {name}{base} {{ {' '.join(fields)}{virtual} }};")
        structs.append(name)
    body = " ".join(f"{s} v{i}; p{i}[0] = v{i};" for i, s in enumerate(structs))     # every type in the IR
    lines.append(f"kernel use({', '.join(f'{s}* p{i}' for i, s in enumerate(structs))}) {{ {body} }}")
    return structs, "\n".join(lines)


@given(programs())
@settings(max_examples=60, deadline=None)
def test_layouts_agree_with_llvm(case):
    structs, source = case
    result = compile_source(source, "gen.ksl")
    module = llvm.parse_assembly(result.ir, context=llvm.create_context())   # struct names fresh each time
    td = llvm.create_target_data(DATALAYOUT)
    bundle = Bundle(layouts=result.layouts)
    prog = sycl.program(Bundle.from_bytes(bundle.to_bytes()))
    for name in structs:
        ty = module.get_struct_type(f"struct.{name}")
        assert prog.sizeof(name) == td.get_abi_size(ty), source
        layout = result.layouts[name]
        members = ([] if layout["base"] is None else [layout["base"][1]]) + [f[1] for f in layout["fields"]]
        llvm_offsets = [td.get_element_offset(ty, i) for i in range(len(list(ty.elements)))]
        assert members == llvm_offsets[len(llvm_offsets) - len(members):], source
        dtype = prog.dtype(name)
        assert dtype.itemsize == prog.sizeof(name)
