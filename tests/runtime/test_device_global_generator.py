"""A generator over device_global declarations (issue 30: "fix the kind"):
where it is declared (file scope, or a class member under each access
specifier), ``static`` or not, the kind of ``T``, and the initialiser's form.
Each program is compiled and the outcome compared with a small oracle table of
sycl_ext_oneapi_device_global's declaration rules; a program the oracle accepts
is built and run, and the kernel must read the value the initialiser gives."""
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from minisycl import runtime as sycl
from minisycl.frontend import CompileError, compile_source
from minisycl.passes.support import knobs

PRELUDE = """
struct S { int x; int y; };
class P { int x; int y; P(int a, int b) { x = a; y = a * b; } };
constexpr int CI = 5;
constexpr int CA[3] = {1, 2, 3};
constexpr S CS = {4, 6};
constexpr P CP(2, 7);
"""

#: kind of T -> (spelling, {initialiser form: (text, the value a kernel reads, as
#: the sum of T's ints)}, the zero value); ``None``: the form does not apply
TYPES = {
    "scalar": ("int", {"none": ("", 0), "equals": (" = 7", 7), "braces": ("{7}", 7), "parens": ("(7)", 7),
                       "named": ("{CI}", 5)}),
    "array": ("int[3]", {"none": ("", 0), "equals": (" = {1, 2, 4}", 7), "braces": ("{1, 2, 4}", 7),
                         "parens": ("(1, 2, 4)", 7), "named": ("{CA}", 6)}),
    "aggregate": ("S", {"none": ("", 0), "equals": (" = {3, 4}", 7), "braces": ("{3, 4}", 7),
                        "parens": ("(3, 4)", 7), "named": ("{CS}", 10)}),
    "constructed": ("P", {"none": None, "equals": (" = {3, 4}", 15), "braces": ("{3, 4}", 15),
                          "parens": ("(3, 4)", 15), "named": ("{CP}", 16)}),
    "pointer": ("S*", {"none": ("", 0), "equals": (" = nullptr", 0), "braces": ("{nullptr}", 0),
                       "parens": ("(nullptr)", 0), "named": None}),
}
READ = {"scalar": "v", "array": "v[0] + v[1] + v[2]", "aggregate": "v.x + v.y", "constructed": "v.x + v.y",
        "pointer": "(v == nullptr ? 0 : 1)"}


def oracle(place: str, static: bool, kind: str, form: str) -> str | None:
    """The spec's rules: None when the declaration is valid, else what the
    error message must contain."""
    if place != "file" and not static:
        return "not a non-static member"
    if place not in ("file", "public"):
        return f"is a {place} static member"
    if TYPES[kind][1][form] is None:
        return "constructor" if kind == "constructed" else "initialiser"
    return None


def program(place, static, kind, form):
    spelling, forms = TYPES[kind]
    # the forms that do not apply: no initialiser for P (no default constructor), a P constant for S*
    init = forms[form][0] if forms[form] else {"constructed": "", "pointer": "{CP}"}[kind]
    decl = f"{'static ' if static else ''}device_global<{spelling}> g{init};"
    if place == "file":
        return PRELUDE + decl + "\n", "g"
    label = "" if place == "default" else f"{place}:\n"
    return PRELUDE + f"struct Holder {{\n{label}  {decl}\n}};\n", "Holder::g"


@settings(max_examples=knobs.fuzz_examples(40), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(place=st.sampled_from(["file", "default", "public", "private", "protected"]), static=st.booleans(),
       kind=st.sampled_from(sorted(TYPES)), form=st.sampled_from(["none", "equals", "braces", "parens", "named"]))
def test_declarations_against_the_oracle(place, static, kind, form, tmp_path):
    text, name = program(place, static, kind, form)
    expected = oracle("public" if place == "default" else place, static, kind, form)
    read = READ[kind].replace("v", name)
    text += f"kernel k(int* out) {{ out[0] = {read}; }}\n"
    try:
        compile_source(text, "gen.ksl")
    except CompileError as err:
        assert expected is not None, f"refused a valid declaration:\n{text}\n{err.render()}"
        assert expected in err.render(), f"wrong diagnostic for:\n{text}\n{err.render()}"
        assert ": error: " in err.render()
        return
    assert expected is None, f"accepted an invalid declaration ({expected}):\n{text}"
    src = tmp_path / f"gen_{place}_{static}_{kind}_{form}.ksl"
    src.write_text(text)
    prog = sycl.build_program([str(src)])
    q = sycl.queue()
    q = sycl.queue(q.device, context=sycl.context(q.device))    # its own storage for 'g' (one per context)
    out = sycl.malloc_shared(1, np.int32, q)
    q.single_task(prog.kernel("k"), out).wait()
    assert out[0] == TYPES[kind][1][form][1], text
