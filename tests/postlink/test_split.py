"""Device code split as upstream does it: the AOT flow of ``split_module``,
the indirect-call reader, Internalize's corner cases, several tables in one
post-link run, and images with internalized copies linking at run time."""
import numpy as np
import pytest
from click.testing import CliRunner

from minisycl.frontend import compile_files
from minisycl.passes.support.cli import main
from minisycl.passes import parse_pipeline
from minisycl.passes.ir import Module, parse_text
from minisycl.passes.manager import PassContext, PassManager
from minisycl.postlink import split_module
from minisycl.device_configs.targets import load_target
from minisycl.passes.ir import function_type, indirect_call_types
from minisycl.postlink.split import internalize

DESIGN = """
class Foo {
  virtual void foo() [[indirectly_callable("fp64_set")]] { double d = 3.14; }
  virtual void bar() [[indirectly_callable("regular_set")]] {}
};
kernel construct(Foo* storage) { new (storage) Foo(); }
kernel call_foo(Foo* storage) [[calls_indirectly("fp64_set")]] { storage->foo(); }
kernel call_bar(Foo* storage) [[calls_indirectly("regular_set")]] { storage->bar(); }
"""


def device_module(tmp_path, source):
    path = tmp_path / "src.ksl"
    path.write_text(source)
    module = parse_text(compile_files([str(path)]).ir, str(path))[0]
    PassManager(parse_pipeline("split-if-device,propagate-aspects,analyze-virtual-functions")).run(module, PassContext())
    return module


def test_aot_flow_of_the_design_example(tmp_path):
    # the design's AOT flow (minisycl build --target): self-contained images,
    # the fp64 set emptied for tgllp and the kernel calling it left out
    images = split_module(device_module(tmp_path, DESIGN), mode="auto", target=load_target("intel_gpu_tgllp"))
    assert [im.entry_points for im in images] == [["construct", "call_bar"]]
    part = images[0].module
    assert part.functions["_ZN3Foo3fooEv"].body.split() == ["entry:", "ret", "void", "}"]
    assert not part.functions["_ZN3Foo3barEv"].is_declaration
    assert "SYCL/virtual functions" not in images[0].properties
    assert images[0].properties.get("SYCL/device requirements", "compile_target") == \
        b"\x78\x00\x00\x00\x00\x00\x00\x00intel_gpu_tgllp"
    pvc = split_module(device_module(tmp_path, DESIGN), mode="auto", target=load_target("intel_gpu_pvc"))
    assert sorted(e for im in pvc for e in im.entry_points) == ["call_bar", "call_foo", "construct"]


@pytest.mark.parametrize("line,expected", [
    ("%r = call spir_func i32 %fp(i32 %x, ptr addrspace(4) %q)", "i32 (i32, ptr addrspace(4))"),
    ("%s = tail call { i32, float } %fp(i32 noundef 1)", "{ i32, float } (i32)"),
    ("%t = call i32 (i32, ...) %fp(i32 1, double 2.0)", "i32 (i32, ...)"),
    ("%u = call noundef ptr addrspace(4) %\"a b\"(<2 x float> <float 1.0, float 2.0>)", "ptr addrspace(4) (<2 x float>)"),
    ("call void %fp()", "void ()"),
    ("call void @direct(ptr %fp)", None),
])
def test_indirect_call_types(line, expected):
    m = Module.parse(f"define void @f(ptr %fp, i32 %x, ptr addrspace(4) %q) {{\nentry:\n  {line}\n  ret void\n}}\n")
    assert indirect_call_types(m.functions["f"].body) == ({expected} if expected else set())


def test_function_type_drops_names_and_attributes():
    m = Module.parse("define spir_func noundef i32 @g(ptr noundef align 8 %this, i32 signext %x) {\n  ret i32 0\n}\n")
    assert function_type(m.functions["g"]) == "i32 (ptr, i32)"


def test_internalize_keeps_what_upstream_keeps():
    m = Module.parse(
        "$shared = comdat any\n"
        "@in_comdat = global i32 0, comdat($shared)\n"
        "define void @entry() {\n  ret void\n}\n"
        "define void @with_global() comdat($shared) {\n  ret void\n}\n"
        "define available_externally void @ae() {\n  ret void\n}\n"
        "define dllexport void @exported() {\n  ret void\n}\n"
        "define weak void @weak_one() {\n  ret void\n}\n"
        "define internal void @already() {\n  ret void\n}\n"
        "declare void @decl()\n")
    done = internalize(m, {"entry"})
    # a comdat shared with a global (which stays external) keeps its members external
    assert done == ["weak_one"]
    assert m.functions["weak_one"].linkage == "internal"
    assert m.functions["with_global"].linkage == "external" and "$shared" in m.comdats
    assert m.functions["ae"].linkage == "available_externally"
    assert m.functions["exported"].linkage == "external"
    m.verify()


