"""Nothing a user can do ends the process, and Ctrl-C stops what runs (issue 27,
points 3 and 4).  Each case runs in a child process, so a failure - a signal, an
abort, a hang - fails the test instead of killing pytest.

* SIGINT during a CPU kernel (single task, a launch shared by the worker
  threads, a graph replay, a host function) stops it within a second with
  ``KeyboardInterrupt``; the same queue and program then run a kernel correctly.
* Stack overflow in a kernel or a host function (unbounded recursion, a huge
  local array) is ``errc::runtime`` (the guard runs on an alternate stack).
* A kernel LLVM's back end aborts on (inline assembly) is ``errc::build`` with
  LLVM's message (code generation runs in a child).
* A damaged disk-cache entry is a miss: the program is rebuilt and runs.
* After USM exhaustion (``errc::memory_allocation``) a program still builds,
  compiles and runs.
* A GPU wait (the stand-in driver, ``fake_cuda.py``) is interruptible too.
"""
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.cpu_only("Ctrl-C, stack and LLVM guards of kernels running on this CPU's threads; a GPU "
                                  "wait's Ctrl-C is test_a_gpu_wait_is_interruptible (with the stand-in driver)")

KSL = r"""
kernel spin(int* p) { while (p[0] == 0) { p[1] = p[1] + 1; } }
kernel spin_all(id<1> i, int* p) { while (p[0] == 0) { p[1] = p[1] + 1; } }
kernel fillv(id<1> i, int* x, int v) { x[i] = v; }
kernel huge(int* p) { int a[100000000]; a[p[0]] = 3; p[1] = a[p[2]]; }
int spin_host(int* p) { while (p[0] == 0) { p[1] = p[1] + 1; } return 1; }
int deep(int n) { if (n == 0) { return 0; } int a[100]; a[n % 100] = n; return deep(n + 1) + a[(n * 7) % 100]; }
"""

RECURSIVE_LL = """
target triple = "spir64-unknown-unknown"
@next = internal global ptr null
define spir_func i64 @f(i64 %n) {
entry:
  %a = alloca [64 x i64]
  store volatile i64 %n, ptr %a
  %m = add i64 %n, 1
  %fn = load volatile ptr, ptr @next
  %r = call spir_func i64 %fn(i64 %m)
  %s = add i64 %r, 1
  ret i64 %s
}
define spir_kernel void @rec() {
entry:
  store volatile ptr @f, ptr @next
  %r = call spir_func i64 @f(i64 0)
  ret void
}
"""

ASM_LL = """
target triple = "spir64-unknown-unknown"
define spir_kernel void @k() {
entry:
  call void asm sideeffect "nop", ""()
  ret void
}
"""

PRELUDE = """
import os, sys, time, signal, threading
import numpy as np
from minisycl import runtime as sycl
q = sycl.queue()
prog = sycl.build_program([sys.argv[1]])
def ctrl_c(after=0.5):
    def fire():
        time.sleep(after)
        global fired
        fired = time.monotonic()
        os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=fire, daemon=True).start()
def interrupted(run, after=0.5):
    ctrl_c(after)
    try:
        run()
    except KeyboardInterrupt:
        took = time.monotonic() - fired
        assert took < 1.0, took
        print("interrupted after", round(took, 3), flush=True)
    else:
        raise SystemExit("not interrupted")
def still_works():
    x = sycl.malloc_shared(1 << 20, np.int32, q)
    q.parallel_for(prog.kernel("fillv"), 1 << 20, x, 7).wait()
    assert (np.asarray(x) == 7).all()
    print("still works", flush=True)
"""


def run_child(tmp_path, body, source=KSL, name="k.ksl", env=None):
    (tmp_path / name).write_text(source)
    script = tmp_path / "child.py"
    script.write_text(PRELUDE + textwrap.dedent(body))
    child_env = {**os.environ, "MINISYCL_CACHE_DIR": str(tmp_path / "cache"), **(env or {})}
    run = subprocess.run([sys.executable, str(script), str(tmp_path / name)], capture_output=True, text=True,
                         timeout=240, env=child_env)
    assert run.returncode == 0, (run.returncode, run.stdout, run.stderr[-3000:])
    return run.stdout


