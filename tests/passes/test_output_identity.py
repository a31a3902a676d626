"""Outputs never destroy inputs (issue 27, point 6; ``passes/support/output.py``,
``check_outputs``): before anything is written, every command refuses an
output that is one of its inputs or another of its outputs, compared as files
(the same name, ``./name``, a symbolic or hard link), including the images,
``.prop`` and ``.sym`` files a table implies and ``--host-output`` /
``--emit all`` side files; any bytes the OS takes work as a file name.

The generator builds command lines of every writing command with names drawn
from arbitrary bytes and outputs that alias an input or another output in each
of those ways, runs each in a child process, and checks: exit 0 when nothing
aliases, exit 1 naming both files when something does, never a traceback or
an internal error, and every input file byte for byte as it was.
``MINISYCL_FUZZ_EXAMPLES=N`` runs N cases (default 25).
"""
import os
import subprocess
import sys

from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from minisycl.passes.support import knobs

KSL = b"kernel k(id<1> i, int* p) { p[i] = 1; }\n"
IR = b"""target triple = "spir64-unknown-unknown"

define spir_kernel void @k(ptr %p) #0 {
entry:
  store i32 1, ptr %p, align 4
  ret void
}

attributes #0 = { "sycl-module-id"="good.ll" }
"""
CLI = [sys.executable, "-c", "from minisycl.passes.support.cli import entry; entry()"]
EXAMPLES = knobs.fuzz_examples(25)


def minisycl(folder, *argv):
    return subprocess.run(CLI + list(argv), cwd=folder, capture_output=True, timeout=120)


def _check_clean(r):
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode in (0, 1), err
    assert "Traceback" not in err and "internal error" not in err, err
    return err


# -- the examples of the issue -------------------------------------------------------

def test_compile_refuses_to_write_over_its_source(tmp_path):
    (tmp_path / "a.ksl").write_bytes(KSL)
    for out in ("a.ksl", "./a.ksl", str(tmp_path / "a.ksl")):
        r = minisycl(tmp_path, "compile", "a.ksl", "-o", out)
        assert r.returncode == 1 and b"same file as input 'a.ksl'" in r.stderr, r.stderr
        assert (tmp_path / "a.ksl").read_bytes() == KSL


def test_post_link_refuses_an_image_over_its_input(tmp_path):
    (tmp_path / "x_0.ll").write_bytes(IR)
    r = minisycl(tmp_path, "post-link", "-S", "x_0.ll", "-o", "x.table")
    assert r.returncode == 1 and b"output 'x_0.ll' is the same file as input 'x_0.ll'" in r.stderr, r.stderr
    assert (tmp_path / "x_0.ll").read_bytes() == IR
    assert not (tmp_path / "x.table").exists()


def test_two_tables_at_one_path_are_refused(tmp_path):
    (tmp_path / "d.ll").write_bytes(IR)
    r = minisycl(tmp_path, "post-link", "d.ll", "-o", "intel_gpu_pvc,t.table", "-o", "intel_gpu_tgllp,./t.table")
    assert r.returncode == 1 and b"output './t.table' is the same file as output 't.table'" in r.stderr, r.stderr
    assert os.listdir(tmp_path) == ["d.ll"]


def test_a_table_over_an_implied_prop_file_is_refused(tmp_path):
    (tmp_path / "d.ll").write_bytes(IR)
    r = minisycl(tmp_path, "post-link", "-properties", "d.ll", "-o", "intel_gpu_pvc,t.table", "-o", "t_0.prop")
    assert r.returncode == 1 and b"'t_0.prop'" in r.stderr, r.stderr


def test_host_output_and_output_at_one_file_are_refused_but_devices_are_not(tmp_path):
    (tmp_path / "d.ll").write_bytes(IR)
    r = minisycl(tmp_path, "opt", "-passes=split-if-device", "d.ll", "-o", "h.ll", "--host-output", "h.ll")
    assert r.returncode == 1 and b"same file as output 'h.ll'" in r.stderr
    r = minisycl(tmp_path, "opt", "-passes=split-if-device", "d.ll", "-o", "/dev/null", "--host-output", "/dev/null")
    assert r.returncode == 0, r.stderr


def test_build_emit_all_refuses_a_side_file_over_a_source(tmp_path):
    (tmp_path / "b.compile.ll").write_bytes(IR)          # a source that --emit all's compile product would replace
    r = minisycl(tmp_path, "build", "b.compile.ll", "-o", "b.bundle", "--emit", "all")
    assert r.returncode == 1 and b"output 'b.compile.ll' is the same file as input 'b.compile.ll'" in r.stderr
    assert (tmp_path / "b.compile.ll").read_bytes() == IR


def test_a_hard_link_is_the_same_file(tmp_path):
    (tmp_path / "a.ksl").write_bytes(KSL)
    os.link(tmp_path / "a.ksl", tmp_path / "b.ll")
    r = minisycl(tmp_path, "compile", "a.ksl", "-o", "b.ll")
    assert r.returncode == 1 and b"output 'b.ll' is the same file as input 'a.ksl'" in r.stderr


