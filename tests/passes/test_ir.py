"""The IR toolkit: reading entities, edits that LLVM re-verifies, extraction
that only looks at the part it extracts."""
import llvmlite.binding as llvm
import pytest

from minisycl.frontend import compile_source
from minisycl.passes.ir import IRError, Module, parse_text, split_operands, verify_and_serialize

SRC = """
class Shape { float s; virtual float area() [[indirectly_callable]] { return s; } };
device_global<int> hits;
float twice(float x) { return x * 2.0f; }
kernel k(float* p) { p[0] = twice(p[0]); atomic_fetch_add(&hits, 1); }
kernel make(Shape* at) { new (at) Shape(); }
host float on_host(float x) { print(x); return x; }
"""

DPCPP = """
target triple = "spir64-unknown-unknown"
$_Z3foov = comdat any
%struct.S = type { i32, %struct.T }
%struct.T = type { double }
@g = internal global %struct.S zeroinitializer, align 8
@"quoted name" = global i32 1
define weak_odr spir_kernel void @kern(ptr %p) #0 !sycl_declared_aspects !1 {
entry:
  call spir_func void @_Z3foov()
  store ptr @g, ptr %p
  %v = load i32, ptr @"quoted name"
  ret void
}
define linkonce_odr spir_func void @_Z3foov() comdat {
entry:
  ret void
}
define spir_func { i32, float } @pair() {
entry:
  ret { i32, float } zeroinitializer
}
declare spir_func void @ext(ptr)
attributes #0 = { noinline "sycl-module-id"="a.cpp" "calls-indirectly"="s1,s2" }
!sycl_aspects = !{!0}
!0 = !{!"fp64", i32 6}
!1 = !{i32 6}
"""


def module(text=DPCPP):
    return parse_text(text, "t.ll")[0]


def test_entities_and_facts():
    m = module()
    k = m.functions["kern"]
    assert k.is_kernel and k.linkage == "weak_odr" and k.calling_conv == "spir_kernel"
    assert k.calls() == ["_Z3foov"]
    assert k.refs() == ["_Z3foov", "g", "quoted name"]
    assert m.function_attributes(k) == {"noinline": None, "sycl-module-id": "a.cpp", "calls-indirectly": "s1,s2"}
    assert m.function_metadata(k, "sycl_declared_aspects") == ["i32 6"]
    assert m.named_metadata_operands("sycl_aspects") == [['!"fp64"', "i32 6"]]
    assert m.functions["pair"].return_type == "{ i32, float }"
    assert m.functions["ext"].is_declaration
    assert m.globals["g"].value_type == "%struct.S"
    assert split_operands('i32 1, !{!"a,b", i32 2}, ptr null') == ["i32 1", '!{!"a,b", i32 2}', "ptr null"]


def test_front_end_output_round_trips():
    text = compile_source(SRC, "s.ksl").ir
    m = Module.parse(text, "s.ksl")
    again = str(m.verify())
    assert again == text  # our view prints back to what LLVM printed


def test_edits_are_verified_by_llvm():
    m = module()
    m.make_declaration("_Z3foov")          # drops comdat and linkage a declaration cannot have
    m.stub_body("pair")                     # ret { i32, float } undef
    m.set_function_metadata("kern", "sycl_used_aspects", ["i32 1", "i32 6"])
    m.update_function_attributes("kern", add={"extra": "1"}, remove=["noinline"])
    ref = m.verify()
    text = str(ref)
    assert "declare spir_func void @_Z3foov()" in text
    assert "ret { i32, float } undef" in text
    assert "!sycl_used_aspects" in text and "!{i32 1, i32 6}" in text
    attrs = Module.parse(text).function_attributes("kern")
    assert "noinline" not in attrs and attrs["extra"] == "1"
    assert llvm.parse_assembly(text).get_function("kern") is not None


