"""No input aborts or corrupts the process (issue 17, point 2): a seeded fuzz
test per input surface — bundle bytes, bundle header fields, device-config
YAML, command-line flags (bitcode bytes: ``passes/test_bitcode_fuzz.py``).

Every case runs in its own process: one child Python per surface imports
minisycl once and forks per case, so a case that dies by a signal is seen as
that, and cannot take the others (or the test run) with it.  Each case must end
in success or a clean error — ``UserError`` / ``sycl.exception`` with a one-line
message from Python, exit 1 (or click's 2) without a traceback from the CLI —
never a signal, another exception, or exit 3 (an internal error).
"""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")

#: the forking harness every child below starts with; ``run_cases(cases)`` runs
#: ``fn()`` for each ``(name, fn)`` in a fork and prints a JSON verdict per case
HARNESS = r'''
import io, json, os, random, sys, traceback
from minisycl.passes.support.diagnostics import UserError, CompileError
from minisycl.passes.support import knobs
from minisycl.runtime.errors import exception as SyclException

CLEAN, OK, OTHER, MULTILINE = 1, 0, 3, 4

def _verdict(fn):
    try:
        fn()
        return OK
    except (UserError, SyclException) as err:
        text = err.render() if isinstance(err, UserError) else str(err)
        return CLEAN if "\n" not in text.strip() else MULTILINE
    except CompileError:
        return CLEAN
    except SystemExit as err:
        return err.code if isinstance(err.code, int) else 1
    except BaseException:
        traceback.print_exc(file=sys.stderr)
        return OTHER

def run_cases(cases):
    results = {}
    for name, fn in cases:
        sys.stdout.flush(); sys.stderr.flush()
        log = os.open(os.devnull, os.O_WRONLY) if not knobs.fuzz_verbose() else 2
        pid = os.fork()
        if pid == 0:
            os.dup2(log, 1)
            if log != 2:
                os.dup2(log, 2)
            code = _verdict(fn)
            sys.stdout.flush(); sys.stderr.flush()
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        results[name] = ("signal %d" % os.WTERMSIG(status)) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    print(json.dumps(results))
'''


def run_child(body: str, *args: str, timeout: int = 240) -> dict:
    proc = subprocess.run([sys.executable, "-c", HARNESS + body, *args], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, MINISYCL_DEBUG="0"))
    assert proc.returncode == 0, f"the fuzzing process died ({proc.returncode}):\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.splitlines()[-1])


def assert_clean(results: dict, allowed=(0, 1)):
    bad = {name: verdict for name, verdict in results.items() if verdict not in allowed}
    assert not bad, f"cases that crashed, raised a bare exception (3) or gave several lines (4): {bad}"


@pytest.fixture(scope="module")
def bundle_file(tmp_path_factory):
    """A real bundle: kernels, a host module, device globals, an AOT image."""
    from minisycl.postlink.build import build
    d = tmp_path_factory.mktemp("fuzz")
    src = d / "f.ksl"
    src.write_text("""
device_global<int[4]> table = {1, 2, 3, 4};
kernel scale(id<1> i, float* x, float a) { x[i] = x[i] * a + (float)table[i % 4]; }
kernel one(long* p) { p[0] = 41; }
host int twice(int v) { return v * 2; }
""")
    bundle, _ = build([str(src)], targets=["intel_gpu_pvc"])
    path = d / "f.bundle"
    path.write_bytes(bundle.to_bytes())
    return path


BUNDLE_BYTES = r'''
import hashlib
from minisycl.postlink.bundle import Bundle
from minisycl.postlink.inspect import check_bitcode, describe, render_text
data = open(sys.argv[1], "rb").read()
rng = random.Random(1701)

def rehash(body):
    return body + hashlib.sha256(body).digest()

def mutate(keep_checksum):
    b = bytearray(data[:-32])
    kind = rng.choice(["flip", "bytes", "truncate", "insert", "delete"])
    at = rng.randrange(8, len(b))
    if kind == "flip":
        b[at] ^= 1 << rng.randrange(8)
    elif kind == "bytes":
        for _ in range(rng.randint(1, 6)):
            b[rng.randrange(8, len(b))] = rng.randrange(256)
    elif kind == "truncate":
        b = b[:at]
    elif kind == "insert":
        b[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    else:
        del b[at:at + rng.randint(1, 16)]
    return rehash(bytes(b)) if keep_checksum else bytes(b) + data[-32:]

def inspect_it(blob):
    def fn():
        b = Bundle.from_bytes(blob, "fuzz.bundle")
        check_bitcode(b, "fuzz.bundle")
        render_text("fuzz.bundle", describe(b))
    return fn

cases = [(f"raw{i}", inspect_it(mutate(False))) for i in range(8)]
cases += [(f"rehashed{i}", inspect_it(mutate(True))) for i in range(40)]
run_cases(cases)
'''


