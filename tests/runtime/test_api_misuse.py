"""Misusing the runtime's API raises ``sycl.exception`` with the right ``errc``,
never a bare Python, NumPy or ctypes error, and the process survives (issue 17
point 3): kernels and arguments of the wrong kind, integers that do not fit
their parameter, memory of the wrong element type, a modifiable graph
submitted as an executable one, host functions that fault, sources given as
one path, launches too large to count."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from minisycl import runtime as sycl

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples")

KSL = """
struct P { int a; float b; };
kernel fillv(id<1> i, int* x, int v) { x[i] = v; }
kernel scalars(long* out, char c, uchar uc, short s, uint u, ulong ul, bool b, float f, half h, double d) {
  out[0] = c; out[1] = uc; out[2] = s; out[3] = u; out[4] = (long)ul; out[5] = b ? 1 : 0;
  out[6] = (long)f; out[7] = (long)h; out[8] = (long)d;
}
kernel poke_struct(P* p) { p[0].a = 3; }
host int deref(int* p) { return p[0]; }
host float halve(float x) { return x / 2.0f; }
host double mix(double a, long b, bool c) { return c ? a + b : a - b; }
host void touch(int* p) { p[0] = 11; }
"""


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    d = tmp_path_factory.mktemp("m")
    (d / "m.ksl").write_text(KSL)
    return sycl.build_program(d / "m.ksl")


def raises(code, fn, *words):
    with pytest.raises(sycl.exception) as err:
        fn()
    assert err.value.code() == getattr(sycl.errc, code), (err.value.code(), str(err.value))
    for w in words:
        assert w in str(err.value), str(err.value)
    return str(err.value)


# --- kernels and their arguments ---------------------------------------------------------

@pytest.mark.parametrize("not_a_kernel", [None, "fillv", 42, print])
def test_a_non_kernel_launched_is_invalid(prog, not_a_kernel):
    q = sycl.queue()
    x = sycl.malloc_shared(4, np.int32, q)
    raises("invalid", lambda: q.parallel_for(not_a_kernel, 4, x, 1), "expected a kernel")
    raises("invalid", lambda: q.single_task(not_a_kernel), "expected a kernel")
    g = sycl.command_graph(q)
    raises("invalid", lambda: g.add(lambda h: h.parallel_for(not_a_kernel, 4, x, 1)), "expected a kernel")
    assert g.get_nodes() == []


@pytest.mark.parametrize("args, words", [
    ((2 ** 40,), "argument 2 of kernel 'fillv' (int): 1099511627776 does not fit"),
    ((-2 ** 31 - 1,), "does not fit"),
    ((1.5,), "argument 2 of kernel 'fillv' (int) must be an integer"),
    (("7",), "must be an integer"),
    ((1, 2), "takes 2 arguments (int*, int), got 3"),
], ids=["2**40", "below-int-min", "float", "str", "too-many"])
def test_kernel_integer_arguments_must_fit(prog, args, words):
    q = sycl.queue()
    x = sycl.malloc_shared(4, np.int32, q)
    np.asarray(x)[:] = 0                    # (a GPU's fresh memory is not zero)
    raises("invalid", lambda: q.parallel_for(prog.kernel("fillv"), 4, x, *args), words)
    assert list(x) == [0] * 4


@pytest.mark.parametrize("index, value, words", [
    (1, 128, "(char): 128 does not fit"), (2, -1, "(uchar): -1 does not fit"), (3, 1 << 15, "(short)"),
    (4, -1, "(uint): -1 does not fit"), (5, 1 << 64, "(ulong)"), (6, 2, "(bool): 2 does not fit"),
    (7, 1e39, "(float): 1e+39 is beyond the range"), (8, 70000.0, "(half): 70000.0 is beyond the range"),
    (9, "x", "(double) must be a number"), (9, 10 ** 400, "(double)"),
], ids=["char", "uchar", "short", "uint", "ulong", "bool", "float", "half", "double-str", "double-10**400"])
def test_each_scalar_type_has_its_range(prog, index, value, words):
    q = sycl.queue()
    out = sycl.malloc_shared(9, np.int64, q)
    args = [out, -128, 255, -(1 << 15), (1 << 32) - 1, (1 << 64) - 1, True, 3.4e38, 65504.0, 1e308]
    q.single_task(prog.kernel("scalars"), *args).wait()          # the limits themselves fit
    assert list(out[:4]) == [-128, 255, -(1 << 15), (1 << 32) - 1] and out[5] == 1 and out[7] == 65504
    args[index] = value
    raises("invalid", lambda: q.single_task(prog.kernel("scalars"), *args), f"argument {index + 1}", words)


def test_pointer_arguments_need_memory_of_their_type(prog):
    q = sycl.queue()
    f = sycl.malloc_shared(4, np.float32, q)
    np.asarray(f)[:] = 0
    raises("invalid", lambda: q.parallel_for(prog.kernel("fillv"), 4, f, 1),
           "argument 1 of kernel 'fillv' (int*) needs memory of int (int32), got a USM allocation of float32")
    # another library's memory is taken without a copy (interop.py), checked as USM is
    # (a GPU cannot use NumPy's host memory at all: the same errc, naming the device)
    raises("invalid", lambda: q.parallel_for(prog.kernel("fillv"), 4, np.zeros(4, np.float32), 1),
           "argument 1 of kernel 'fillv' (int*) needs memory of int (int32)" if q.device.impl.runs_on_host
           else f"which {q.device.name} cannot use")
    raises("invalid", lambda: q.parallel_for(prog.kernel("fillv"), 4, object(), 1),
           "must be a USM allocation, got object")
    raises("invalid", lambda: q.parallel_for(prog.kernel("fillv"), 4, 12345, 1), "not inside a live USM allocation")
    assert not np.asarray(f).any()
    u = sycl.malloc_shared(4, np.uint32, q)                      # same width: fine
    q.parallel_for(prog.kernel("fillv"), 4, u, 7).wait()
    assert list(u) == [7] * 4
    x = sycl.malloc_shared(4, np.int32, q)
    np.asarray(x)[:] = 0
    q.parallel_for(prog.kernel("fillv"), 2, x.ptr + 8, 5).wait()  # an address inside an allocation
    assert list(x) == [0, 0, 5, 5]
    raw = sycl.malloc_shared(8, np.uint8, q)                     # a struct pointer takes any memory
    q.single_task(prog.kernel("poke_struct"), raw).wait()
    assert np.asarray(raw).view(np.int32)[0] == 3


def test_a_freed_allocation_as_a_kernel_argument_is_invalid(prog):
    q = sycl.queue()
    x = sycl.malloc_shared(4, np.int32, q)
    sycl.free(x)
    raises("invalid", lambda: q.parallel_for(prog.kernel("fillv"), 4, x, 1), "argument 1", "freed")


# --- launches ----------------------------------------------------------------------------

def test_a_range_too_large_to_count_is_invalid(prog):
    raises("invalid", lambda: sycl.range(1 << 40, 1 << 40), "more than a launch can hold")
    raises("invalid", lambda: sycl.range(True), "non-negative integer dimensions")


@pytest.mark.cpu_only("the guard region after each allocation is the CPU device's; a GPU kernel past its allocation writes whatever lies there or loses its context (CUDA_ERROR_ILLEGAL_ADDRESS)")
def test_update_range_beyond_the_memory_then_replay_stops_in_the_kernel(prog):
    """The issue's ``node.update_range(10**9)`` + replay: the kernel runs past its
    allocation into the guard page and stops with ``errc::runtime``; the process,
    the queue and the graph go on."""
    q = sycl.queue()
    x = sycl.malloc_shared(64, np.int32, q)
    g = sycl.command_graph(q)
    n = g.add(lambda h: h.parallel_for(prog.kernel("fillv"), 64, x, 3))
    exe = g.finalize(updatable=True)
    n.update_range(10 ** 9)
    exe.update(n)
    raises("runtime", lambda: q.ext_oneapi_graph(exe), "kernel 'fillv' stopped with SIGSEGV")
    n.update_range(64)
    exe.update(n)
    np.asarray(x)[:] = 0
    q.ext_oneapi_graph(exe).wait()
    assert list(x) == [3] * 64


# --- graphs, command groups, dependencies ------------------------------------------------

def test_a_modifiable_graph_submitted_as_executable_is_invalid(prog):
    q = sycl.queue()
    x = sycl.malloc_shared(4, np.int32, q)
    np.asarray(x)[:] = 0
    g = sycl.command_graph(q)
    g.add(lambda h: h.parallel_for(prog.kernel("fillv"), 4, x, 1))
    raises("invalid", lambda: q.ext_oneapi_graph(g), "executable command graph", "finalize()")
    raises("invalid", lambda: q.submit(lambda h: h.ext_oneapi_graph(g)), "executable command graph")
    raises("invalid", lambda: q.ext_oneapi_graph("graph"), "executable command graph")
    assert list(x) == [0] * 4
    q.ext_oneapi_graph(g.finalize()).wait()
    assert list(x) == [1] * 4


def test_command_groups_and_host_tasks_must_be_callable():
    q = sycl.queue()
    raises("invalid", lambda: q.submit(3), "command-group function")
    raises("invalid", lambda: q.submit(lambda h: h.host_task("not callable")), "host_task expects a callable")
    g = sycl.command_graph(q)
    raises("invalid", lambda: g.add(3), "must be callable")
    assert g.get_nodes() == []


def test_dependencies_must_be_events():
    q = sycl.queue()
    x = sycl.malloc_shared(4, np.int32, q)
    raises("invalid", lambda: q.memset(x, 0, 4, depends_on=3), "depends_on expects an event")
    raises("invalid", lambda: q.memset(x, 0, 4, depends_on=[q]), "depends_on expects an event")


@pytest.mark.parametrize("count, dtype", [(1 << 55, np.uint8), (1 << 61, np.float64), pytest.param(
    1 << 44, np.uint8, marks=pytest.mark.cpu_only("16 TiB of shared memory is refused by the CPU device's headroom "
                                                   "check; CUDA's managed memory may reserve it and back it lazily"))])
def test_huge_allocations_are_memory_allocation_errors(count, dtype):
    raises("memory_allocation", lambda: sycl.malloc_shared(count, dtype), "cannot allocate")


# --- host functions ----------------------------------------------------------------------

def test_a_host_function_that_faults_raises_runtime_and_the_process_goes_on(prog):
    deref = prog.host_function("deref")
    raises("runtime", lambda: deref(None), "host function 'deref' stopped with SIGSEGV", "at address 0x0")
    q = sycl.queue()
    x = sycl.malloc_shared(1, np.int32, q)
    x[0] = 41
    assert deref(x) == 41                                        # the same function works afterwards
    prog.host_function("touch")(x)
    assert x[0] == 11


def test_host_function_arguments_and_results(prog):
    assert prog.host_function("halve")(3.0) == 1.5
    assert prog.host_function("mix")(0.5, 1 << 40, True) == 0.5 + (1 << 40)
    assert prog.host_function("mix")(0.5, 2, False) == -1.5
    assert prog.host_function("touch")(sycl.malloc_shared(1, np.int32)) is None
    raises("invalid", lambda: prog.host_function("halve")("x"), "argument 1 of host function 'halve' (float)")
    raises("invalid", lambda: prog.host_function("halve")(1e39), "beyond the range")
    raises("invalid", lambda: prog.host_function("mix")(0.5, 1 << 64, True), "(i64)", "does not fit")
    raises("invalid", lambda: prog.host_function("deref")(np.zeros(2, np.int32)), "must be a USM allocation")
    raises("invalid", lambda: prog.host_function("halve")(), "takes 1 arguments, got 0")
    raises("invalid", lambda: prog.host_function("nope"), "no host function named 'nope'")


def test_host_functions_leave_no_error_at_interpreter_exit():
    """``examples/clamp.py`` calls a host function; its engine is closed at exit
    without an "Exception ignored in ... __del__" on stderr."""
    run = subprocess.run([sys.executable, os.path.join(EXAMPLES, "clamp.py")], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert "scaled(0.5) = 50.0" in run.stdout
    assert run.stderr == "", run.stderr


# --- build_program -----------------------------------------------------------------------

def test_build_program_takes_one_path_or_a_list(tmp_path):
    (tmp_path / "one.ksl").write_text("kernel k(int* x) { x[0] = 1; }\n")
    (tmp_path / "two.ksl").write_text("kernel j(int* x) { x[0] = 2; }\n")
    for sources in [str(tmp_path / "one.ksl"), tmp_path / "one.ksl", [tmp_path / "one.ksl"]]:
        assert sorted(sycl.build_program(sources).signatures) == ["k"]
    both = sycl.build_program((str(tmp_path / "one.ksl"), pathlib.Path(tmp_path / "two.ksl")))
    assert sorted(both.signatures) == ["j", "k"]


def test_build_program_errors_are_sycl_exceptions(tmp_path):
    raises("invalid", lambda: sycl.build_program(3), "a path or a non-empty list of paths")
    raises("invalid", lambda: sycl.build_program([]), "a path or a non-empty list of paths")
    raises("invalid", lambda: sycl.build_program([str(tmp_path), 3]), "a path or a non-empty list of paths")
    raises("invalid", lambda: sycl.build_program(tmp_path / "missing.ksl"), "no source file", "missing.ksl")
    raises("invalid", lambda: sycl.build_program(str(tmp_path)), "no source file")
    (tmp_path / "bad.ksl").write_text("kernel k( { }\n")
    raises("build", lambda: sycl.build_program(tmp_path / "bad.ksl"), "bad.ksl:1:", "error:")