@pytest.mark.parametrize("launch", [
    "q.single_task(prog.kernel('spin'), p)",
    "q.parallel_for(prog.kernel('spin_all'), 1 << 22, p)",          # shared by every worker thread
    "q.parallel_for(prog.kernel('spin_all'), 3, p)",                # on the calling thread
    "prog.host_function('spin_host')(p.ptr)",
    "graph()",
], ids=["single_task", "parallel_for", "small_parallel_for", "host_function", "graph"])
def test_ctrl_c_stops_a_cpu_kernel(tmp_path, launch):
    out = run_child(tmp_path, f"""
        p = sycl.malloc_shared(4, np.int32, q)
        def graph():
            g = sycl.command_graph(q.get_context(), q.get_device())
            g.add(lambda h: h.single_task(prog.kernel('spin'), p))
            q.ext_oneapi_graph(g.finalize()).wait()
        for _ in range(2):                  # the runtime stops it again, the second time too
            interrupted(lambda: {launch})
        still_works()
        p[0] = 1                            # and the same kernel now ends
        {launch}
        print("ran again", flush=True)
    """)
    assert out.count("interrupted after") == 2 and "still works" in out and "ran again" in out, out


def test_ctrl_c_again_and_again_stops_only_the_launch_it_came_in(tmp_path):
    """The relayed SIGINT of one launch never stops the next (a worker may take
    it late: it carries the launch's epoch)."""
    out = run_child(tmp_path, """
        p = sycl.malloc_shared(4, np.int32, q)
        x = sycl.malloc_shared(1 << 22, np.int32, q)
        for i in range(12):
            interrupted(lambda: q.parallel_for(prog.kernel('spin_all'), 1 << 22, p), after=0.05)
            for v in range(20):                 # launches right after: none is interrupted
                q.parallel_for(prog.kernel('fillv'), 1 << 22, x, v)
            q.wait()
            assert (np.asarray(x) == 19).all()
        print("done", flush=True)
    """)
    assert out.count("interrupted after") == 12 and "done" in out, out


def test_ctrl_c_outside_kernels_is_python_s_as_before(tmp_path):
    out = run_child(tmp_path, """
        still_works()                       # the runtime's handlers are in place
        interrupted(lambda: time.sleep(5))
        seen = []
        signal.signal(signal.SIGINT, lambda *a: seen.append(1))
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.1)
        assert seen == [1], seen            # a handler the user sets later is theirs
        still_works()
    """)
    assert "interrupted after" in out and out.count("still works") == 2, out


@pytest.mark.parametrize("call", [
    ("k.ksl", KSL, "q.single_task(prog.kernel('huge'), sycl.malloc_shared(4, np.int32, q))"),
    ("k.ksl", KSL, "prog.host_function('deep')(1)"),
    ("r.ll", RECURSIVE_LL + "\ndefine spir_kernel void @fillv() { ret void }\n",
     "q.single_task(prog.kernel('rec'))"),
], ids=["huge_local_array", "host_recursion", "kernel_recursion"])
def test_stack_overflow_is_a_runtime_error(tmp_path, call):
    name, source, launch = call
    out = run_child(tmp_path, f"""
        for _ in range(2):
            try:
                {launch}
            except sycl.exception as err:
                assert err.code() == sycl.errc.runtime, err
                assert "SIGSEGV" in str(err), err
                print("caught", err, flush=True)
            else:
                raise SystemExit("no error")
        if {name!r} == "k.ksl":
            still_works()
    """, source=source, name=name)
    assert out.count("caught") == 2, out


def test_what_llvm_aborts_on_is_a_build_error(tmp_path):
    out = run_child(tmp_path, """
        for _ in range(2):
            try:
                q.single_task(prog.kernel('k'))
            except sycl.exception as err:
                assert err.code() == sycl.errc.build, err
                assert "LLVM ERROR: Inline asm not supported" in str(err), err
                print("refused", flush=True)
            else:
                raise SystemExit("no error")
    """, source=ASM_LL, name="asm.ll")
    assert out.count("refused") == 2, out


