"""Bundles and post-link outputs are checked before use (issue 17, points 2
and 7): the bundle header's schema, corrupt bitcode behind a valid checksum in
``inspect``, ``.prop`` bounds, and ``minisycl inspect`` on ``.table`` and
``.prop`` files; ``compile -``, ``--target FILE.yaml`` and the progress bar."""
import copy
import hashlib
import json
import os
import pty
import select
import struct
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from minisycl import runtime as sycl
from minisycl.passes.support.cli import main
from minisycl.passes.support.progress import Progress
from minisycl.postlink.bundle import MAGIC, Bundle, BundleError
from minisycl.postlink.propertyset import PropertyError, PropertySets

HERE = os.path.dirname(os.path.abspath(__file__))
CRASHER = os.path.join(HERE, "..", "passes", "data", "reader-assertion.bc")
SOURCE = """
device_global<int[4]> table = {1, 2, 3, 4};
kernel scale(id<1> i, float* x, float a) { x[i] = x[i] * a + (float)table[i % 4]; }
"""


@pytest.fixture(scope="module")
def bundle_bytes(tmp_path_factory):
    from minisycl.postlink.build import build
    d = tmp_path_factory.mktemp("schema")
    (d / "s.ksl").write_text(SOURCE)
    bundle, _ = build([str(d / "s.ksl")])
    return bundle.to_bytes()


def repack(data: bytes, edit) -> bytes:
    """The bundle with its header edited (``edit(header)``) and a valid checksum."""
    _, version, hlen = struct.unpack_from("<8sII", data)
    header = json.loads(data[16:16 + hlen])
    edited = copy.deepcopy(header)
    result = edit(edited)
    raw = result if isinstance(result, bytes) else json.dumps(edited).encode()
    body = struct.pack("<8sII", MAGIC, version, len(raw)) + raw + data[16 + hlen:-32]
    return body + hashlib.sha256(body).digest()


def _set(path, value):
    def edit(h):
        node = h
        for step in path[:-1]:
            node = node[step] if not isinstance(node, dict) or step in node else next(iter(node.values()))
        node[path[-1]] = value
    return edit


def _first_global(field, value):
    def edit(h):
        next(iter(h["device_globals"].values()))[field] = value
    return edit


