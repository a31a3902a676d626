"""What each command does to what is already at its output path (issue 17,
point 1; ``passes/support/output.py``): a regular file is replaced atomically
with the umask's mode, a symbolic link is followed, a device, FIFO, ``-`` or
``/dev/stdout`` is written in place and never replaced, a missing folder is the
same error for every command, and every error names the user's path."""
import os
import stat
import subprocess
import sys
import threading

import pytest
from click.testing import CliRunner

from minisycl.passes.support.cli import main

KSL = "kernel k(id<1> i, int* p) { p[i] = 1; }\n"
IR = """target triple = "spir64-unknown-unknown"

define spir_kernel void @k(ptr %p) #0 {
entry:
  store i32 1, ptr %p, align 4
  ret void
}

attributes #0 = { "sycl-module-id"="good.ll" }
"""
COMMANDS = ["compile", "opt", "link", "post-link", "build"]


@pytest.fixture
def inputs(tmp_path):
    (tmp_path / "k.ksl").write_text(KSL)
    (tmp_path / "good.ll").write_text(IR)
    (tmp_path / "other.ll").write_text(IR.replace("@k(", "@k2(").replace("good.ll", "other.ll"))
    return tmp_path


def args(cmd: str, folder, out: str) -> list[str]:
    ksl, good, other = (str(folder / n) for n in ("k.ksl", "good.ll", "other.ll"))
    return {"compile": ["compile", ksl, "-o", out],
            "opt": ["opt", "-passes=propagate-aspects", good, "-o", out],
            "link": ["link", good, other, "-o", out],
            "post-link": ["post-link", "-ir-output-only", good, "-o", out],
            "build": ["build", ksl, "-o", out]}[cmd]


def run(argv):
    return CliRunner().invoke(main, argv)


@pytest.mark.parametrize("cmd", COMMANDS)
def test_a_regular_file_is_replaced_with_the_umask_mode(inputs, cmd):
    out = inputs / "out"
    out.write_text("old")
    os.chmod(out, 0o600)
    old = os.umask(0o027)
    try:
        r = run(args(cmd, inputs, str(out)))
    finally:
        os.umask(old)
    assert r.exit_code == 0, r.output
    assert out.read_bytes() != b"old"
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o640
    assert [f for f in os.listdir(inputs) if f.startswith(".minisycl-")] == []


@pytest.mark.parametrize("cmd", COMMANDS)
def test_a_symlink_is_followed_and_kept(inputs, cmd):
    target = inputs / "real"
    target.write_text("old")
    link = inputs / "link"
    link.symlink_to("real")
    r = run(args(cmd, inputs, str(link)))
    assert r.exit_code == 0, r.output
    assert link.is_symlink() and os.readlink(link) == "real"
    assert target.read_bytes() != b"old"


def test_a_dangling_symlink_creates_its_target(inputs):
    link = inputs / "link"
    link.symlink_to("made.ll")
    r = run(args("opt", inputs, str(link)))
    assert r.exit_code == 0, r.output
    assert link.is_symlink() and "define spir_kernel void @k" in (inputs / "made.ll").read_text()


@pytest.mark.parametrize("cmd", COMMANDS)
def test_a_character_device_is_written_in_place(inputs, cmd):
    r = run(args(cmd, inputs, os.devnull))
    assert r.exit_code == 0, r.output
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


@pytest.mark.parametrize("cmd", ["compile", "opt", "build"])
def test_a_fifo_is_written_in_place(inputs, cmd):
    fifo = inputs / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    r = run(args(cmd, inputs, str(fifo)))
    reader.join(timeout=60)
    assert r.exit_code == 0, r.output
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and got and got[0]


@pytest.mark.parametrize("out", ["-", "/dev/stdout"])
def test_standard_output(inputs, out):
    """In a real process: ``-`` and ``/dev/stdout`` reach the pipe the caller reads."""
    cmd = [sys.executable, "-m", "minisycl.passes.support.cli", *args("opt", inputs, out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "define spir_kernel void @k" in proc.stdout


@pytest.mark.parametrize("cmd", COMMANDS)
def test_a_missing_folder_is_one_error_for_every_command(inputs, cmd):
    out = inputs / "no" / "such" / "out"
    r = run(args(cmd, inputs, str(out)))
    assert (r.exit_code, r.output) == (1, f"minisycl: error: {out}: No such file or directory\n")
    assert not (inputs / "no").exists()


def test_post_link_tables_and_images_refuse_a_missing_folder_too(inputs):
    out = inputs / "new" / "out.table"
    r = run(["post-link", str(inputs / "good.ll"), "-o", str(out)])
    assert (r.exit_code, r.output) == (1, f"minisycl: error: {out}: No such file or directory\n")
    assert not (inputs / "new").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_an_io_error_names_the_users_path(inputs):
    folder = inputs / "ro"
    folder.mkdir()
    os.chmod(folder, 0o500)
    try:
        out = folder / "out.ll"
        r = run(args("opt", inputs, str(out)))
    finally:
        os.chmod(folder, 0o700)
    assert (r.exit_code, r.output) == (1, f"minisycl: error: {out}: Permission denied\n")
