"""Generators for the runtime's native surface (issue 27, points 3 and 9): the
kinds of input that used to end the process, generated rather than listed.

* Disk-cache entries with any damage (cut at any length, any byte changed,
  bytes appended, a header field changed) are a miss, never a wrong payload
  or an exception (``disk_cache.read_entry``).
* Kernels from LLVM IR whose code LLVM's back end aborts on or that overflow
  their stack - inline assembly of any text, another target's intrinsics,
  local arrays of any size, unbounded recursion with frames of any size,
  beside plain kernels - each end as "ran", ``errc::build`` or
  ``errc::runtime`` in a child process that outlives them all: any signal,
  abort, hang or traceback of that child fails the test.

CI runs a bounded number of examples; ``MINISYCL_FUZZ_EXAMPLES=200 python -m pytest
tests/runtime/test_native_generators.py`` is a long run.
"""
import os
import subprocess
import sys

from hypothesis import HealthCheck, given, settings, strategies as st

from minisycl.passes.support import knobs
from minisycl.runtime.disk_cache import read_entry, write_entry

def examples(default: int):
    return settings(max_examples=knobs.fuzz_examples(default), deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


# -- disk-cache entries -------------------------------------------------------------------

damage = st.one_of(
    st.tuples(st.just("cut"), st.integers(0, 10_000)),
    st.tuples(st.just("flip"), st.integers(0, 10_000), st.integers(1, 255)),
    st.tuples(st.just("append"), st.binary(min_size=1, max_size=64)),
    st.tuples(st.just("none")),
)


@examples(300)
@given(payload=st.binary(max_size=2000), how=damage)
def test_a_damaged_entry_is_a_miss(tmp_path_factory, payload, how):
    path = str(tmp_path_factory.mktemp("e") / "x.o")
    write_entry(path, payload)
    data = open(path, "rb").read()
    if how[0] == "cut":
        damaged = data[:how[1] % (len(data) + 1)]
    elif how[0] == "flip":
        i = how[1] % len(data)
        damaged = data[:i] + bytes([data[i] ^ how[2]]) + data[i + 1:]
    elif how[0] == "append":
        damaged = data + how[1]
    else:
        damaged = data
    with open(path, "wb") as fh:
        fh.write(damaged)
    got = read_entry(path)
    assert got == (payload if damaged == data else None)


def test_entries_are_written_whole_and_unreadable_ones_are_misses(tmp_path):
    path = str(tmp_path / "objects" / "k.o")
    assert read_entry(path) is None and read_entry(None) is None
    write_entry(path, b"object")
    assert read_entry(path) == b"object"
    assert os.listdir(tmp_path / "objects") == ["k.o"]        # no temporary file left behind
    os.chmod(tmp_path / "objects", 0o500)
    try:
        write_entry(str(tmp_path / "objects" / "other.o"), b"x")  # a read-only folder only costs speed
    finally:
        os.chmod(tmp_path / "objects", 0o700)
    os.mkdir(tmp_path / "dir.o")
    assert read_entry(str(tmp_path / "dir.o")) is None


# -- kernels that LLVM aborts on or that overflow their stack ---------------------------------

_ASM = st.text(alphabet="nop movx%$,;#\\\"{}()0123456789\n", max_size=20)
#: intrinsics of other targets (no CPU back end selects them), with their IR types
_FOREIGN = ["i32 @llvm.nvvm.read.ptx.sreg.tid.x()", "i32 @llvm.amdgcn.workitem.id.x()",
            "void @llvm.nvvm.barrier0()", "void @llvm.amdgcn.s.barrier()", "void @llvm.ppc.sync()"]


def _kernel_body(kind, arg):
    """(extra declarations and functions, the kernel's body) of one generated kernel."""
    if kind == "asm":
        text = arg.replace("\\", "\\5C").replace('"', "\\22").replace("\n", "\\0A")
        return "", f'  call void asm sideeffect "{text}", ""()\n'
    if kind == "foreign":
        sig = _FOREIGN[arg % len(_FOREIGN)]
        ret, name = sig.split(" ", 1)
        call = f"call {ret} {name}"
        return f"declare {ret} {name.split('(')[0]}()\n", (f"  %r = {call}\n" if ret != "void" else f"  {call}\n")
    if kind == "array":
        n = 1 << arg          # an index LLVM cannot see, so the whole array stays
        return f"@at = internal global i64 {n // 3}\n", (
            f"  %a = alloca [{n} x i32]\n  %i = load volatile i64, ptr @at\n"
            f"  %p = getelementptr [{n} x i32], ptr %a, i64 0, i64 %i\n  store volatile i32 1, ptr %p\n")
    if kind == "recursion":
        frame = 1 << arg
        return (f"@next = internal global ptr null\n"
                f"define spir_func void @f() {{\n  %a = alloca [{frame} x i8]\n  store volatile i8 1, ptr %a\n"
                f"  %fn = load volatile ptr, ptr @next\n  call spir_func void %fn()\n  ret void\n}}\n"), \
            "  store volatile ptr @f, ptr @next\n  call spir_func void @f()\n"
    return "", ""


kernels = st.one_of(
    st.tuples(st.just("asm"), _ASM),
    st.tuples(st.just("foreign"), st.integers(0, len(_FOREIGN) - 1)),
    st.tuples(st.just("array"), st.integers(4, 33)),
    st.tuples(st.just("recursion"), st.integers(3, 16)),
    st.tuples(st.just("plain"), st.just(None)),
)

CHILD = r"""
import sys
from minisycl import runtime as sycl
q = sycl.queue()
for path in sys.argv[1:]:
    try:
        prog = sycl.build_program([path])
        q.single_task(prog.kernel("k")).wait()
        q.single_task(prog.kernel("k")).wait()      # twice: the first fault or error left nothing broken
        print("ran", flush=True)
    except sycl.exception as err:
        print(f"{err.code().name}: {str(err).splitlines()[0][:200]}", flush=True)
"""


@examples(3)
@given(cases=st.lists(kernels, min_size=1, max_size=4))
def test_generated_kernels_never_end_the_process(tmp_path_factory, cases):
    d = tmp_path_factory.mktemp("k")
    paths = []
    for i, (kind, arg) in enumerate(cases):
        extra, body = _kernel_body(kind, arg)
        path = d / f"k{i}.ll"
        path.write_text(f'target triple = "spir64-unknown-unknown"\n{extra}'
                        f"define spir_kernel void @k() {{\nentry:\n{body}  ret void\n}}\n")
        paths.append(str(path))
    run = subprocess.run([sys.executable, "-c", CHILD, *paths], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "MINISYCL_CACHE_DIR": str(d / "cache")})
    assert run.returncode == 0, (cases, run.returncode, run.stdout, run.stderr[-2000:])
    outcomes = run.stdout.splitlines()
    assert len(outcomes) == len(cases), (cases, run.stdout, run.stderr[-2000:])
    lost = False            # a GPU's context, lost to a kernel's fault: every later command fails (CUDA's rule)
    for (kind, _), out in zip(cases, outcomes):
        assert out == "ran" or out.startswith(("build:", "runtime:")), (kind, out)
        if lost:
            assert out.startswith(("build:", "runtime:")) and (out.startswith("build:") or "lost" in out), (kind, out)
        elif kind == "plain":
            assert out == "ran", out
        lost = lost or "context is lost" in out
