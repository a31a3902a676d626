"""Corrupt and truncated bitcode never takes a process down (issue 15, point 4).

LLVM's bitcode reader trusts its input: on some corrupt files it fails an
assertion and aborts (one random byte mutation in about twenty did, before
minisycl read bitcode in a child process).  A fixed-seed set of mutations and
truncations of real bitcode is loaded through ``load``; every one must load or
give one ``IRError``.  They run in one child Python so that a regression shows
as that child's death, not the test run's; ``read_bitcode`` gives every case its
own process, so one case cannot take the others with it.

``data/reader-assertion.bc`` is one such mutation of the bitcode of
``examples/shapes.ksl`` that makes LLVM 22's reader fail an assertion
(``idx < size()``); other LLVM releases may reject it cleanly instead.
"""
import json
import os
import random
import subprocess
import sys

import pytest

from minisycl.frontend import compile_files
from minisycl.passes import parse_pipeline
from minisycl.passes.ir import parse_text, verify_and_serialize
from minisycl.passes.manager import PassContext, PassManager

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples")
CRASHER = os.path.join(HERE, "data", "reader-assertion.bc")
CASES_PER_SEED = 100


def mutations(data: bytes, n: int, seed: int) -> list[bytes]:
    """``n`` corrupt copies of ``data``: bit flips, random bytes, truncations,
    and a block repeated; the 4-byte magic is kept so the bitcode reader sees them."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        b = bytearray(data)
        kind = rng.choice(["flip", "bytes", "truncate", "repeat"])
        if kind == "truncate":
            b = b[:rng.randrange(4, len(b))]
        elif kind == "repeat":
            at, size = rng.randrange(4, len(b)), rng.randrange(1, 64)
            b[at:at] = b[at:at + size]
        else:
            for _ in range(rng.randint(1, 8)):
                at = rng.randrange(4, len(b))
                b[at] = rng.randrange(256) if kind == "bytes" else b[at] ^ (1 << rng.randrange(8))
        out.append(bytes(b))
    return out


@pytest.fixture(scope="module")
def seeds():
    """Real bitcode: the frontend's output, and the same after the passes
    (with the metadata and attributes they add)."""
    compiled = compile_files([os.path.join(EXAMPLES, "shapes.ksl")])
    mod, _ = parse_text(compiled.ir, "shapes.ll")
    PassManager(parse_pipeline("split-if-device,propagate-aspects")).run(mod, PassContext())
    return [compiled.bitcode(), verify_and_serialize([mod], bitcode=True)[0]]


CHILD = r"""
import json, sys
from minisycl.passes.ir import IRError, load
seen = {"ok": 0, "error": 0, "crash": 0, "other": []}
for path in sys.argv[1:]:
    try:
        load(path)
        seen["ok"] += 1
    except IRError as err:
        line = str(err)
        assert line.startswith(path + ": ") and "\n" not in line, line
        seen["crash" if "crashed" in line else "error"] += 1
    except Exception as err:
        seen["other"].append(f"{path}: {type(err).__name__}: {err}")
print(json.dumps(seen))
"""


def test_mutated_bitcode_loads_or_is_one_error(tmp_path, seeds):
    paths = []
    for s, data in enumerate(seeds):
        for i, bad in enumerate(mutations(data, CASES_PER_SEED, seed=1500 + s)):
            path = tmp_path / f"m{s}_{i}.bc"
            path.write_bytes(bad)
            paths.append(str(path))
    paths.append(CRASHER)
    proc = subprocess.run([sys.executable, "-c", CHILD, *paths], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"the loading process died ({proc.returncode}):\n{proc.stderr[-2000:]}"
    assert proc.stderr == ""            # LLVM's assertion text stays in the child
    seen = json.loads(proc.stdout)
    assert seen["other"] == []
    assert seen["ok"] + seen["error"] + seen["crash"] == len(paths)
    assert seen["error"] + seen["crash"] > len(paths) // 2      # the mutations do corrupt


def cli(*args):
    return subprocess.run([sys.executable, "-m", "minisycl.passes.support.cli", *args], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("how", ["reader-assertion", "truncated", "header-only", "flipped"])
def test_cli_reports_corrupt_bitcode_as_one_error(tmp_path, seeds, how):
    if how == "reader-assertion":
        path = CRASHER
    else:
        data = seeds[0]
        bad = {"truncated": data[:len(data) // 2], "header-only": data[:8],
               "flipped": data[:40] + bytes(b ^ 0x5A for b in data[40:80]) + data[80:]}[how]
        path = str(tmp_path / f"{how}.bc")
        with open(path, "wb") as fh:
            fh.write(bad)
    out = tmp_path / "out.ll"
    proc = cli("opt", "-passes=propagate-aspects", path, "-o", str(out))
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith(f"minisycl: error: {path}: invalid bitcode: ")
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert not out.exists() and os.listdir(tmp_path) == ([] if how == "reader-assertion" else [f"{how}.bc"])


ABORTING_READER = r"""
import os, sys
from minisycl.passes.ir import IRError, bridge, load
bridge.parse_bitcode = lambda data: os.abort()     # the child, forked after this, inherits it
try:
    load(sys.argv[1])
except IRError as err:
    print(err)
"""


def test_a_reader_that_aborts_kills_only_its_child(seeds, tmp_path):
    """Independent of which inputs this LLVM build aborts on: a reader that
    aborts on everything still gives one error line."""
    path = tmp_path / "fine.bc"
    path.write_bytes(seeds[0])
    proc = subprocess.run([sys.executable, "-c", ABORTING_READER, str(path)], capture_output=True, text=True,
                          timeout=120)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == f"{path}: invalid bitcode: LLVM's bitcode reader crashed on it (SIGABRT)\n"
