"""Bad input to ``minisycl opt``, ``link`` and ``post-link`` (issue 15, closing
rule): one ``error:`` line naming the file (``file:line:col`` for text), exit
status 1, and nothing written or half-written at the output path."""
import os

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from minisycl.passes.ir import bridge
from minisycl.passes.support import knobs
from minisycl.passes.support.cli import main

GOOD = """target triple = "spir64-unknown-unknown"

define spir_kernel void @k(ptr %p) #0 {
entry:
  store i32 1, ptr %p, align 4
  ret void
}

attributes #0 = { "sycl-module-id"="good.ll" }
"""

#: name -> (file contents or None for "no such file" / a directory, the error after "PATH")
BAD = {
    "missing": (None, "minisycl: error: {p}: No such file or directory"),
    "directory": ("<dir>", "minisycl: error: {p}: Is a directory"),
    "empty": (b"", "minisycl: error: {p}: empty file: expected LLVM IR text or bitcode"),
    "blank": (b"\n  \n", "minisycl: error: {p}: empty file: expected LLVM IR text or bitcode"),
    "binary": (b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 8 + b"\x02\x00>\x00\x01\x00\x00\x00\xb0\x10@\x00",
               "{p}:1:25: error: not LLVM IR text or bitcode (byte 0xb0 is not UTF-8)"),
    "not-utf8": (b"define void @f() {\n  ret void\n}\n; caf\xe9\n",
                 "{p}:4:6: error: not LLVM IR text or bitcode (byte 0xe9 is not UTF-8)"),
    "syntax": (b"define void @f() {\nentry:\n  frobnicate\n}\n", "{p}:3:3: error: expected instruction opcode"),
    "unverifiable": (b"define i32 @f() {\nentry:\n  %a = add i32 %b, 1\n  %b = add i32 %a, 1\n  ret i32 %a\n}\n",
                     "{p}:4:3: error: invalid module: Instruction does not dominate all uses! %b = add i32 %a, 1"),
    "bad-bitcode": (b"BC\xc0\xde" + b"\x35\x14\x00\x00\x05\x00\x00\x00\x62\x0c\x30\x24",
                    "minisycl: error: {p}: invalid bitcode: "),
}


def command(name: str, inp: str, out: str, good: str) -> list[str]:
    return {"opt": ["opt", "-passes=propagate-aspects", inp, "-o", out],
            "link": ["link", inp, good, "-o", out],
            "post-link": ["post-link", inp, "-o", out]}[name]


def leftovers(folder) -> list[str]:
    """Files a failed run may not leave: temporaries and images."""
    return sorted(f for f in os.listdir(folder) if f.startswith(".minisycl-") or f.startswith("out"))


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "good.ll"
    path.write_text(GOOD)
    return str(path)


@pytest.fixture
def other(tmp_path):
    """A second good module for ``link`` (another kernel)."""
    path = tmp_path / "other.ll"
    path.write_text(GOOD.replace("@k(", "@k2(").replace("good.ll", "other.ll"))
    return str(path)


@pytest.mark.parametrize("cmd", ["opt", "link", "post-link"])
@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_error_line(tmp_path, good, cmd, case):
    contents, expected = BAD[case]
    path = tmp_path / ("in.bc" if case == "bad-bitcode" else "in.ll")
    if contents == "<dir>":
        path.mkdir()
    elif contents is not None:
        path.write_bytes(contents)
    out = tmp_path / ("out.table" if cmd == "post-link" else "out.ll")
    r = CliRunner().invoke(main, command(cmd, str(path), str(out), good))
    assert r.exit_code == 1, r.output
    line = expected.format(p=path)
    if line.endswith(": "):                 # LLVM's own words follow
        assert r.output.startswith(line) and r.output.count("\n") == 1, r.output
    else:
        assert r.output == line + "\n"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("cmd", ["opt", "link", "post-link"])
def test_a_failed_run_leaves_an_existing_output_as_it_was(tmp_path, good, cmd):
    bad = tmp_path / "bad.ll"
    bad.write_text("define void @f() {\n  frobnicate\n}\n")
    out = tmp_path / ("keep.table" if cmd == "post-link" else "keep.ll")
    out.write_text("old\n")
    r = CliRunner().invoke(main, command(cmd, str(bad), str(out), good))
    assert r.exit_code == 1
    assert out.read_text() == "old\n"


