"""Conditionally used aspects (``passes/propagate_aspects_conditional.py``).

- Differential: on random call graphs (cycles included), the pass's steps 4-5
  give exactly the pairs of a literal transcription of upstream's algorithm
  (every call path walked, no pruning; a path stops where it would come back
  to a function already on it, where upstream would not stop).
- Whole modules: random modules with conditional callers run through the
  pass end, verify in LLVM, and a second run changes nothing.
"""
import random

import llvmlite.binding as llvm
from hypothesis import given, settings, strategies as st

from minisycl.passes.aspect_set import AspectSet
from minisycl.passes.ir import Module
from minisycl.passes.propagate_aspects import propagate_aspects
from minisycl.passes.propagate_aspects_conditional import ConditionalCalls
from minisycl.passes.support import knobs


def reference_pairs(edges, callers, entries, local, direct):
    """Upstream's propagateConditionExpressionsThroughCG,
    identifyPathsContainingConditionalCallers and
    propagateConditionExpressionsAndConditionalAspectsThroughCG, as written."""
    cond = {}

    def walk(f, on_path):
        for c in edges.get(f, []):
            if c in on_path:
                continue
            new = cond.get(f, AspectSet()).copy()
            if c in callers:
                new.update(local.get(f, {}).get(c, ()))
            cond[c] = new
            walk(c, on_path | {c})

    paths = []

    def identify(f, path):
        path = path + [f]
        if not edges.get(f):
            if any(n in callers for n in path):
                paths.append(path)
            return
        for c in edges[f]:
            if c not in path:
                identify(c, path)

    for e in entries:
        walk(e, {e})
        identify(e, [])
    aspects = {n: a.copy() for n, a in direct.items()}
    out = {}

    def contains(pairs, pair):
        return any(set(p[0]) == set(pair[0]) and set(p[1]) == set(pair[1]) for p in pairs)

    for path in paths:
        for i in range(len(path) - 1, -1, -1):
            f = path[i]
            if i != len(path) - 1:
                aspects.setdefault(f, AspectSet()).update(aspects.get(path[i + 1], ()))
                if not cond.get(f):
                    cond[f] = cond.get(path[i + 1], AspectSet()).copy()
            pair = (tuple(cond.get(f, ())), tuple(aspects.get(f, ())))
            if pair[0] and pair[1] and not contains(out.get(f, []), pair):
                out.setdefault(f, []).append(pair)
            if i != len(path) - 1:
                for p in out.get(path[i + 1], []):
                    if not contains(out.get(f, []), p):
                        out.setdefault(f, []).append(p)
    return {f: p for f, p in out.items() if p}


@st.composite
def graphs(draw):
    n = draw(st.integers(2, 7))
    names = [f"f{i}" for i in range(n)]
    edges = {f: draw(st.lists(st.sampled_from(names), unique=True, max_size=3)) for f in names}
    callers = set(draw(st.lists(st.sampled_from(names), unique=True, max_size=3)))
    entries = draw(st.lists(st.sampled_from(names), unique=True, min_size=1, max_size=3))
    local = {}
    for f in names:
        for c in edges[f]:
            if c in callers:
                local.setdefault(f, {})[c] = AspectSet(draw(st.lists(st.integers(-5, 5), max_size=6)))
    direct = {f: AspectSet(draw(st.lists(st.integers(1, 7), min_size=1, max_size=6)))
              for f in draw(st.lists(st.sampled_from(names), unique=True, max_size=n))}
    return edges, callers, entries, local, direct


@settings(max_examples=knobs.fuzz_examples(300), deadline=None)
@given(graphs())
def test_pairs_are_upstreams(graph):
    edges, callers, entries, local, direct = graph
    calls = ConditionalCalls(callers, edges, entries, local, direct={n: a.copy() for n, a in direct.items()})
    assert calls.pairs() == reference_pairs(edges, callers, entries, local, direct)


