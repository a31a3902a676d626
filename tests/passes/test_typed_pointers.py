"""IR from LLVM before 15, with typed pointers (issue 15, point 4).

``data/typed-pointers.ll`` is DPC++-style typed-pointer text; ``data/
typed-pointers-llvm14.bc`` is the same module written as bitcode by LLVM 14.0.6
(llvmlite 0.40.1: ``llvm.parse_assembly(text).as_bitcode()``).  LLVM's bitcode
reader upgrades old bitcode to opaque pointers, and its text parser still takes
``T*`` as ``ptr``: both load and run through the passes.  Text whose syntax
itself is gone gives one error line that says the input is typed-pointer IR
from LLVM < 15, and where."""
import os

import pytest
from click.testing import CliRunner

from minisycl.passes.support.cli import main
from minisycl.passes.ir import IRError, load
from minisycl.passes.ir.loading import first_typed_pointer

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


@pytest.mark.parametrize("name", ["typed-pointers.ll", "typed-pointers-llvm14.bc"])
def test_typed_pointer_input_loads_as_opaque_pointers(name):
    mod = load(os.path.join(DATA, name))
    kernel = mod.functions["_ZTS5scale"]
    assert kernel.params == "(ptr addrspace(1) %out, i32 %n)"
    assert "llvm.memset.p1.i64" in mod.functions          # the intrinsic's name upgraded with it
    assert first_typed_pointer(mod.text()) is None


@pytest.mark.parametrize("name", ["typed-pointers.ll", "typed-pointers-llvm14.bc"])
def test_typed_pointer_input_runs_through_the_passes(tmp_path, name):
    out = tmp_path / "out.ll"
    r = CliRunner().invoke(main, ["opt", "-passes=propagate-aspects", os.path.join(DATA, name), "-o", str(out)])
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert "define weak_odr spir_kernel void @_ZTS5scale(ptr addrspace(1) %out, i32 %n) #0 !sycl_used_aspects !1 {" \
        in text
    assert "!1 = !{i32 6}" in text                        # fp64, from the helper it calls


@pytest.mark.parametrize("text, at", [
    # typed pointers inside metadata (NVVM/SPIR annotations of LLVM 14 modules)
    ("define spir_kernel void @k(i8 addrspace(1)* %p) {\n  ret void\n}\n!a = !{void (i8 addrspace(1)*)* @k}\n",
     ("4:8: error: Expected '!' here", "'i8 addrspace(1)*' at 1:43")),
    # load and getelementptr without the explicit type (LLVM < 3.7)
    ("define i32 @f(i32* %p) {\n  %v = load i32* %p\n  ret i32 %v\n}\n",
     ("2:18: error: expected comma after load's type", "'i32*' at 1:18")),
])
def test_typed_pointer_text_llvm_rejects_is_one_clear_error(tmp_path, text, at):
    path = tmp_path / "old.ll"
    path.write_text(text)
    where, first = at
    r = CliRunner().invoke(main, ["opt", "-passes=propagate-aspects", str(path), "-o", str(tmp_path / "out.ll")])
    assert r.exit_code == 1
    assert r.output == (f"{path}:{where} (the file uses typed pointers, as LLVM < 15 wrote IR: {first}; "
                        f"minisycl needs LLVM 15+ IR with opaque pointers, 'ptr')\n")
    assert not (tmp_path / "out.ll").exists()


def test_opaque_pointer_errors_do_not_mention_typed_pointers(tmp_path):
    path = tmp_path / "new.ll"
    path.write_text('@s = constant [2 x i8] c"*\\00" ; a * in a string and a comment\n'
                    "define void @f(ptr %p) {\n  frobnicate\n}\n")
    with pytest.raises(IRError) as err:
        load(str(path))
    assert str(err.value) == f"{path}:3:3: error: expected instruction opcode"


def test_first_typed_pointer():
    assert first_typed_pointer("; i32* in a comment\n@s = global [1 x i8] c\"*\"\n") is None
    assert first_typed_pointer("define void @f(ptr %a, %\"struct.S\" addrspace(4)* %b)") == \
        (1, 48, '%"struct.S" addrspace(4)*')
    assert first_typed_pointer("@t = global [1 x i8*] zeroinitializer\n") == (1, 20, "i8*")
    assert first_typed_pointer("declare void @g(void (i32)* %cb)\n") == (1, 27, ")*")