def test_bundle_bytes(bundle_file):
    """Byte mutations of a whole bundle, with the old checksum and with a
    fresh one (so that the header and the blobs are reached): read and
    inspected (every bitcode blob read by LLVM)."""
    results = run_child(BUNDLE_BYTES, str(bundle_file))
    assert len(results) == 48
    assert_clean(results)
    assert all(v == 1 for k, v in results.items() if k.startswith("raw"))    # a checksum mismatch


BUNDLE_FIELDS = r'''
import copy, hashlib, struct
import numpy as np
from minisycl import runtime as sycl
from minisycl.postlink.bundle import MAGIC, Bundle
data = open(sys.argv[1], "rb").read()
out = sys.argv[2]
_, version, hlen = struct.unpack_from("<8sII", data)
header = json.loads(data[16:16 + hlen])
blobs = data[16 + hlen:-32]
rng = random.Random(2024)
deep = []
for _ in range(400):                # what json.dumps can write; "deep" below nests 100000 levels
    deep = [deep]
VALUES = [None, True, False, 0, -1, 1, 7, 2**31, 2**32, 2**62, -2**63, 2**64, 1.5, float("nan"), "", "x", "x" * 5000,
          "id<9>", "\udcff", [], [0], [0, 2**62], [-1, 5], {}, {"a": 1}, deep, "id<1>,float*,float", "long*"]

def paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from paths(v, prefix + (i,))

ALL = [p for p in paths(header) if p]

def pack(h):
    hb = json.dumps(h).encode() if not isinstance(h, bytes) else h
    body = struct.pack("<8sII", MAGIC, version, len(hb)) + hb + blobs
    return body + hashlib.sha256(body).digest()

def mutated():
    h = copy.deepcopy(header)
    path = rng.choice(ALL)
    parent = h
    for step in path[:-1]:
        parent = parent[step]
    action = rng.choice(["set", "set", "set", "delete", "extra"])
    if action == "delete":
        if isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent.pop(path[-1])
    elif action == "extra" and isinstance(parent, dict):
        parent["unexpected"] = rng.choice(VALUES)
    else:
        parent[path[-1]] = rng.choice(VALUES)
    return h

def use(h):
    def fn():
        with open(out, "wb") as fh:
            fh.write(pack(h))
        prog = sycl.load_bundle(out)
        q = sycl.queue("intel_gpu_pvc")
        x = sycl.malloc_shared(8, np.float32, q)
        q.parallel_for(prog.kernel("scale"), 8, x, 2.0).wait()
        p = sycl.malloc_shared(1, np.int64, q)
        q.single_task(prog.kernel("one"), p).wait()
        dg = prog.device_global("table")
        q.memcpy(sycl.malloc_shared(4, np.int32, q), dg, 16).wait()
    return fn

cases = [("whole", use(header)), ("deep", use(b'{"images": ' + b"[" * 100000 + b"]" * 100000 + b"}")),
         ("big_global", use({**header, "device_globals": {k: {**v, "size": 2**62}
                                                          for k, v in header["device_globals"].items()}})),
         ("not_json", lambda: Bundle.from_bytes(pack(b"{\"images\": [" * 3 + b"\xff"), "x")),
         ("not_object", lambda: Bundle.from_bytes(pack([1, 2]), "x"))]
cases += [(f"field{i}", use(mutated())) for i in range(40)]
run_cases(cases)
'''


def test_bundle_header_fields(bundle_file, tmp_path):
    """Crafted headers behind a valid checksum: every field set to values of
    the wrong type or out of bounds, deleted, or joined by an unknown one; then
    loaded by the runtime and used (kernels launched, a device global read)."""
    results = run_child(BUNDLE_FIELDS, str(bundle_file), str(tmp_path / "crafted.bundle"))
    assert len(results) == 45
    assert results["whole"] == 0, results
    assert (results["deep"], results["big_global"], results["not_json"], results["not_object"]) == (1, 1, 1, 1)
    assert_clean(results)


