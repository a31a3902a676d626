"""propagate-aspects writes function metadata attachments where LLVM prints them.

LLVM prints a function's attachments sorted by metadata kind ID: fixed kinds
(``prof``...) first, then the others in the order the context first saw them.
Each test runs the pass, hands our text to LLVM (llvmlite, a fresh context)
and checks that LLVM's own printing has the same order as our text.
"""
import re

import llvmlite.binding as llvm

from minisycl.passes import parse_pipeline
from minisycl.passes.ir import parse_text
from minisycl.passes.manager import PassManager

_DEFINE = re.compile(r'^(?:define|declare) .*$', re.M)
_KIND = re.compile(r' !([A-Za-z_.$][-\w.$]*) !\d+')


def _kinds_per_function(text: str) -> dict[str, list[str]]:
    out = {}
    for line in _DEFINE.findall(text):
        name = re.search(r'@([-\w.$]+)\(', line).group(1)
        out[name] = _KIND.findall(line)
    return out


def _run(src: str, pipeline: str = "propagate-aspects") -> tuple[dict, dict]:
    module = parse_text(src, "t.ll")[0]
    PassManager(parse_pipeline(pipeline)).run(module)
    ours = module.text()
    llvms = str(llvm.parse_assembly(ours, context=llvm.create_context()))
    return _kinds_per_function(ours), _kinds_per_function(llvms)


HEADER = """target triple = "spir64-unknown-unknown"
!sycl_aspects = !{!0}
!0 = !{!"fp64", i32 6}
!1 = !{i32 6}
!2 = !{!"x"}
!3 = !{!"function_entry_count", i64 10}
"""


def test_replaced_attachment_goes_back_to_its_kind_place():
    # sycl_used_aspects is seen (in @first) before !later, so LLVM prints it
    # first in @second too; the pass rewrites it there (a7 from %S joins fp64),
    # and the edit alone would append it after !later
    src = """target triple = "spir64-unknown-unknown"
%S = type { i32 }
define spir_func void @first() !sycl_used_aspects !1 {
  ret void
}
define spir_func void @second() !sycl_used_aspects !1 !later !2 {
  %s = alloca %S, align 4
  call spir_func void @first()
  ret void
}
!sycl_aspects = !{!0, !4}
!sycl_types_that_use_aspects = !{!5}
!0 = !{!"fp64", i32 6}
!1 = !{i32 6}
!2 = !{!"x"}
!4 = !{!"a7", i32 7}
!5 = !{!"S", i32 7}
"""
    ours, llvms = _run(src)
    assert ours["second"] == ["sycl_used_aspects", "later"]
    assert ours == llvms


def test_new_kind_follows_the_parsed_ones_and_fixed_kinds_lead():
    # !prof is a fixed kind; !custom is parsed; sycl_used_aspects is new to the
    # module and gets the next kind ID
    src = HEADER + """
define spir_kernel void @k() !custom !2 !prof !3 {
  %d = alloca double, align 8
  ret void
}
"""
    ours, llvms = _run(src)
    assert ours["k"] == ["prof", "custom", "sycl_used_aspects"]
    assert ours == llvms


def test_fixed_targets_and_used_aspects_in_kind_order():
    src = HEADER.replace('!sycl_aspects = !{!0}', '!sycl_aspects = !{!0, !9}\n!9 = !{!"gpu", i32 2}') + """
define spir_kernel void @k() #0 !sycl_fixed_targets !1 !custom !2 {
  %d = alloca double, align 8
  ret void
}
attributes #0 = { "sycl-module-id"="a.cpp" }
"""
    ours, llvms = _run(src, "propagate-aspects{fixed-targets=gpu}")
    assert ours["k"] == ["sycl_fixed_targets", "custom", "sycl_used_aspects"]
    assert ours == llvms