CASES = {
    "huge device global": (_first_global("size", 2**62), "device_globals.", ".size: 4611686018427387904 is outside"),
    "negative size": (_first_global("size", -4), ".size: -4 is outside"),
    "size as text": (_first_global("size", "16"), ".size: expected an integer, got a string"),
    "size as bool": (_first_global("size", True), ".size: expected an integer, got a boolean"),
    "init too long": (_first_global("init", "00" * 64), ".init: 64 bytes for a 16-byte device global"),
    "init not hex": (_first_global("init", "zz"), ".init: is not hexadecimal"),
    "host access": (_first_global("host_access", 9), ".host_access: 9 is outside [0, 3]"),
    "nested name": (_first_global("name", {"a": ["b"]}), ".name: expected a string, got an object"),
    "images not list": (_set(["images"], {"a": 1}), "images: expected a list, got an object"),
    "entry point type": (_set(["images", 0, "entry_points"], [1]), "images[0].entry_points[0]: expected a string"),
    "dummy type": (_set(["images", 0, "dummy"], "yes"), "images[0].dummy: expected true or false"),
    "blob outside": (_set(["images", 0, "ir"], [0, 2**40]), "images[0].ir[1]: 1099511627776 is outside"),
    "blob shape": (_set(["images", 0, "ir"], [0]), "images[0].ir: a blob is [offset, size]"),
    "blob not bitcode": (_set(["images", 0, "ir"], [1, 8]), "images[0].ir: is not LLVM bitcode"),
    "split mode": (_set(["split"], "sideways"), "split: expected one of kernel, source, auto, none"),
    "signature": (_set(["kernels", "scale"], "id<7>,float*"), "parameter 1 'id<7>' is not a parameter type"),
    "unknown field": (_set(["colour"], "red"), "header: unknown field 'colour'"),
    "missing field": (lambda h: h.pop("kernels") and None, "header: missing field 'kernels'"),
    "deep nesting": (lambda h: b'{"images":' + b"[" * 200000 + b"]" * 200000 + b"}", "not JSON"),
    "not utf-8": (lambda h: b'{"images": "\xff"}', "not JSON"),
    "bad properties": (_set(["images", 0, "properties"], "[SYCL/device requirements]\naspects=2|AA\n"),
                       "a byte array starts with its 8-byte size"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_header_schema(bundle_bytes, tmp_path, case):
    edit, *expected = CASES[case]
    data = repack(bundle_bytes, edit)
    with pytest.raises(BundleError) as err:
        Bundle.from_bytes(data, "crafted.bundle")
    message = str(err.value)
    assert message.startswith("crafted.bundle: ") and "\n" not in message
    for text in expected:
        assert text in message, message
    path = tmp_path / "crafted.bundle"
    path.write_bytes(data)
    with pytest.raises(sycl.exception) as err:            # the runtime: errc::invalid
        sycl.load_bundle(str(path))
    assert err.value.code() == sycl.errc.invalid
    r = CliRunner().invoke(main, ["inspect", str(path)])
    assert r.exit_code == 1 and r.output.count("\n") == 1 and r.output.startswith("minisycl: error: "), r.output


def test_the_untouched_header_passes(bundle_bytes):
    b = Bundle.from_bytes(repack(bundle_bytes, lambda h: None))
    assert list(b.kernels) == ["scale"] and len(b.device_globals) == 1


def test_inspect_reads_every_bitcode_blob(bundle_bytes, tmp_path):
    """Corrupt image bitcode behind a valid checksum: inspect says so (LLVM
    reads it in a child) instead of passing it on to abort at launch."""
    bundle = Bundle.from_bytes(bundle_bytes)
    with open(CRASHER, "rb") as fh:
        bundle.images[0].ir = fh.read()
    path = tmp_path / "corrupt.bundle"
    path.write_bytes(bundle.to_bytes())
    proc = subprocess.run([sys.executable, "-m", "minisycl.passes.support.cli", "inspect", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith(f"minisycl: error: {path}: image 'jit_0': invalid bitcode: "), proc.stderr
    assert proc.stderr.count("\n") == 1


@pytest.mark.parametrize("text,message", [
    ("[SYCL/x]\nk=1|4294967296\n", "<p>:2: 'k' is not a uint32"),
    ("[SYCL/x]\nk=1|\u0663\n", "is not a uint32"),
    ("[SYCL/x\nk=1|1\n", "<p>:1: malformed set name line"),
    ("[SYCL/x]\nk=2|AAAA\n", "<p>:2: 'k': a byte array starts with its 8-byte size"),
    ("[SYCL/x]\nk=2|" + "A" * 10 + "B\n", "bits is more than the"),
    ("[SYCL/x]\nk=2|A!AA\n", "<p>:2: invalid base64 character"),
])
def test_prop_values_are_bounded(text, message):
    with pytest.raises(PropertyError) as err:
        PropertySets.parse(text, "<p>")
    assert message in str(err.value)


def device_module(source, path):
    """``source`` compiled, with its aspects propagated (what post-link reads)."""
    front = f"{path}.front.ll"              # (an output never replaces an input: not opt in place)
    for args in (["compile", str(source), "-o", front], ["opt", "-passes=propagate-aspects", front, "-o", str(path)]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 0, r.output


@pytest.fixture
def post_link_outputs(tmp_path):
    (tmp_path / "k.ksl").write_text("kernel a(int* p) { p[0] = 1; }\nkernel b(double* p) { p[0] = 2.0; }\n")
    device_module(tmp_path / "k.ksl", tmp_path / "k.ll")
    (tmp_path / "out").mkdir()
    r = CliRunner().invoke(main, ["post-link", "-split=kernel", "-properties", "-symbols", str(tmp_path / "k.ll"),
                                  "-o", str(tmp_path / "out" / "k.table")])
    assert r.exit_code == 0, r.output
    return tmp_path / "out"


def test_inspect_reads_tables_and_prop_files(post_link_outputs):
    out = post_link_outputs
    r = CliRunner().invoke(main, ["inspect", str(out / "k.table")])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == f"{out}/k.table: sycl-post-link file table [Code|Properties|Symbols], 2 images"
    assert "      entry points: a" in lines and "      entry points: b" in lines
    assert "        aspects = fp64 (6)" in lines
    info = json.loads(CliRunner().invoke(main, ["inspect", "--json", str(out / "k.table")]).output)
    assert info["kind"] == "table" and [im["entry_points"] for im in info["images"]] == [["b"], ["a"]]
    r = CliRunner().invoke(main, ["inspect", str(out / "k_0.prop")])
    assert r.exit_code == 0 and r.output.splitlines() == [
        f"{out}/k_0.prop: property sets", "  [SYCL/device requirements]", "    aspects = fp64 (6)"], r.output
    # the table's paths are resolved beside it when run from elsewhere
    cwd = os.getcwd()
    try:
        os.chdir(out)
        assert CliRunner().invoke(main, ["inspect", "k.table"]).exit_code == 0
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize("damage,message", [
    (lambda out: (out / "k.table").write_text("[Code|Colour]\nx|y\n"), ":1: unknown table columns"),
    (lambda out: (out / "k.table").write_text((out / "k.table").read_text() + "only-one-column\n"),
     ":4: expected 3 non-empty columns"),
    (lambda out: (out / "k_0.prop").write_text("[SYCL/device requirements]\naspects=7|x\n"),
     "k_0.prop:2: unknown property type '7'"),
    (lambda out: (out / "k_0.bc").write_bytes(open(CRASHER, "rb").read()), "k_0.bc: invalid bitcode: "),
    (lambda out: (out / "k_1.sym").write_bytes(b"\xff\n"), "k_1.sym:1:1: not a symbol file"),
    (lambda out: (out / "k_1.bc").unlink(), "k_1.bc: No such file or directory"),
])
def test_inspect_refuses_broken_tables(post_link_outputs, damage, message):
    damage(post_link_outputs)
    r = CliRunner().invoke(main, ["inspect", str(post_link_outputs / "k.table")])
    assert r.exit_code == 1 and r.output.count("\n") == 1 and message in r.output, r.output


def test_compile_reads_standard_input(tmp_path):
    r = CliRunner().invoke(main, ["compile", "-"], input="kernel k(int* p) { p[0] = 3; }\n")
    assert r.exit_code == 0 and "; ModuleID = '<stdin>'" in r.output and "define" in r.output, r.output
    r = CliRunner().invoke(main, ["compile", "-", "-o", str(tmp_path / "k.ll")], input="kernel k(int* p) { q; }\n")
    assert r.exit_code == 1 and r.output.startswith("<stdin>:1:"), r.output
    r = CliRunner().invoke(main, ["compile", "-", str(tmp_path / "x.ksl")], input="")
    assert r.exit_code == 1 and "'-' (standard input) must be the only source" in r.output


def test_target_may_be_a_device_config_file(tmp_path):
    cfg = tmp_path / "my_gpu.yaml"
    cfg.write_text("aspects: [gpu, fp16]\nsub-group-sizes: [16]\n")
    (tmp_path / "k.ksl").write_text("kernel a(int* p) { p[0] = 1; }\nkernel b(double* p) { p[0] = 2.0; }\n")
    out = tmp_path / "k.bundle"
    r = CliRunner().invoke(main, ["build", str(tmp_path / "k.ksl"), "--target", str(cfg), "-o", str(out)])
    assert r.exit_code == 0, r.output
    b = Bundle.read(str(out))
    aot = [im for im in b.images if im.target]
    assert b.targets == ["my_gpu"] and [im.entry_points for im in aot] == [["a"]]       # b needs fp64
    # post-link: -o FILE.yaml,TABLE keeps the images that config can run, names .prop files after it
    device_module(tmp_path / "k.ksl", tmp_path / "k.ll")
    (tmp_path / "pl").mkdir()
    r = CliRunner().invoke(main, ["post-link", "-split=kernel", "-properties", str(tmp_path / "k.ll"),
                                  "-o", f"{cfg},{tmp_path / 'pl' / 'k.table'}"])
    assert r.exit_code == 0, r.output
    rows = (tmp_path / "pl" / "k.table").read_text().splitlines()
    assert len(rows) == 2 and rows[1].endswith("k_my_gpu_1.prop")        # image 0, kernel b, needs fp64
    r = CliRunner().invoke(main, ["build", str(tmp_path / "k.ksl"), "--target", str(tmp_path / "no.yaml"),
                                  "-o", str(out)])
    assert r.exit_code == 1 and "no.yaml: No such file or directory" in r.output


def test_progress_shows_on_a_terminal_after_the_delay():
    master, slave = pty.openpty()
    with os.fdopen(slave, "w") as tty:
        with Progress("compiling", 2, delay=0.1, tick=0.05, stream=tty) as p:
            p.step("parse", count=0)
            time.sleep(0.4)
            p.step("write")
        out = b""
        while select.select([master], [], [], 0.2)[0]:
            out += os.read(master, 65536)
    os.close(master)
    text = out.decode()
    assert "compiling" in text and "0/2  parse" in text and "2/2" in text and text.endswith("\n"), text


def test_progress_is_silent_when_quick_quiet_or_not_a_terminal():
    master, slave = pty.openpty()
    with os.fdopen(slave, "w") as tty:
        with Progress("quick", 2, stream=tty) as p:          # under a second
            p.step("a")
        with Progress("quiet", 2, quiet=True, delay=0, stream=tty):
            time.sleep(0.2)
        readable = select.select([master], [], [], 0.2)[0]
    os.close(master)
    assert not readable
    r = CliRunner().invoke(main, ["compile", "-", "-o", "-"], input="kernel k(int* p) { p[0] = 1; }")
    assert r.exit_code == 0 and r.stderr == ""
    for command in ("compile", "post-link", "build"):
        assert "-q, --quiet" in CliRunner().invoke(main, [command, "--help"]).output