def test_unknown_target_keeps_every_image_and_names_its_props(tmp_path):
    src = tmp_path / "in.ll"
    src.write_text("define spir_kernel void @k() #0 !sycl_used_aspects !1 {\n  ret void\n}\n"
                   'attributes #0 = { "sycl-module-id"="a.cpp" }\n'
                   '!sycl_aspects = !{!0}\n!0 = !{!"fp64", i32 6}\n!1 = !{i32 6}\n')
    r = CliRunner().invoke(main, ["post-link", "-properties", str(src), "-o", f"nope_gpu,{tmp_path / 'a.table'}",
                                  "-o", f"intel_gpu_tgllp,{tmp_path / 'b.table'}"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "a.table").read_text().splitlines()[1:] == \
        [f"{tmp_path / 'a_0.bc'}|{tmp_path / 'a_nope_gpu_0.prop'}"]
    assert (tmp_path / "b.table").read_text().splitlines()[1:] == []      # tgllp: no fp64
    assert not (tmp_path / "b_0.bc").exists()                               # images are named after the first table


SHARED_HELPER = """
float twice(float x) { return x + x; }
class Op {
  virtual float apply(float x) [[indirectly_callable]] { return twice(x) + 1.0f; }
};
kernel make(Op* op) { new (op) Op(); }
kernel run(id<1> i, Op* op, float* v) [[calls_indirectly]] { v[i] = op->apply(v[i]) + twice(v[i]); }
"""


def test_internal_copies_link_at_run_time(tmp_path):
    # "twice" is copied, internal, into both the kernel image and the set image;
    # the runtime links the two images and the copies do not clash
    from minisycl import runtime as sycl
    path = tmp_path / "op.ksl"
    path.write_text(SHARED_HELPER)
    prog = sycl.build_program([str(path)])
    q = sycl.queue()
    op = sycl.malloc_shared(16, np.uint8, q)
    v = sycl.malloc_shared(4, np.float32, q)
    np.asarray(v)[:] = [1, 2, 3, 4]
    q.single_task(prog.kernel("make"), op)
    q.parallel_for(prog.kernel("run"), 4, op, v).wait()
    assert list(np.asarray(v)) == [5.0, 9.0, 13.0, 17.0]
    images = split_module(device_module(tmp_path, SHARED_HELPER), mode="auto")
    holding = [im for im in images if "twice" in im.module.functions
               and not im.module.functions["twice"].is_declaration]
    assert len(holding) == 2 and all(im.module.functions["twice"].linkage == "internal" for im in holding)


def test_target_with_a_path_is_refused(tmp_path):
    src = tmp_path / "in.ll"
    src.write_text('define spir_kernel void @k() #0 {\n  ret void\n}\nattributes #0 = { "sycl-module-id"="a.cpp" }\n')
    r = CliRunner().invoke(main, ["post-link", "-properties", str(src), "-o", f"../up,{tmp_path / 'a.table'}"])
    assert r.exit_code == 1 and r.output.startswith("minisycl: error: invalid target name '../up'")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.ll"]


EDITED_BY_A_SPLIT = """
$c = comdat any
@dg = global { i32 } zeroinitializer #2
@kept = global i32 0
@llvm.compiler.used = appending global [2 x ptr] [ptr @dg, ptr @kept], section "llvm.metadata"
define linkonce_odr spir_func void @helper() comdat($c) {
  ret void
}
define weak_odr spir_func void @ext() #0 {
  call void @helper()
  ret void
}
define spir_kernel void @k1() #0 {
  call void @ext()
  %x = load i32, ptr @dg
  ret void
}
define spir_kernel void @k2() #1 {
  call void @helper()
  ret void
}
attributes #0 = { "sycl-module-id"="a.cpp" }
attributes #1 = { "sycl-module-id"="b.cpp" }
attributes #2 = { "sycl-device-global-size"="4" "sycl-unique-id"="u" }
"""


@pytest.mark.parametrize("target", [None, "intel_gpu_tgllp", "intel_gpu_pvc"])
def test_split_leaves_its_input_as_it_was(tmp_path, target):
    # the design example without analyze-virtual-functions: the split annotates
    # the kernels with the sets they create objects of, in a copy
    path = tmp_path / "src.ksl"
    path.write_text(DESIGN)
    design = parse_text(compile_files([str(path)]).ir, str(path))[0]
    PassManager(parse_pipeline("split-if-device,propagate-aspects")).run(design, PassContext())
    inputs = [design, parse_text(EDITED_BY_A_SPLIT, "edited.ll")[0]]
    config = load_target(target) if target else None
    for module in inputs:
        before = module.text()
        for mode in ("kernel", "source", "auto", "none"):
            images = split_module(module, mode=mode, device_globals=True, target=config)
            assert module.text() == before, mode
            if module is design and config is None:
                props = [im.properties for im in images]
                assert any(p.get("SYCL/virtual functions", "creates-virtual-functions-set") for p in props)
                assert sum(im.dummy for im in images) == 1
    # what the split edits in its images, it edits in copies
    images = split_module(inputs[1], mode="kernel", only_kernels=True)
    assert [im.entry_points for im in images] == [["k2"], ["k1"]]
    assert [im.module.functions["helper"].linkage for im in images] == ["internal", "internal"]
    assert inputs[1].functions["helper"].linkage == "linkonce_odr"
    assert "@dg" not in images[1].module.globals["llvm.compiler.used"].line
    assert "@dg" in inputs[1].globals["llvm.compiler.used"].line