def random_module(rng: random.Random) -> str:
    """A module of kernels, functions, actions and conditional callers (a
    declaration: ``call @cN(ptr @action, ptr null, i32 ...)``), calls drawn at
    random, cycles included; types carry aspects 1-3 and ``double`` fp64."""
    n = rng.randint(2, 7)
    conds = [f"c{i}" for i in range(rng.randint(1, 3))]
    names = [f"f{i}" for i in range(n)]
    lines = ["%A = type { i32 }", "%B = type { i32 }", "%C = type { i32 }", ""]
    for i, name in enumerate(names):
        kernel = i == 0 or rng.random() < 0.2
        body = []
        for ty in rng.sample(["%A", "%B", "%C", "double", "i32"], rng.randint(0, 2)):
            body.append(f"  %v{len(body)} = alloca {ty}")
        for _ in range(rng.randint(0, 3)):
            if rng.random() < 0.5:
                args = ", ".join(f"i32 {rng.randint(-5, 5)}" for _ in range(rng.randint(0, 4)))
                body.append(f"  call spir_func void @{rng.choice(conds)}(ptr @{rng.choice(names)}, ptr null"
                            f"{', ' + args if args else ''})")
            else:
                body.append(f"  call spir_func void @{rng.choice(names)}()")
        cc = "spir_kernel" if kernel else "spir_func"
        lines += [f"define {cc} void @{name}() {{", *body, "  ret void", "}", ""]
    for c in conds:
        lines.append(f"declare spir_func void @{c}(ptr, ptr, ...) #0")
    lines += ['attributes #0 = { "sycl-call-if-on-device-conditionally"="true" }',
              "!sycl_types_that_use_aspects = !{!0, !1, !2}", '!0 = !{!"A", i32 1}', '!1 = !{!"B", i32 2}',
              '!2 = !{!"C", i32 3}', "!sycl_aspects = !{!3}", '!3 = !{!"fp64", i32 6}']
    return "\n".join(lines) + "\n"


@settings(max_examples=knobs.fuzz_examples(60), deadline=None)
@given(st.integers(0, 2 ** 32))
def test_random_modules_verify_and_settle(seed):
    text = random_module(random.Random(seed))
    module = Module.parse(text)
    propagate_aspects(module)
    once = module.text()
    llvm.parse_assembly(once).verify()
    again = Module.parse(once)
    assert not propagate_aspects(again)
    assert again.text() == once


def test_exclude_and_existing_pairs():
    """Excluded aspects leave the pairs (a pair left empty goes); pairs the
    function carried already stay after the new ones, once."""
    text = """
%A = type { i32 }
define spir_kernel void @k() !sycl_conditionally_used_aspects !4 {
  call spir_func void @c(ptr @act, ptr null, i32 -1, i32 5)
  ret void
}
define spir_func void @act() {
  %a = alloca %A
  %d = alloca double
  ret void
}
declare spir_func void @c(ptr, ptr, i32, i32) #0
attributes #0 = { "sycl-call-if-on-device-conditionally"="true" }
!sycl_types_that_use_aspects = !{!0}
!0 = !{!"A", i32 1}
!sycl_aspects = !{!1}
!1 = !{!"fp64", i32 6}
!2 = !{i32 9}
!3 = !{!2, !2}
!4 = !{!3}
"""
    module = Module.parse(text)
    propagate_aspects(module, exclude={"fp64"})
    got = module.function_metadata("k", "sycl_conditionally_used_aspects")
    pairs = [[module.metadata_ints(r) for r in module.metadata_operands(p)] for p in got]
    assert pairs == [[[-1, 5], [1]], [[9], [9]]]
    assert "sycl_used_aspects" not in module.functions["k"].metadata


def test_action_through_a_cast_is_no_edge():
    """Upstream follows only a plain ``ptr @action`` operand: an action named
    through a constant expression is not reached through the caller."""
    text = """
define spir_kernel void @k() {
  call spir_func void @c(ptr addrspacecast (ptr addrspace(4) @act to ptr), ptr null, i32 0)
  ret void
}
define spir_func void @act() {
  %d = alloca double
  ret void
}
declare spir_func void @c(ptr, ptr, i32) #0
attributes #0 = { "sycl-call-if-on-device-conditionally"="true" }
!sycl_aspects = !{!0}
!0 = !{!"fp64", i32 6}
"""
    module = Module.parse(text)
    propagate_aspects(module)
    assert "sycl_conditionally_used_aspects" not in module.functions["k"].metadata
    assert "sycl_used_aspects" not in module.functions["k"].metadata
