"""Valid but unusual modules never end post-link in an internal error (issue 32, point 6).

The generator draws modules LLVM accepts that stress how the IR layer writes a
module back for LLVM: datalayouts with a non-zero globals address space (DPC++'s
``-G1``), ``dso_local_equivalent`` / ``no_cfi`` constants naming functions (in
global initialisers and in function bodies), globals in several address spaces
reached through ``addrspacecast``, comdats, aliases of functions and of
variables, ifuncs, and SYCL_EXTERNAL functions besides kernels.

The oracle is LLVM itself: a drawn module LLVM refuses is not used
(``assume``); for every module it accepts, ``minisycl post-link`` in each
split mode, as text and as bitcode, must exit 0 and write images LLVM
parses and verifies (the command verifies them; a module whose text LLVM
prints but cannot read back was exit 3 before ``passes/ir/reparse.py``).

Cost: ``knobs.fuzz_examples(25)`` modules (derandomized in CI);
``MINISYCL_FUZZ_EXAMPLES=500`` for a long run.
"""
from __future__ import annotations

import llvmlite.binding as llvm
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from minisycl.passes.support import knobs
from minisycl.passes.support.cli import main

EXAMPLES = knobs.fuzz_examples(25)

DATALAYOUTS = (None, "e-G1",
               "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1",
               "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64")


@st.composite
def unusual_modules(draw) -> str:
    """One module's text (see the module docstring)."""
    layout = draw(st.sampled_from(DATALAYOUTS))
    n_funcs = draw(st.integers(1, 4))
    lines = [f'target datalayout = "{layout}"'] if layout else []
    lines.append('target triple = "spir64-unknown-unknown"')
    comdat_funcs = {i for i in range(n_funcs) if draw(st.booleans())}
    lines += [f"$f{i} = comdat any" for i in sorted(comdat_funcs)]
    body_lines, globals_ = [], []
    for g in range(draw(st.integers(0, 3))):
        space = draw(st.sampled_from((0, 1, 2, 3)))
        target = draw(st.integers(0, n_funcs - 1))
        kind = draw(st.sampled_from(("dso_local_equivalent", "no_cfi", "plain", "int")))
        link = draw(st.sampled_from(("", "internal ", "linkonce_odr ", "weak ")))
        where = f" addrspace({space})" if space else ""
        if kind == "int":
            init = "i32 7"
        else:
            ref = f"@f{target}" if kind == "plain" else f"{kind} @f{target}"
            init = f"{{ [2 x ptr] }} {{ [2 x ptr] [ptr null, ptr {ref}] }}"
        globals_.append((g, space, kind))
        lines.append(f"@g{g} = {link}{where} constant {init}, align 8")
    if draw(st.booleans()):
        lines.append("@alias_f = alias void (), ptr @f0")
    if globals_ and draw(st.booleans()):
        g, space, _ = globals_[0]
        lines.append(f"@alias_g = alias i8, ptr{f' addrspace({space})' if space else ''} @g{g}")
    if draw(st.booleans()):
        lines.append("@ifn = ifunc void (), ptr @resolver")
        body_lines.append("define internal ptr @resolver() {\n  ret ptr @f0\n}")
    for i in range(n_funcs):
        link = "linkonce_odr " if i in comdat_funcs else draw(st.sampled_from(("", "internal ", "linkonce_odr ")))
        comdat = " comdat" if i in comdat_funcs else ""
        attrs = " #1" if draw(st.booleans()) and link != "internal " else ""
        body = ["  %p = alloca ptr, align 8"]
        for j in range(i):                  # backward references only: LLVM reads those
            if draw(st.booleans()):
                body.append(f"  store ptr {draw(st.sampled_from(('dso_local_equivalent', 'no_cfi', '')))} @f{j}, "
                            f"ptr %p, align 8".replace("ptr  @", "ptr @"))
            if draw(st.booleans()):
                body.append(f"  call spir_func void @f{j}()")
        body_lines.append(f"define {link}spir_func void @f{i}(){attrs}{comdat} {{\n" + "\n".join(body) + "\n  ret void\n}")
    kernel = ["  %p = alloca ptr, align 8"]
    for g, space, kind in globals_:
        if draw(st.booleans()):
            src = f"ptr addrspace({space}) @g{g}" if space else f"ptr @g{g}"
            value = f"addrspacecast ({src} to ptr addrspace(4))" if space else f"@g{g}"
            kernel.append(f"  store ptr {'addrspace(4) ' if space else ''}{value}, ptr %p, align 8"
                          .replace("ptr addrspace(4) addrspacecast", "ptr addrspace(4) addrspacecast"))
    for i in range(n_funcs):
        if draw(st.booleans()):
            kernel.append(f"  call spir_func void @f{i}()")
    if any(line.startswith("@ifn") for line in lines) and draw(st.booleans()):
        kernel.append("  call void @ifn()")
    body_lines.append("define spir_kernel void @k() #0 {\n" + "\n".join(kernel) + "\n  ret void\n}")
    order = draw(st.sampled_from(("functions first", "globals first")))
    glob = [line for line in lines if line.startswith("@")]
    head = [line for line in lines if not line.startswith("@")]
    parts = head + (body_lines + glob if order == "functions first" else glob + body_lines)
    parts.append('attributes #0 = { "sycl-module-id"="a.cpp" }')
    parts.append('attributes #1 = { "sycl-module-id"="b.cpp" }')
    return "\n".join(parts) + "\n"