def test_a_damaged_cache_entry_is_rebuilt(tmp_path):
    from minisycl.runtime.disk_cache import read_entry
    body = """
        x = sycl.malloc_shared(16, np.int32, q)
        q.parallel_for(prog.kernel('fillv'), 16, x, 5).wait()
        assert list(x) == [5] * 16
        print("ran", flush=True)
    """
    run_child(tmp_path, body)
    entries = sorted((tmp_path / "cache" / "objects").iterdir())
    whole = {e: e.read_bytes() for e in entries}
    assert entries and all(read_entry(str(e)) is not None for e in entries)
    damages = {"truncated": lambda d: d[:len(d) // 2], "empty": lambda d: b"",
               "a flipped byte": lambda d: d[:-100] + bytes([d[-100] ^ 0xFF]) + d[-99:],
               "no header (an older version's entry)": lambda d: d[d.index(b"\x7fELF"):]}
    for how, damage in damages.items():
        for e in entries:
            e.write_bytes(damage(whole[e]))
        assert "ran" in run_child(tmp_path, body), how
        assert all(read_entry(str(e)) is not None for e in entries), how      # rewritten whole


def test_the_runtime_works_after_usm_is_exhausted(tmp_path):
    out = run_child(tmp_path, """
        keep = []
        try:
            while True:
                keep.append(sycl.malloc_shared(16, np.int32, q))
        except sycl.exception as err:
            assert err.code() == sycl.errc.memory_allocation, err
            print("exhausted after", len(keep), flush=True)
        q.parallel_for(prog.kernel('fillv'), 16, keep[0], 3).wait()      # first launch: LLVM compiles
        assert list(keep[0]) == [3] * 16
        again = sycl.build_program([sys.argv[1]])                         # and a new build
        q.parallel_for(again.kernel('fillv'), 16, keep[1], 4).wait()
        assert list(keep[1]) == [4] * 16
        for a in keep[2:200]:
            sycl.free(a, q)
        keep.append(sycl.malloc_shared(16, np.int32, q))                 # freed memory is usable again
        print("works", flush=True)
    """, env={"MINISYCL_CACHE_DIR": "off"})
    assert "exhausted after" in out and "works" in out, out


def test_a_gpu_wait_is_interruptible(monkeypatch, tmp_path):
    """The stand-in driver's stream never finishes (``cuStreamQuery`` answers
    not ready): the wait polls, and SIGINT raises ``KeyboardInterrupt`` from it;
    once the stream finishes, the same queue waits and runs again."""
    import signal
    import threading
    import time

    import numpy as np

    import fake_cuda
    from minisycl import runtime as sycl
    fake, dev = fake_cuda.install(monkeypatch)
    fake.kernels["fillv"] = (5, lambda n, _y, _z, x, v: ctypes_fill(x, n, v))
    (tmp_path / "k.ksl").write_text(KSL)
    prog = sycl.build_program([str(tmp_path / "k.ksl")])
    q = sycl.queue(dev)
    x = sycl.malloc_shared(16, np.int32, q)
    q.parallel_for(prog.kernel("fillv"), 16, x, 3).wait()
    fake.refuse["cuStreamQuery"] = 600              # CUDA_ERROR_NOT_READY
    fake.refuse["cuEventQuery"] = 600
    timer = threading.Timer(0.3, lambda: signal.pthread_kill(threading.main_thread().ident, signal.SIGINT))
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        q.wait()
    assert time.monotonic() - start < 1.3
    del fake.refuse["cuStreamQuery"], fake.refuse["cuEventQuery"]
    q.wait()
    q.parallel_for(prog.kernel("fillv"), 16, x, 4).wait()
    assert list(x) == [4] * 16


def ctypes_fill(address, n, v):
    import ctypes
    (ctypes.c_int32 * n).from_address(address)[:] = [v] * n