@pytest.mark.parametrize("cmd", ["opt", "link", "post-link"])
def test_output_in_a_missing_folder(tmp_path, good, other, cmd):
    out = tmp_path / "no" / "such" / "out.ll"
    r = CliRunner().invoke(main, command(cmd, good, str(out), other))
    assert (r.exit_code, r.output) == (1, f"minisycl: error: {out}: No such file or directory\n")
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("cmd", ["opt", "link", "post-link"])
def test_output_under_a_file(tmp_path, good, other, cmd):
    """A file where a folder should be: unwritable, even for root."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    out = blocker / ("out.table" if cmd == "post-link" else "out.ll")
    r = CliRunner().invoke(main, command(cmd, good, str(out), other))
    assert (r.exit_code, r.output) == (1, f"minisycl: error: {out}: Not a directory\n")
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("cmd", ["opt", "link", "post-link"])
def test_output_is_a_directory(tmp_path, good, other, cmd):
    out = tmp_path / ("out.table" if cmd == "post-link" else "out.ll")
    out.mkdir()
    r = CliRunner().invoke(main, command(cmd, good, str(out), other))
    assert (r.exit_code, r.output) == (1, f"minisycl: error: {out}: Is a directory\n")
    assert sorted(os.listdir(tmp_path)) == sorted(["good.ll", "other.ll", out.name])
    assert os.listdir(out) == []


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root may write anywhere")
@pytest.mark.parametrize("cmd", ["opt", "link", "post-link"])
def test_output_in_a_read_only_folder(tmp_path, good, other, cmd):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        out = folder / ("out.table" if cmd == "post-link" else "out.ll")
        r = CliRunner().invoke(main, command(cmd, good, str(out), other))
        assert r.exit_code == 1
        assert r.output.startswith("minisycl: error: ") and r.output.endswith(": Permission denied\n")
        assert os.listdir(folder) == []
    finally:
        folder.chmod(0o755)


def test_opt_writes_both_outputs_or_neither(tmp_path, good):
    host = tmp_path / "host.ll"
    dev = tmp_path / "dev.ll"
    dev.mkdir()                             # the second output cannot be written
    r = CliRunner().invoke(main, ["opt", "-passes=split-if-device", good, "-o", str(dev), "--host-output", str(host)])
    assert (r.exit_code, r.output) == (1, f"minisycl: error: {dev}: Is a directory\n")
    assert not host.exists()
    dev.rmdir()
    r = CliRunner().invoke(main, ["opt", "-passes=split-if-device", good, "-o", str(dev), "--host-output", str(host)])
    assert r.exit_code == 0, r.output
    assert dev.is_file() and host.is_file()
    assert oct(host.stat().st_mode & 0o777) == oct(0o666 & ~_umask())      # not mkstemp's 0600


def test_empty_standard_input(tmp_path):
    r = CliRunner().invoke(main, ["opt", "-passes=propagate-aspects", "-", "-o", str(tmp_path / "out.ll")], input=b"")
    assert (r.exit_code, r.output) == (1, "minisycl: error: <stdin>: empty file: expected LLVM IR text or bitcode\n")


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("shape", ["type", "constant", "metadata"])
@pytest.mark.parametrize("cmd", [["opt", "-passes=propagate-aspects"], ["post-link", "-split=kernel"]])
def test_ir_nested_deeper_than_llvm_can_parse_is_an_error(tmp_path, shape, cmd):
    """LLVM's text parser recurses once per level and overflowed its stack near
    20,000 levels (SIGSEGV, found by tests/test_fuzz_kinds.py): deeper than
    ``bridge.MAX_NESTING`` on one line is one error naming the line, before LLVM
    reads it; 1,000 levels still parse."""
    def module(depth):
        body = {"type": "%T = type " + "{ " * depth + "i32" + " }" * depth,
                "constant": "@c = constant " + "[1 x " * depth + "i32" + "]" * depth + " zeroinitializer",
                "metadata": "!n = !{" + "!{" * depth + "i32 0" + "}" * depth + "}"}[shape]
        return "define spir_kernel void @k() {\nentry:\n  ret void\n}\n" + body + "\n"
    path = tmp_path / "deep.ll"
    path.write_text(module(20000))
    r = CliRunner().invoke(main, [*cmd, str(path), "-o", str(tmp_path / "out.table")])
    assert r.exit_code == 1 and "deep.ll:5:1: error: brackets nest" in r.output, r.output
    path.write_text(module(999 if shape != "metadata" else 998))
    r = CliRunner().invoke(main, [*cmd, str(path), "-o", str(tmp_path / "ok.table")])
    assert "brackets nest" not in r.output, r.output


@settings(max_examples=knobs.fuzz_examples(300), deadline=None)
@given(line=st.text(alphabet="([{<>}]) a", min_size=1, max_size=400), chunk=st.integers(1, 64))
def test_the_nesting_depth_read_a_chunk_at_a_time_is_the_whole_lines(line, chunk):
    """``bridge._deepest`` reads a long line a chunk at a time (so a string
    constant of megabytes costs a chunk's running depths, not eight bytes per
    byte): the deepest nesting must be the one the whole line's running sum gives."""
    import numpy as np

    data = np.frombuffer(line.encode(), np.uint8)
    whole = int(np.cumsum(bridge._BRACKET_DELTA[data].astype(np.int64)).max())
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bridge, "_CHUNK", chunk)
        assert bridge._deepest(data) == whole
