"""The IR layer reads LLVM IR by its token grammar: valid modules written
unlike our front end's output (quoted names with " = " or "#", sections,
address spaces in ``llvm.used``, metadata naming values, aggregate prefix
data, blockaddress, comdat groups) are read, split and written correctly, and
facts come from the IR's meaning, not its spelling."""
import llvmlite.binding as llvm
import pytest

from minisycl.passes.ir import Module, parse_text, quote_name, tokens, unquote_name, verify_and_serialize
from minisycl.passes.ir.lexer import has_word, split_type
from minisycl.passes.propagate_aspects import propagate_aspects
from minisycl.postlink import split_module

HEAD = 'target triple = "spir64-unknown-unknown"\n'


def load(text: str) -> Module:
    return parse_text(HEAD + text, "t.ll")[0]


def defined(m: Module) -> set[str]:
    return {n for n, e in list(m.functions.items()) + list(m.globals.items()) if not e.is_declaration}


def images(text: str, mode: str = "kernel"):
    ims = split_module(load(text), mode=mode)
    verify_and_serialize([im.module for im in ims])           # every image verifies in LLVM
    return ims


# --- the lexer ----------------------------------------------------------------------

def test_tokens_keep_strings_and_quoted_names_whole():
    toks = [t[0] for t in tokens('@"a = b" = global i32 0, section ".text#0" #1 ; c @x')]
    assert toks == ['@"a = b"', "=", "global", "i32", "0", ",", "section", '".text#0"', "#1"]


@pytest.mark.parametrize("name", ["plain.name_1", "a = b", "x#0", 'q"uote', "h\u00e9llo", "sp ace", "$dollar", "0lead"])
def test_quote_name_round_trips_through_llvm(name):
    # one function spells names for the front end and the passes; LLVM agrees with it
    text = f"{HEAD}@{quote_name(name)} = global i32 0\n"
    ref = llvm.parse_assembly(text)
    assert [g.name for g in ref.global_variables] == [name]
    m = load(f"@{quote_name(name)} = global i32 0\n")
    assert list(m.globals) == [name]
    assert unquote_name(quote_name(name)) == name


def test_split_type_reads_any_type():
    assert split_type("ptr addrspace(4) undef") == ("ptr addrspace(4)", " undef")
    assert split_type('%"struct.a b" zeroinitializer') == ('%"struct.a b"', " zeroinitializer")
    assert split_type("<{ i32, [2 x ptr] }> zeroinitializer")[0] == "<{ i32, [2 x ptr] }>"
    assert split_type('target("spirv.Event") %e')[0] == 'target("spirv.Event")'


def test_words_are_never_read_inside_names_labels_or_strings():
    assert has_word("fadd double %a, %b", "double")
    for text in ['%"double" = alloca i32', "double:", '%x = getelementptr i8, ptr @"double"',
                 'call void @f(ptr @"x double")', "%double.addr = alloca i32", '!0 = !{!"double"}']:
        assert not has_word(text, "double"), text


# --- misread classes ----------------------------------------------------------------

def test_names_with_equals_and_hash_inside_quotes():
    m = load('%"T = #0" = type { i32 }\n'
             '@"g = 1" = global %"T = #0" zeroinitializer\n'
             'define spir_kernel void @"k #0"() #0 {\n  %v = load i32, ptr @"g = 1"\n  ret void\n}\n'
             'attributes #0 = { "sycl-module-id"="a.cpp" }\n')
    assert set(m.globals) == {"g = 1"} and set(m.functions) == {"k #0"}
    assert m.globals["g = 1"].value_type == '%"T = #0"'
    assert m.functions["k #0"].refs() == ["g = 1"]
    assert m.function_attributes("k #0") == {"sycl-module-id": "a.cpp"}
    (im,) = images(m.text(), "kernel")
    assert '%"T = #0" = type { i32 }' in im.module.text()


