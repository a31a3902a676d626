"""The ``minisycl compile`` command: outputs, exit codes, exact diagnostics."""
import llvmlite.binding as llvm
from click.testing import CliRunner

from minisycl.passes.support.cli import main
from test_jit import SRC   # the richest program the tests have

GOOD = "kernel k(float* p) { p[0] = 1.0f; }\n"


def run(tmp_path, *args, src=GOOD, name="a.ksl"):
    path = tmp_path / name
    path.write_text(src)
    return path, CliRunner().invoke(main, [a.replace("SRC", str(path)) for a in args])


def test_compile_writes_verified_ir(tmp_path):
    path, r = run(tmp_path, "compile", "SRC", "-o", str(tmp_path / "out.ll"))
    assert r.exit_code == 0, r.output
    text = (tmp_path / "out.ll").read_text()
    llvm.parse_assembly(text).verify()
    assert "spir_kernel" in text


def test_emit_bc(tmp_path):
    path, r = run(tmp_path, "compile", "SRC", "--emit-bc", "-o", str(tmp_path / "out.bc"))
    assert r.exit_code == 0
    assert (tmp_path / "out.bc").read_bytes()[:2] == b"BC"


def test_check_only_writes_nothing(tmp_path):
    path, r = run(tmp_path, "compile", "--check", "SRC")
    assert r.exit_code == 0
    assert not (tmp_path / "a.ll").exists()


def test_error_format_and_status(tmp_path):
    path, r = run(tmp_path, "compile", "SRC", "-o", str(tmp_path / "o.ll"), src="kernel k(int* p) {\n  p[0] = q;\n}\n")
    assert r.exit_code == 1
    assert r.output == f"{path}:2:10: error: use of undeclared identifier 'q'\n  p[0] = q;\n         ^\n1 error generated.\n"
    assert not (tmp_path / "o.ll").exists()      # never a half-written output


def test_missing_file(tmp_path):
    r = CliRunner().invoke(main, ["compile", str(tmp_path / "nope.ksl")])
    assert r.exit_code == 1
    assert "no such file" in r.output.lower()


def test_deterministic_output(tmp_path):
    src = (tmp_path / "a.ksl")
    src.write_text(SRC)
    outs = []
    for i in range(2):
        r = CliRunner().invoke(main, ["compile", str(src), "-o", str(tmp_path / f"{i}.ll")])
        assert r.exit_code == 0, r.output
        outs.append((tmp_path / f"{i}.ll").read_bytes())
    assert outs[0] == outs[1]


def test_two_files_link(tmp_path):
    (tmp_path / "lib.ksl").write_text("SYCL_EXTERNAL float twice(float x) { return 2.0f * x; }\n")
    (tmp_path / "main.ksl").write_text("SYCL_EXTERNAL extern float twice(float x);\nkernel k(float* p) { p[0] = twice(p[0]); }\n")
    r = CliRunner().invoke(main, ["compile", str(tmp_path / "main.ksl"), str(tmp_path / "lib.ksl"), "-o", str(tmp_path / "all.ll")])
    assert r.exit_code == 0, r.output
    text = (tmp_path / "all.ll").read_text()
    assert "define spir_func float @twice" in text and "define spir_kernel void @k" in text


def test_help_on_every_command():
    for args in ([], ["compile"]):
        r = CliRunner().invoke(main, args + ["--help"])
        assert r.exit_code == 0 and "Usage" in r.output


def test_grammar_tables_cached_and_a_bad_cache_is_rebuilt(tmp_path):
    """A fresh process keeps Lark's analysed grammar in the cache folder and
    reuses it; a damaged cache file is rebuilt, never an error."""
    import os
    import subprocess
    import sys
    src = tmp_path / "a.ksl"
    src.write_text(SRC)
    cache = tmp_path / "cache"
    env = dict(os.environ, MINISYCL_CACHE_DIR=str(cache))
    cmd = [sys.executable, "-c", "from minisycl.passes.support.cli import entry; entry()", "compile", str(src), "-o"]
    outs = []
    for i, damage in enumerate((None, None, "truncate", "garbage")):
        saved = cache / "grammar.lark-cache"
        if damage == "truncate":            # as a concurrent writer may leave it
            saved.write_bytes(saved.read_bytes()[:5000])
        elif damage == "garbage":
            saved.write_bytes(b"\x80\x04junk")
        out = tmp_path / f"{i}.ll"
        proc = subprocess.run(cmd + [str(out)], env=env, capture_output=True, text=True)
        assert proc.returncode == 0 and not proc.stderr, proc.stderr
        assert (cache / "grammar.lark-cache").stat().st_size > 10_000
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] == outs[2] == outs[3]
