"""A bundle whose checksum is valid but whose image or host bitcode is corrupt
(issue 15, point 4): using it raises ``sycl.exception`` (``errc.invalid``)
naming the bundle and the image, and never aborts the process (LLVM's bitcode
reader runs in a child process).  The other images of the bundle still work.
Run in a child Python, so that a regression fails this test, not the test run."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CRASHER = os.path.join(HERE, "..", "passes", "data", "reader-assertion.bc")
COUNTER = os.path.join(HERE, "..", "..", "examples", "counter.ksl")

SCRIPT = r"""
import sys
import numpy as np
from minisycl import runtime as sycl
from minisycl.postlink.build import build
from minisycl.postlink.bundle import Bundle

source, crasher, path = sys.argv[1:]
bundle, _ = build([source])
report = next(i for i, im in enumerate(bundle.images) if "report" in im.entry_points)
bundle.images[report].ir = open(crasher, "rb").read()
bundle.host = bundle.host[:len(bundle.host) // 2]
with open(path, "wb") as fh:
    fh.write(bundle.to_bytes())             # a fresh, valid checksum

prog = sycl.load_bundle(path)
q = sycl.queue()
out = sycl.malloc_shared(1, np.int64, q)
try:
    q.single_task(prog.kernel("report"), out).wait()
    print("report ran")
except sycl.exception as err:
    print(err.code().name, err)
try:
    prog.host_function("main")
except sycl.exception as err:
    print(err.code().name, err)
data = sycl.malloc_shared(6, np.int32, q)
np.asarray(data)[:] = [0, 1, 2, 3, 4, 5]
try:
    q.parallel_for(prog.kernel("count"), 6, data).wait()
    print("count ran")
except sycl.exception as err:
    print(err.code().name, err)
"""


def test_corrupt_bitcode_behind_a_valid_checksum(tmp_path, test_device):
    path = tmp_path / "bad.bundle"
    proc = subprocess.run([sys.executable, "-c", SCRIPT, COUNTER, CRASHER, str(path)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr == ""
    image, host, count = proc.stdout.splitlines()
    assert image.startswith(f"invalid {path}: image 'jit_") and "': invalid bitcode: " in image, image
    assert host.startswith(f"invalid {path}: host module: invalid bitcode: "), host
    if test_device.whole_program:
        # a GPU links a program's kernels into one module (vtables work across kernels):
        # the corrupt image refuses every kernel, with the same error
        assert count == image, (count, image)
    else:
        assert count == "count ran"
