"""``Module.extract`` keeps a function whose blocks a kept definition addresses
(``blockaddress(@f, %bb)``) defined, and with it everything its text needs:
the metadata its header attaches, its attribute groups, the types of its
parameters, and the functions whose blocks *it* addresses in turn.

The kind of failure: an entity put into the part whose text is not read for
the part's metadata, attribute groups and types (the part then names
undefined ``!N``, ``#N`` or ``%T``, and LLVM rejects it).  ``_keep_addressed``
read only the body of a function it put back.  The generator builds modules
of functions with header attachments, attribute groups and ``byval`` types
that address each other's blocks (directly and through constants), extracts
random parts with random functions declared or stubbed, and checks that every
part verifies in LLVM and holds each addressed function whole.

``MINISYCL_FUZZ_EXAMPLES=N`` runs N generated cases (default 200).
"""
import os

import llvmlite.binding as llvm
from hypothesis import HealthCheck, given, settings, strategies as st

from minisycl.passes.ir import parse_text, verify_and_serialize
from minisycl.passes.ir.entities import blockaddress_targets
from minisycl.passes.support import knobs
from minisycl.postlink import split_module

FUZZ = settings(max_examples=knobs.fuzz_examples(200), deadline=None, database=None,
                derandomize="MINISYCL_FUZZ_EXAMPLES" not in os.environ, suppress_health_check=list(HealthCheck))


@st.composite
def modules(draw):
    """(IR text, number of functions, number of address-holding constants)."""
    n = draw(st.integers(1, 6))
    lines, tail = [], []
    for i in range(n):
        lines.append(f"%T{i} = type {{ i32, [{i + 1} x i8] }}")
    consts = draw(st.lists(st.integers(0, n - 1), max_size=3))
    for c, target in enumerate(consts):
        lines.append(f"@tab{c} = constant ptr blockaddress(@f{target}, %bb)")
    for i in range(n):
        attrs = draw(st.sampled_from(["", f" #{i}"]))
        attach = draw(st.sampled_from(["", f" !mine !{2 * i}", f" !mine !{2 * i} !other !{2 * i + 1}"]))
        byval = draw(st.booleans())
        params = "ptr %out" + (f", ptr byval(%T{i}) %t" if byval else "")
        body = ["entry:"]
        for j in draw(st.lists(st.integers(0, n - 1), max_size=3, unique=True)):
            body.append(f"  store ptr blockaddress(@f{j}, %bb), ptr %out")
        for c in draw(st.lists(st.integers(0, len(consts) - 1), max_size=2, unique=True)) if consts else ():
            body += [f"  %l{c} = load ptr, ptr @tab{c}", f"  store ptr %l{c}, ptr %out"]
        body += ["  br label %bb", "bb:", "  ret void"]
        lines.append(f"define void @f{i}({params}){attrs}{attach} {{\n" + "\n".join(body) + "\n}")
        if attrs:
            tail.append(f'attributes #{i} = {{ noinline "group"="{i}" }}')
        tail.append(f'!{2 * i} = !{{!"f{i}", !{2 * n + i}}}')
        tail.append(f"!{2 * i + 1} = !{{i32 {i}}}")
        tail.append(f"!{2 * n + i} = !{{!\"nested\", i32 {i}}}")
    return "\n".join(lines + tail) + "\n", n, len(consts)


@FUZZ
@given(modules(), st.data())
def test_addressed_functions_come_whole_into_every_part(generated, data):
    text, n, n_consts = generated
    module = parse_text(text, "gen.ll")[0]
    functions = [f"f{i}" for i in range(n)]
    candidates = functions + [f"tab{c}" for c in range(n_consts)]
    names = data.draw(st.lists(st.sampled_from(candidates), min_size=1, unique=True))
    declare = set(data.draw(st.lists(st.sampled_from(functions), unique=True)))
    stub = set(data.draw(st.lists(st.sampled_from(functions), unique=True)))
    part = module.extract(names, declare=declare, stub=stub)
    verify_and_serialize([part])                # every part verifies in LLVM (names no undefined !N, #N, %T)
    addressed = set(blockaddress_targets(part.text()))
    for name in addressed:                      # each addressed function whole, as in the module
        assert part.functions[name].text() == module.functions[name].text(), name
    for name, fn in part.functions.items():
        if not fn.is_declaration and name not in addressed and name not in declare and name not in stub:
            assert fn.text() == module.functions[name].text(), name
            for node in fn.metadata.values():   # what its header attaches is there
                assert int(node[1:]) in part.metadata


def test_a_virtual_function_addressed_by_a_kernel_keeps_its_attachments():
    # @vf lives in its set's image (JIT flow); @k takes the address of one of its
    # blocks, so the kernel's image defines @vf too: with its header's metadata,
    # attributes and byval type (before the fix, only its body was read)
    text = ('target triple = "spir64-unknown-unknown"\n'
            '%V = type { i32, i64 }\n'
            'define spir_func void @vf(ptr byval(%V) %v) #0 !mine !0 {\nentry:\n  br label %bb\nbb:\n  ret void\n}\n'
            'define spir_kernel void @k(ptr %o) #1 {\n  store ptr blockaddress(@vf, %bb), ptr %o\n  ret void\n}\n'
            'attributes #0 = { noinline "indirectly-callable"="s" }\n'
            'attributes #1 = { "calls-indirectly"="s" }\n'
            '!0 = !{!"vf", !1}\n!1 = !{i32 7}\n')
    images = split_module(parse_text(text, "t.ll")[0], mode="kernel")
    verify_and_serialize([im.module for im in images])
    kernel = next(im for im in images if im.entry_points == ["k"])
    vf = kernel.module.functions["vf"]
    assert not vf.is_declaration and vf.metadata == {"mine": "!0"}
    assert {0, 1} <= set(kernel.module.metadata)
    llvm.parse_assembly(kernel.module.text()).verify()