def test_drop_removes_now_dead_dependencies():
    m = module()
    removed = m.drop(["kern"])
    # @g (internal) and @_Z3foov (linkonce_odr) lived only through kern; the
    # external global stays, as does the unrelated external function.
    assert set(removed) == {"kern", "g", "_Z3foov"}
    assert "quoted name" in m.globals and "pair" in m.functions
    m.verify()


def test_extract_declares_what_it_does_not_take():
    m = module()
    part = m.extract(["kern"])
    assert not part.functions["kern"].is_declaration
    assert part.functions["_Z3foov"].is_declaration
    assert part.globals["g"].is_declaration is True
    assert "pair" not in part.functions
    assert set(part.types) == {"%struct.S", "%struct.T"}   # struct.T only through struct.S
    part.verify()


def test_extract_only_reads_the_part():
    # a big module: extracting one kernel must not scan the other functions
    body = "".join(f"define spir_func void @f{i}() {{\nentry:\n  call spir_func void @f{i + 1}()\n  ret void\n}}\n"
                   for i in range(2000))
    text = body + "define spir_func void @f2000() {\nentry:\n  ret void\n}\n" + \
        "define spir_kernel void @k() {\nentry:\n  call spir_func void @f1999()\n  ret void\n}\n"
    m = module(text)
    part = m.extract(m.closure(["k"]))
    assert set(part.functions) == {"k", "f1999", "f2000"}
    scanned = [n for n, f in m.functions.items() if f._refs is not None]
    assert sorted(scanned) == ["f1999", "f2000", "k"]
    part.verify()


def test_bad_input_is_one_line_error():
    with pytest.raises(IRError) as err:
        parse_text("define void @f() {\n  nonsense\n}\n", "bad.ll")
    assert str(err.value) == "bad.ll:2:3: error: expected instruction opcode"
    assert err.value.render() == str(err.value)       # the CLI prints it as it is
    assert "\n" not in str(err.value)


def test_written_text_is_llvms_printing():
    # what verify_and_serialize() writes is the text LLVM verified; unedited, it is LLVM's
    # own printing without its comment lines
    m = module()
    printed = [ln for ln in str(m.verify()).splitlines() if not ln.startswith(";")]
    assert verify_and_serialize([m])[0].splitlines() == printed
    # a declaration made by an edit prints as LLVM prints one: no parameter names
    part = module("define void @f(ptr %p, i32 %n) {\n  ret void\n}\n"
                  "define void @g(ptr %q) {\n  call void @f(ptr %q, i32 1)\n  ret void\n}\n").extract(["g"])
    assert "declare void @f(ptr, i32)" in verify_and_serialize([part])[0]


def test_added_metadata_reuses_an_identical_node():
    m = module()
    assert m.add_metadata_node(["i32 6"]) == "!1"       # !1 = !{i32 6} is already there
    assert m.add_metadata_node(["i32 7"]) not in ("!0", "!1")


def test_start_verification_result_is_used_only_for_the_text_it_checked():
    m = module()
    m.start_verification()
    assert m.verify().get_function("kern") is not None
    m.start_verification()
    del m.functions["_Z3foov"]          # kern now calls an undefined function
    with pytest.raises(RuntimeError):
        m.verify()


@pytest.mark.parametrize("threads", ["1", "2"])
def test_bad_input_is_reported_with_either_thread_setting(monkeypatch, threads):
    monkeypatch.setenv("MINISYCL_VERIFY_THREADS", threads)
    bad = "define i32 @f() {\n  %a = add i32 %b, 1\n  %b = add i32 %a, 1\n  ret i32 %a\n}\n"  # only the verifier objects
    with pytest.raises(IRError) as err:
        parse_text(bad, "bad.ll")
    assert str(err.value) == "bad.ll:3:3: error: invalid module: Instruction does not dominate all uses! " \
                             "%b = add i32 %a, 1"       # the verifier's instruction, found in the text
    assert module().text() == module().text()
