"""Numbers post-link reads from hand-written IR are checked before use (issue 27,
points 8-9): a negative, zero, too large, non-numeric or wrongly counted value is
one ``minisycl: error:`` line and exit 1 (it was an internal error, exit 3, or
a silently packed garbage value), and no output is written."""
import os
import re
import subprocess
import sys

import pytest

from minisycl.frontend import compile_source

SOURCE = """
device_global<int[4]> table = {1, 2, 3, 4};
kernel k(id<1> i, int* p) [[reqd_work_group_size(8)]] { p[i] = table[i % 4]; }
kernel s(nd_item<1> it, int* p) [[reqd_sub_group_size(16)]] { p[it.get_global_id(0)] = 1; }
"""


@pytest.fixture(scope="module")
def ir():
    return compile_source(SOURCE, "v.ksl").ir


def with_metadata(ir, kind, operands):
    """``ir`` with the node ``!kind`` of the first function that has it replaced."""
    ref = re.search(rf"!{kind} (!\d+)", ir).group(1)
    return re.sub(rf"^{ref} = .*$", f"{ref} = !{{{operands}}}", ir, count=1, flags=re.M)


def with_attribute(ir, key, value):
    return re.sub(rf'"{key}"="[^"]*"', f'"{key}"="{value}"', ir, count=1)


CASES = [
    ("size-negative", lambda ir: with_attribute(ir, "sycl-device-global-size", "-16"),
     "global '@table': \"sycl-device-global-size\"=\"-16\" is not a number from 1 to 4294967295"),
    ("size-zero", lambda ir: with_attribute(ir, "sycl-device-global-size", "0"), "=\"0\" is not a number"),
    ("size-huge", lambda ir: with_attribute(ir, "sycl-device-global-size", "9" * 5000), "is not a number from 1"),
    ("size-text", lambda ir: with_attribute(ir, "sycl-device-global-size", "sixteen"), "=\"sixteen\" is not"),
    ("host-access", lambda ir: ir.replace('"sycl-device-global-size"="16"',
                                         '"sycl-device-global-size"="16" "sycl-host-access"="7"'),
     "\"sycl-host-access\"=\"7\" is not a number from 0 to 3"),
    ("wg-negative", lambda ir: with_metadata(ir, "reqd_work_group_size", "i32 -8"),
     "function '@k': !reqd_work_group_size !"),
    ("wg-zero", lambda ir: with_metadata(ir, "reqd_work_group_size", "i64 0"), "'i64 0' is not an integer from 1"),
    ("wg-huge", lambda ir: with_metadata(ir, "reqd_work_group_size", "i64 4294967296"), "'i64 4294967296' is not"),
    ("wg-count", lambda ir: with_metadata(ir, "reqd_work_group_size", "i32 1, i32 1, i32 1, i32 1"),
     "has 4 operands, not 1 to 3"),
    ("wg-string", lambda ir: with_metadata(ir, "reqd_work_group_size", '!"8"'), "'!\"8\"' is not an integer"),
    ("sg-negative", lambda ir: with_metadata(ir, "intel_reqd_sub_group_size", "i32 -16"),
     "!intel_reqd_sub_group_size"),
    ("optlevel", lambda ir: ir.replace('"sycl-module-id"', '"sycl-optlevel"="99999999999" "sycl-module-id"', 1),
     "\"sycl-optlevel\"=\"99999999999\" is not a number from 0 to 4294967295"),
]


@pytest.mark.parametrize("name,edit,message", CASES, ids=[c[0] for c in CASES])
def test_out_of_range_value_is_one_error(tmp_path, ir, name, edit, message):
    src = tmp_path / "in.ll"
    src.write_text(edit(ir))
    proc = subprocess.run([sys.executable, "-m", "minisycl.passes.support.cli", "post-link", "-properties",
                           "-symbols", "-device-globals", "-emit-program-metadata", "-split=kernel", str(src),
                           "-o", str(tmp_path / "out.table")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("minisycl: error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert message in proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["in.ll"]


def test_values_in_range_pass(tmp_path, ir):
    """The front end's own values, and the edges of each range, are accepted."""
    edited = with_metadata(ir, "reqd_work_group_size", "i64 4294967295, i32 1, i32 1")
    edited = with_attribute(edited, "sycl-device-global-size", "4294967295")
    src = tmp_path / "in.ll"
    src.write_text(edited)
    proc = subprocess.run([sys.executable, "-m", "minisycl.passes.support.cli", "post-link", "-properties",
                           "-device-globals", "-emit-program-metadata", str(src), "-o", str(tmp_path / "out.table")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