def test_section_with_hash_is_not_an_attribute_group():
    # a plain function in section ".text#0" is no SYCL_EXTERNAL entry point
    m = load('define spir_func void @helper() section ".text#0" {\n  ret void\n}\n'
             'define spir_kernel void @k() #1 {\n  call spir_func void @helper()\n  ret void\n}\n'
             'attributes #0 = { "sycl-module-id"="a.cpp" }\n'
             'attributes #1 = { "sycl-module-id"="a.cpp" }\n')
    assert m.functions["helper"].attribute_groups == []
    ims = images(m.text(), "kernel")
    assert [im.entry_points for im in ims] == [["k"]]


def test_used_lists_are_edited_element_by_element():
    # device globals in addrspace(1) reach llvm.compiler.used through addrspacecast
    text = ('@a = addrspace(1) global i32 0 #0\n@b = addrspace(1) global i32 0 #1\n@keep = global i32 0\n'
            '@llvm.compiler.used = appending global [3 x ptr addrspace(4)] [ptr addrspace(4) addrspacecast '
            '(ptr addrspace(1) @a to ptr addrspace(4)), ptr addrspace(4) addrspacecast (ptr addrspace(1) @b to '
            'ptr addrspace(4)), ptr addrspace(4) addrspacecast (ptr @keep to ptr addrspace(4))], '
            'section "llvm.metadata"\n'
            'define spir_kernel void @ka() {\n  store i32 1, ptr addrspace(1) @a\n  store i32 1, ptr @keep\n'
            '  ret void\n}\n'
            'define spir_kernel void @kb() {\n  store i32 1, ptr addrspace(1) @b\n  ret void\n}\n'
            'attributes #0 = { "sycl-unique-id"="a" }\nattributes #1 = { "sycl-unique-id"="b" }\n')
    m = load(text)
    used = m.globals["llvm.compiler.used"]
    m.filter_used_lists({"a", "keep"})
    line = m.globals["llvm.compiler.used"].line
    assert line.startswith("@llvm.compiler.used = appending global [2 x ptr addrspace(4)] [")
    assert "@b" not in line and "@a to" in line and "@keep to" in line
    assert line.endswith('section "llvm.metadata"')
    assert used.refs() == ["a", "b", "keep"]
    verify_and_serialize([m])


def test_metadata_naming_values_is_followed():
    # named metadata and attachments that name functions: every image still verifies
    text = ('define spir_kernel void @k1() !callees !2 {\n  ret void\n}\n'
            'define spir_kernel void @k2() {\n  ret void\n}\n'
            '@g = global i32 0, !associated !3\n'
            '!opencl.kernels = !{!0, !1}\n!0 = !{ptr @k1}\n!1 = !{ptr @k2}\n!2 = !{ptr @k2}\n!3 = !{ptr @k1}\n')
    ims = images(text, "kernel")
    assert sorted(im.entry_points[0] for im in ims) == ["k1", "k2"]
    for im in ims:
        assert defined(im.module) == set(im.entry_points)


PREFIX = ('@g = global i32 0\n'
          'define spir_func i32 @vf() #0 prefix { i32, ptr } { i32 1, ptr @g } {\n  ret i32 1\n}\n'
          'define spir_func ptr addrspace(4) @vp() #0 {\n  ret ptr addrspace(4) null\n}\n'
          '%struct.S = type { i32, double }\n'
          'define spir_func %struct.S @vs() #0 {\n  ret %struct.S zeroinitializer\n}\n'
          '@vt = constant [3 x ptr] [ptr @vf, ptr @vp, ptr @vs]\n'
          'define spir_kernel void @k(ptr %o) #1 {\n  store ptr @vt, ptr %o\n  ret void\n}\n'
          'attributes #0 = { "indirectly-callable"="s" }\n'
          'attributes #1 = { "calls-indirectly"="s" "sycl-module-id"="a.cpp" }\n')