YAML = r'''
from minisycl.device_configs.targets import load_file
folder = sys.argv[1]
good = open(sys.argv[2], encoding="utf-8").read()
rng = random.Random(77)
PIECES = ["[", "]", "{", "}", ":", "- ", "\n", "  ", "!!python/object:os.system ", "&a ", "*a ", "? ", "0", "-1",
          "99999999999999999999", "aspects: [fp16]\n", "sub-group-sizes: [0]\n", "\xff", "\t", "'", '"', "#", "~",
          "[" * 2000, "runtime-device: maybe\n", "aot-toolchain: {a: [b]}\n", "\ufeff"]

def mutate():
    text = good
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(text) + 1)
        if rng.random() < 0.5:
            text = text[:at] + rng.choice(PIECES) + text[at:]
        else:
            text = text[:at] + text[at + rng.randint(1, 10):]
    raw = text.encode("utf-8", "surrogateescape")
    if rng.random() < 0.2:
        raw = raw.replace(b"\xc3\xbf", b"\xff")         # a byte that is not UTF-8
    return raw

def case(i, raw):
    def fn():
        path = os.path.join(folder, f"c{i}.yaml")
        with open(path, "wb") as fh:
            fh.write(raw)
        load_file(path)
    return fn

run_cases([(f"yaml{i}", case(i, mutate())) for i in range(60)])
'''


def test_device_config_yaml(tmp_path):
    from minisycl.device_configs.targets import CONFIG_DIR
    results = run_child(YAML, str(tmp_path), os.path.join(CONFIG_DIR, "intel_gpu_pvc.yaml"))
    assert len(results) == 60
    assert_clean(results)
    assert 0 in results.values() and 1 in results.values()       # the mutations do break some


CLI = r'''
from minisycl.passes.support.cli import main
work = sys.argv[1]
ksl, ll, bundle, table = (os.path.join(work, n) for n in ("a.ksl", "a.ll", "a.bundle", "a.table"))
rng = random.Random(99)
COMMANDS = {
    "compile": [ksl, "-", "-o", "--emit-bc", "--check", "--time", "-q"],
    "link": [ll, "-o"],
    "opt": [ll, "-passes=", "-passes=propagate-aspects", "-passes=nope(", "-o", "-S"],
    "post-link": [ll, "-split=kernel", "-split=bogus", "-properties", "-symbols", "-S", "-o", "intel_gpu_pvc," + table,
                  "x/y," + table, "nope.yaml," + table, "-out-dir", "-ir-output-only", "-emit-param-info", "-q"],
    "build": [ksl, "-o", "--target", "intel_gpu_pvc", "nope.yaml", "bogus", "-j", "0", "-j", "-3", "--split", "none"],
    "inspect": [bundle, table, ll, "--json"],
    "devices": ["-v"],
}
# (no NUL byte: a real command line cannot hold one)
JUNK = ["", "-", "--", "-x", "--no-such-flag", "\x01", "a" * 300, os.path.join(work, "missing"), work, "/dev/null",
        os.path.join(work, "out", "o.x"), "-o", "1", "-1", "99999999999999999999", "\udcff"]

def argv():
    cmd = rng.choice(sorted(COMMANDS))
    pool = COMMANDS[cmd] + JUNK
    return [cmd] + [rng.choice(pool) for _ in range(rng.randint(0, 5))]

def case(args):
    def fn():
        os.chdir(work)
        sys.stdin = io.TextIOWrapper(io.BytesIO(b"kernel k(int* p) { p[0] = 1; }"))
        main.main(args=args, prog_name="minisycl", standalone_mode=True)
    return fn

cases = [(json.dumps(a), case(a)) for a in (argv() for _ in range(60))]
run_cases(cases)
'''


def test_cli_flags(tmp_path, bundle_file):
    """Random flag and argument combinations for every command: exit 0, 1 or
    2 (click's usage error), never 3 or a signal."""
    from minisycl.frontend import compile_files
    (tmp_path / "a.ksl").write_text("kernel k(int* p) { p[0] = 1; }\n")
    (tmp_path / "a.ll").write_text(compile_files([str(tmp_path / "a.ksl")]).ir)
    (tmp_path / "a.bundle").write_bytes(bundle_file.read_bytes())
    subprocess.run([sys.executable, "-m", "minisycl.passes.support.cli", "post-link", "-properties", "-symbols",
                    "a.ll", "-o", "a.table"], cwd=tmp_path, check=True, capture_output=True)
    results = run_child(CLI, str(tmp_path))
    assert len(results) >= 50                   # (a repeated command line counts once)
    assert_clean(results, allowed=(0, 1, 2))
