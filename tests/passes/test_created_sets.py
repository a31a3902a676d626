"""``created_sets`` (the sets of the vtables each kernel's call tree names)
walks up from the functions naming a vtable; a generator of call graphs
(cycles, kernels called by others, vtables named deep in a tree or by a
kernel itself) checks it against the definition: every kernel's call tree
walked down.  ``MINISYCL_FUZZ_EXAMPLES=N`` runs N cases (default 300)."""
import os

from hypothesis import HealthCheck, given, settings, strategies as st

from minisycl.passes.callgraph import CallGraph
from minisycl.passes.ir import Module
from minisycl.passes.support import knobs
from minisycl.passes.virtual_functions import created_sets, vtable_sets

FUZZ = settings(max_examples=knobs.fuzz_examples(300), deadline=None, database=None,
                derandomize="MINISYCL_FUZZ_EXAMPLES" not in os.environ, suppress_health_check=list(HealthCheck))


def by_definition(module: Module) -> dict[str, list[str]]:
    vtables = vtable_sets(module)
    graph = CallGraph.of(module)
    out = {}
    for name, fn in module.functions.items():
        if fn.is_kernel and not fn.is_declaration:
            sets = sorted({s for f in graph.reachable([name]) for r in module.functions[f].refs() if r in vtables
                           for s in vtables[r]})
            if sets:
                out[name] = sets
    return out


@st.composite
def modules(draw):
    n_sets = draw(st.integers(1, 3))
    n = draw(st.integers(1, 8))
    kinds = draw(st.lists(st.booleans(), min_size=n, max_size=n))          # True: a kernel
    names = [f"k{i}" if k else f"f{i}" for i, k in enumerate(kinds)]
    lines = [f'attributes #{s} = {{ "indirectly-callable"="set{s}" }}' for s in range(n_sets)]
    for s in range(n_sets):
        lines.append(f"define linkonce_odr spir_func void @vf{s}(ptr %this) #{s} {{\nentry:\n  ret void\n}}")
    vtables = draw(st.lists(st.sets(st.integers(0, n_sets - 1), min_size=1), min_size=1, max_size=3))
    for v, members in enumerate(vtables):
        lines.insert(0, f"@vt{v} = linkonce_odr constant [{len(members)} x ptr] [" +
                     ", ".join(f"ptr @vf{s}" for s in sorted(members)) + "]")
    for name, kernel in zip(names, kinds):
        body = ["entry:"]
        for callee in draw(st.lists(st.sampled_from(names), max_size=3)):
            body.append(f"  call spir_func void @{callee}(ptr %p)")
        for v in draw(st.lists(st.integers(0, len(vtables) - 1), max_size=2)):
            body.append(f"  store ptr @vt{v}, ptr %p, align 8")
        cc = "spir_kernel" if kernel else "spir_func"
        lines.append(f"define {cc} void @{name}(ptr %p) {{\n" + "\n".join(body) + "\n  ret void\n}")
    return "\n".join(lines) + "\n"


@FUZZ
@given(modules())
def test_created_sets_are_every_kernels_tree_walked_down(text):
    module = Module.parse(text)
    got = created_sets(module)
    assert got == by_definition(module)
    assert list(got) == list(by_definition(module))         # module order