def _llvm_accepts(text: str) -> bool:
    try:
        llvm.parse_assembly(text).verify()
    except RuntimeError:
        return False
    return True


@pytest.mark.parametrize("bitcode", [False, True], ids=["text", "bitcode"])
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.filter_too_much])
@given(text=unusual_modules())
def test_valid_unusual_module_never_internal_error(tmp_path_factory, bitcode, text):
    assume(_llvm_accepts(text))
    folder = tmp_path_factory.mktemp("unusual")
    src = folder / "in.ll"
    src.write_text(text)
    for mode in ("kernel", "source", "auto", "none"):
        out = folder / f"{mode}.table"
        args = ["post-link", f"-split={mode}", "-symbols", "-properties", str(src), "-o", str(out)]
        r = CliRunner().invoke(main, args + ([] if bitcode else ["-S"]))
        assert r.exit_code == 0, f"{mode}: exit {r.exit_code}\n{r.output}\n--- module ---\n{text}"
        rows = out.read_text().splitlines()[1:]
        assert rows
        for row in rows:
            image = row.split("|")[0]
            if bitcode:
                llvm.parse_bitcode((folder / image).read_bytes()).verify()
            else:
                llvm.parse_assembly((folder / image).read_text()).verify()   # the written text reads back


def test_g1_dso_local_equivalent_reads_back(tmp_path):
    """The module of the issue: DPC++'s -G1 datalayout and a vtable naming a
    function through dso_local_equivalent (exit 3 before)."""
    text = ('target datalayout = "e-i64:64-n8:16:32:64-G1"\ntarget triple = "spir64-unknown-unknown"\n'
            "define linkonce_odr spir_func void @f() {\n  ret void\n}\n"
            "@vt = linkonce_odr addrspace(1) constant { [1 x ptr addrspace(4)] } { [1 x ptr addrspace(4)] "
            "[ptr addrspace(4) addrspacecast (ptr dso_local_equivalent @f to ptr addrspace(4))] }, align 8\n"
            "define spir_kernel void @k(ptr addrspace(1) %p) #0 {\n"
            "  store ptr addrspace(1) @vt, ptr addrspace(1) %p, align 8\n  ret void\n}\n"
            'attributes #0 = { "sycl-module-id"="a.cpp" }\n')
    src = tmp_path / "in.ll"
    src.write_text(text)
    r = CliRunner().invoke(main, ["post-link", "-split=kernel", "-S", str(src), "-o", str(tmp_path / "o.table")])
    assert r.exit_code == 0, r.output
    image = (tmp_path / "o_0.ll").read_text()
    assert image.index("define internal spir_func void @f()") < image.index("@vt = ")
    llvm.parse_assembly(image).verify()
