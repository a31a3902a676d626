"""The front end's IR writer spells names with the IR layer's one quoting
function (``passes.ir.lexer.quote_name``): globals, and named struct types."""
import llvmlite.binding as llvm

from minisycl.frontend.ir_writer import I32, Function, Module, global_name
from minisycl.passes.ir.lexer import quote_name


def test_named_struct_types_and_globals_use_the_ir_layers_quoting():
    m = Module("m", "spir64-unknown-unknown", "e")
    for name in ("plain", "class.sycl::_V1::id.1", 'odd "name"\\'):
        assert m.identified_type(name).text == "%" + quote_name(name)
        assert global_name(name) == "@" + quote_name(name)


def test_quoted_names_parse_back():
    m = Module("m", "x86_64-unknown-linux-gnu", "")
    t = m.identified_type('struct.odd "name"\\')
    t.set_body([I32])
    m.add(Function('f "q"', I32, [], arg_names=[]))
    text = str(m).replace('target datalayout = ""\n', "")
    ref = llvm.parse_assembly(text, context=llvm.create_context())
    assert [f.name for f in ref.functions] == ['f "q"']
    assert "%" + quote_name('struct.odd "name"\\') + " = type { i32 }" in text