def test_outlined_functions_with_aggregate_prefix_data_and_any_return_type():
    # the kernel image declares the set's functions; the set's image and its
    # dummy define them, the dummy with stubs of every return type
    m = load(PREFIX)
    propagate_aspects(m)
    ims = split_module(m, mode="kernel")
    texts = verify_and_serialize([im.module for im in ims])
    kernel = next(t for t, im in zip(texts, ims) if im.entry_points == ["k"])
    assert "declare spir_func i32 @vf()" in kernel and "prefix" not in kernel
    dummy = next(t for t, im in zip(texts, ims) if im.dummy)       # @vs uses fp64 through %struct.S
    assert "ret %struct.S undef" in dummy
    m.stub_body("vp")
    m.stub_body("vf")
    verify_and_serialize([m])
    assert "ret ptr addrspace(4) undef" in m.functions["vp"].body
    assert "prefix { i32, ptr } { i32 1, ptr @g }" in m.functions["vf"].header


def test_blockaddress_keeps_its_function_defined():
    # @tab takes the address of a block of @vf: an image that keeps @tab must define @vf
    text = ('define spir_func void @vf() #0 {\nentry:\n  br label %bb\nbb:\n  ret void\n}\n'
            '@tab = constant ptr blockaddress(@vf, %bb)\n'
            'define spir_kernel void @k(ptr %o) #1 {\n  %p = load ptr, ptr @tab\n  store ptr %p, ptr %o\n'
            '  ret void\n}\n'
            'attributes #0 = { "indirectly-callable"="s" }\n'
            'attributes #1 = { "calls-indirectly"="s" }\n')
    ims = images(text, "kernel")
    kernel = next(im for im in ims if im.entry_points == ["k"])
    assert not kernel.module.functions["vf"].is_declaration


def test_comdat_group_is_kept_whole():
    text = ('$c = comdat any\n'
            'define linkonce_odr spir_func void @a() comdat($c) {\n  ret void\n}\n'
            'define linkonce_odr spir_func void @b() comdat($c) {\n  ret void\n}\n'
            'define spir_kernel void @k() {\n  call spir_func void @a()\n  ret void\n}\n')
    (im,) = images(text, "kernel")
    assert {"a", "b"} <= defined(im.module)
    assert "$c = comdat any" in im.module.text()


def test_double_in_names_labels_and_strings_is_no_fp64():
    text = ('%"struct.double" = type { i32 }\n'
            '@s = constant [7 x i8] c"double\\00"\n'
            'define spir_kernel void @k(ptr %"p double") {\n'
            '"double":\n  %v = alloca %"struct.double"\n  store ptr @s, ptr %"p double"\n  ret void\n}\n'
            'define spir_kernel void @real() {\n  %d = alloca double\n  ret void\n}\n'
            '!sycl_aspects = !{!0}\n!0 = !{!"fp64", i32 6}\n')
    m = load(text)
    propagate_aspects(m)
    assert "sycl_used_aspects" not in m.functions["k"].metadata
    assert m.metadata_ints(m.functions["real"].metadata["sycl_used_aspects"]) == [6]


def test_atomic64_from_the_instruction_not_the_text():
    text = ('define spir_kernel void @k(ptr %p) {\n  %o = atomicrmw add ptr %p, i64 1 monotonic, align 8\n'
            '  ret void\n}\n'
            'define spir_kernel void @n(ptr %"atomicrmw add ptr %p, i64") {\n'
            '  %o = atomicrmw add ptr %"atomicrmw add ptr %p, i64", i32 1 monotonic, align 4\n  ret void\n}\n'
            '!sycl_aspects = !{!0}\n!0 = !{!"atomic64", i32 7}\n')
    m = load(text)
    propagate_aspects(m)
    assert m.metadata_ints(m.functions["k"].metadata["sycl_used_aspects"]) == [7]
    assert "sycl_used_aspects" not in m.functions["n"].metadata
