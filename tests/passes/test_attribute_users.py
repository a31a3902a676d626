"""Who uses each attribute group (``Module.functions_with``'s index) stays
right through attribute edits made after it was read and through a
``copy`` (both keep it rather than reading every function again: post-link
annotates a few kernels of a big module).  A generator of edit sequences
compares ``functions_with`` with a module parsed afresh from the text.
``MINISYCL_FUZZ_EXAMPLES=N`` runs N cases (default 300)."""
import os

from hypothesis import HealthCheck, given, settings, strategies as st

from minisycl.passes.ir import Module
from minisycl.passes.support import knobs

FUZZ = settings(max_examples=knobs.fuzz_examples(300), deadline=None, database=None,
                derandomize="MINISYCL_FUZZ_EXAMPLES" not in os.environ, suppress_health_check=list(HealthCheck))

KEYS = ["a", "b", "c"]
GROUPS = ['"a"="1"', '"b"', '"a"="2" "c"', '"c"="x"', "noinline"]


@st.composite
def cases(draw):
    n = draw(st.integers(1, 4))
    lines = [f"attributes #{i} = {{ {g} }}" for i, g in enumerate(GROUPS)]
    for i in range(n):
        groups = draw(st.lists(st.integers(0, len(GROUPS) - 1), max_size=2))
        lines.append(f"define void @f{i}()" + "".join(f" #{g}" for g in groups) + " {\nentry:\n  ret void\n}")
    edits = draw(st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(KEYS), st.sampled_from(["1", None]),
                                    st.booleans(), st.booleans()), max_size=10))
    return "\n".join(lines) + "\n", edits


@FUZZ
@given(cases())
def test_functions_with_follows_attribute_edits(case):
    text, edits = case
    module = Module.parse(text)
    for key in KEYS:
        module.functions_with(key)          # read before the edits
    for i, key, value, remove, copy in edits:
        if copy:
            module = module.copy()
        if remove:
            module.update_function_attributes(f"f{i}", remove=[key])
        else:
            module.update_function_attributes(f"f{i}", add={key: value})
        fresh = Module.parse(module.text())
        for k in KEYS:
            got = module.functions_with(k)
            assert got == fresh.functions_with(k) and list(got) == list(fresh.functions_with(k))


def test_a_group_made_by_edits_lists_its_users_in_module_order():
    module = Module.parse('attributes #0 = { "b" }\n' + "".join(
        f"define void @f{i}() #0 {{\nentry:\n  ret void\n}}\n" for i in range(3)))
    assert list(module.functions_with("b")) == ["f0", "f1", "f2"]
    module.update_function_attributes("f2", add={"a": "1"})
    module.update_function_attributes("f0", add={"a": "1"})
    assert list(module.functions_with("a")) == ["f0", "f2"]
    assert list(module.functions_with("b")) == ["f0", "f1", "f2"]
