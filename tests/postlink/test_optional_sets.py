"""The optional property sets' helpers and the post-link flags' help text."""
import pytest
from click.testing import CliRunner

from minisycl.passes.support.cli import main
from minisycl.postlink.cli import post_link_cmd
from minisycl.passes.support.ir_contract import (DEVICE_REQUIREMENTS, DEVICELIB_REQ_MASK, KERNEL_NAMES,
                                                 MISC_PROPERTIES as MISC, PROGRAM_METADATA, VIRTUAL_FUNCTIONS)
from minisycl.postlink.properties import devicelib_library, in_upstream_order
from minisycl.postlink.propertyset import PropertySets


@pytest.mark.parametrize("name, library", [
    ("__devicelib_assert_fail", "assert"), ("__devicelib_memset", "cstring"),
    ("__devicelib_sinf", "math"), ("__devicelib_llabs", "math"), ("__devicelib_sin", "math_fp64"),
    ("__devicelib_cexpf", "complex"), ("__devicelib___mulsc3", "complex"), ("__devicelib_cexp", "complex_fp64"),
    ("__devicelib_imf_umulhi", "imf"), ("__devicelib_imf_sqrtf", "imf"), ("__devicelib_imf_sqrt", "imf_fp64"),
    ("__devicelib_imf_double2half", "imf_fp64"), ("__devicelib_imf_dadd_rn", "imf_fp64"),
    ("__devicelib_imf_fmabf16", "imf_bf16"), ("__devicelib_ConvertFToBF16INTELVec4", "bfloat16"),
    ("__devicelib_default_work_group_joint_sort", "gsort"), ("_Z3foov", None)])
def test_devicelib_library(name, library):
    assert devicelib_library(name) == library


def test_sets_come_out_in_upstream_order():
    base, extra = PropertySets(), PropertySets()
    base.add(DEVICE_REQUIREMENTS, "aspects", b"\0" * 8)
    base.add(MISC, "optLevel", 2)
    base.add(VIRTUAL_FUNCTIONS, "virtual-functions-set", b"\0" * 8)
    extra.add(PROGRAM_METADATA, "k@reqd_sub_group_size", 16)
    extra.add(KERNEL_NAMES, "k", 1)
    extra.add(DEVICELIB_REQ_MASK, "DeviceLibReqMask", 64)
    assert list(in_upstream_order(base, extra).sets) == [DEVICELIB_REQ_MASK, DEVICE_REQUIREMENTS, KERNEL_NAMES,
                                                         PROGRAM_METADATA, MISC, VIRTUAL_FUNCTIONS]


@pytest.mark.parametrize("flag", ["-emit-param-info", "-emit-exported-symbols", "-emit-imported-symbols",
                                  "-emit-kernel-names", "-emit-program-metadata", "-allow-device-image-dependencies",
                                  "-ir-output-only", "-spec-const", "-split-esimd", "-lower-esimd", "-O0",
                                  "-emit-only-kernels-as-entry-points"])
def test_help_describes_flag(flag):
    option = next(p for p in post_link_cmd.params if flag in getattr(p, "opts", ()))
    assert option.help and len(option.help) > 20
    assert flag in CliRunner().invoke(main, ["post-link", "--help"]).output