def test_non_utf8_names_work_and_are_shown_escaped(tmp_path):
    src = os.fsencode(tmp_path) + b"/\xfe.ksl"
    with open(src, "wb") as fh:
        fh.write(KSL)
    r = minisycl(tmp_path, "compile", b"\xfe.ksl", "-o", b"\xff.ll")
    assert r.returncode == 0, r.stderr
    r = minisycl(tmp_path, "post-link", "-S", "-properties", "-symbols", b"\xff.ll", "-o", b"\xfa.table")
    assert r.returncode == 0, r.stderr
    with open(os.fsencode(tmp_path) + b"/\xfa.table", "rb") as fh:
        assert b"\xfa_0.ll|\xfa_0.prop|\xfa_0.sym" in fh.read()
    assert minisycl(tmp_path, "inspect", b"\xfa.table").returncode == 0
    r = minisycl(tmp_path, "compile", b"\xfe.ksl", "-o", b"\xfe.ksl")
    assert r.returncode == 1 and b"output '\\xfe.ksl' is the same file as input '\\xfe.ksl'" in r.stderr, r.stderr
    r = minisycl(tmp_path, "compile", b"\xfe.ksl", "-o", b"\x1b[31m/x.ll")
    assert r.returncode == 1 and b"\\x1b[31m/x.ll" in r.stderr and b"\x1b" not in r.stderr, r.stderr


# -- the generator ---------------------------------------------------------------------

#: file names: any bytes but '/' and NUL (not '.' or '..'; a leading '-' is an option)
NAMES = st.binary(min_size=1, max_size=10).map(lambda b: b.replace(b"/", b"_").replace(b"\0", b"_")).filter(
    lambda b: b not in (b".", b"..") and not b.startswith(b"-"))
#: how an output names the file it collides with: the same name, ./name, a symbolic or a hard link
ALIAS = st.sampled_from([None, "same", "dot", "symlink", "hardlink"])


def _argv(kind, src, out, extra, emit_all):
    """The command line; the output options' values are at the positions after each ``-o``-like flag."""
    if kind == "compile":
        return ["compile", src, "-o", out]
    if kind == "opt":
        return ["opt", "-passes=split-if-device", src, "-o", out, "--host-output", extra]
    if kind == "link":
        return ["link", src, "-o", out]
    if kind == "post-link":
        return ["post-link", "-S", "-symbols", "-properties", src, "-o", out]
    return ["build", src, "-o", out] + (["--emit", "all"] if emit_all else [])


@settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize="MINISYCL_FUZZ_EXAMPLES" not in os.environ,
          phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
@given(kind=st.sampled_from(["compile", "opt", "link", "post-link", "build"]),
       names=st.lists(NAMES, min_size=3, max_size=3, unique_by=lambda b: b.lower()),
       alias=ALIAS, against_output=st.booleans(), emit_all=st.booleans())
def test_generated_command_lines_never_destroy_a_file(tmp_path_factory, kind, names, alias, against_output, emit_all):
    folder = os.fsencode(tmp_path_factory.mktemp("case"))
    against_output = against_output and kind in ("opt", "post-link") and alias != "hardlink"
    src, out, extra = (n + ext for n, ext in zip(names, (b".ksl" if kind in ("compile", "build") else b".in",
                                                            b".ll", b".ll")))
    if kind == "post-link" and alias is not None and not against_output:
        src = out[:-3] + b"_0.ll"               # the input is named as the table's first image
    with open(folder + b"/" + src, "wb") as fh:
        fh.write(KSL if kind in ("compile", "build") else IR)
    argv = _argv(kind, src, out, extra, emit_all)
    if alias is not None:
        # one output names ``target`` (the input, or the first output) through ``alias``
        target = out if against_output else src
        if kind == "post-link" and not against_output:
            alias = "dot" if alias == "dot" else "same"     # the image's name is post-link's own
            target = None
        elif kind == "post-link":
            argv += ["-o", extra]                # a second table
        slot = len(argv) - 1 if (kind in ("opt", "post-link") and against_output) else argv.index(out)
        if target is None:
            if alias == "dot":
                argv[argv.index(src)] = b"./" + src
        elif alias == "same":
            argv[slot] = target
        elif alias == "dot":
            argv[slot] = b"./" + target
        else:
            if alias == "symlink":
                os.symlink(target, folder + b"/" + argv[slot])          # relative to the link's folder
            else:
                os.link(folder + b"/" + target, folder + b"/" + argv[slot])
    with open(folder + b"/" + src, "rb") as fh:
        before = fh.read()
    r = minisycl(os.fsdecode(folder), *argv)
    err = _check_clean(r)
    with open(folder + b"/" + src, "rb") as fh:
        assert fh.read() == before, f"the input changed: {argv!r}\n{err}"
    if alias is not None:
        assert r.returncode == 1 and "same file as" in err, (argv, err)
    else:
        assert r.returncode == 0, (argv, err)
