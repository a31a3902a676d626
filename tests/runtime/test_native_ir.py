"""The runtime's native support code: ``runtime/native.ll``, package data filled
in with named substitutions (``native.native_ir``)."""
import pathlib
import tomllib

import pytest

from minisycl.passes.ir import complaint, new_context, parse_and_link
from minisycl.runtime import native

ROOT = pathlib.Path(__file__).parents[2]


def test_the_template_is_package_data():
    # a non-editable install (pip install .) carries only the files listed here
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "*.ll" in config["tool"]["setuptools"]["package-data"]["minisycl.runtime"]
    assert (ROOT / "runtime" / "native.ll").is_file()


@pytest.mark.parametrize("arch", sorted(native._ARCH))
def test_every_architecture_fills_in_to_valid_ir(arch):
    text = native.native_ir(*native._ARCH[arch])
    assert "${" not in text and "$" not in text.replace("$$", "")
    assert f"[{native.MAX_THREADS} x %slot]" in text
    assert f"[{native.MAX_THREADS + 1} x %part]" in text       # the workers' shares and the caller's
    assert f"i64 {native.MAX_THREADS * 128}, i1 false" in text       # the slots' bytes
    assert native._ARCH[arch][2] in text and f"@syscall(i64 {native._ARCH[arch][0]}," in text
    ref = parse_and_link([text], new_context())
    assert complaint(ref) is None


def test_slot_and_entry_layouts_match_what_python_assumes():
    import ctypes

    from minisycl.runtime.engine import shared_machine
    ref = parse_and_link([native.native_ir(*native._ARCH["x86_64"])], new_context())
    data = shared_machine().target_data
    assert data.get_abi_size(ref.get_struct_type("slot")) == native._SLOT_BYTES     # one slot per 128 bytes
    assert data.get_abi_size(ref.get_struct_type("part")) == 128                      # one share per 128 bytes
    assert data.get_abi_size(ref.get_struct_type("entry")) == ctypes.sizeof(native.PlanEntry)
