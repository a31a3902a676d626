"""One definition of SYCL entry points (``passes/entry_points.py``), asked for
in the three ways its users need: split-if-device's device roots, upstream's
aspect pass, and post-link's JIT and AOT images."""
import pytest

from minisycl.passes.entry_points import entry_points
from minisycl.passes.ir import parse_text

IR = """
target triple = "spir64-unknown-unknown"
define spir_kernel void @k() { ret void }
define spir_func void @ext() #0 { ret void }
define spir_func void @vf() #1 { ret void }
define spir_func void @ext_vf() #2 { ret void }
define spir_kernel void @k_vf() #3 { ret void }
define spir_func void @_Z20__spirv_ControlBarrierv() #0 { ret void }
define spir_func void @plain() { ret void }
declare spir_func void @declared() #0
attributes #0 = { "sycl-module-id"="a.cpp" }
attributes #1 = { "indirectly-callable"="set" }
attributes #2 = { "indirectly-callable"="set" "sycl-module-id"="a.cpp" }
attributes #3 = { "indirectly-callable"="set" }
"""


@pytest.fixture(scope="module")
def module():
    return parse_text(IR, "entry.ll")[0]


def test_include_virtual_functions(module):
    # split-if-device's device roots and JIT images: every defined virtual function
    assert entry_points(module) == ["k", "ext", "vf", "ext_vf", "k_vf"]
    assert entry_points(module, kernels_only=True) == ["k", "vf", "ext_vf", "k_vf"]


def test_exclude_virtual_functions(module):
    # AOT images: virtual functions are never entry points, not even as kernels
    assert entry_points(module, virtual_functions="exclude") == ["k", "ext"]
    assert entry_points(module, kernels_only=True, virtual_functions="exclude") == ["k"]


def test_ignore_the_virtual_attribute(module):
    # upstream's propagate-aspects: a virtual function counts only as a kernel or SYCL_EXTERNAL
    assert entry_points(module, virtual_functions="ignore") == ["k", "ext", "ext_vf", "k_vf"]


def test_unknown_mode_is_refused(module):
    with pytest.raises(ValueError, match="virtual_functions"):
        entry_points(module, virtual_functions="sometimes")
