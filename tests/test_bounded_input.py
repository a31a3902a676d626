"""Bounded work for bounded input (issue 27, point 5), by generators.

Each surface gets generated inputs of the kinds that used to blow up — one
long token of every kind, numbers of thousands of digits, types and JSON/YAML
nested thousands deep, special files (``/dev/zero``, a FIFO, a directory) where
a file is read — and each case runs in a child process under resource limits
(address space and CPU time), which reports its peak memory.  A case passes
when it ends in success or a clean error (``UserError``/``CompileError``,
exit 1 from the CLI: never exit 3, a traceback or a signal), within its time
limit, and with peak memory below ``MEMORY_FACTOR`` times its input (plus the
interpreter's own).

The number of generated cases per surface is ``MINISYCL_FUZZ_EXAMPLES``
(default 4, for CI); a long run:
``MINISYCL_FUZZ_EXAMPLES=200 python -m pytest tests/test_bounded_input.py``.
"""
import json
import os
import resource
import subprocess
import sys
import textwrap

import pytest

from minisycl.passes.support import knobs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = knobs.fuzz_examples(4)
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck))
#: peak memory a case may add, as a multiple of its input's size
MEMORY_FACTOR = 10
#: what any case may add besides (LLVM's own start-up, the compiler's tables)
SLACK_MB = 60
CPU_SECONDS = 120
ADDRESS_SPACE = 8 << 30

#: the child: imports minisycl, notes its memory, runs the case, prints a verdict
CHILD = r'''
import json, resource, sys, time
import minisycl.frontend, minisycl.postlink.build, minisycl.postlink.inspect, minisycl.runtime
CASE = sys.stdin.read()
from minisycl.passes.support.diagnostics import CompileError, UserError
from minisycl.runtime.errors import exception as SyclException
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
verdict = "ok"
try:
    exec(compile(CASE, "<case>", "exec"))
except (CompileError, UserError, SyclException, OSError) as err:
    verdict = "clean"
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"verdict": verdict, "added_kb": after - before, "seconds": time.perf_counter() - t0}))
'''


def _limits():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))


def run_case(code: str, input_bytes: int) -> dict:
    """Run ``code`` in a limited child; fail unless it ended cleanly within bounds."""
    proc = subprocess.run([sys.executable, "-c", CHILD], input=textwrap.dedent(code), capture_output=True, text=True,
                          timeout=CPU_SECONDS * 2, preexec_fn=_limits, env=dict(os.environ, MINISYCL_DEBUG="0"))
    assert proc.returncode == 0, f"the case died ({proc.returncode}):\n{proc.stderr[-3000:]}"
    result = json.loads(proc.stdout.splitlines()[-1])
    allowed_kb = (MEMORY_FACTOR * input_bytes) // 1024 + SLACK_MB * 1024
    assert result["added_kb"] <= allowed_kb, \
        f"peak memory grew by {result['added_kb'] // 1024} MB for {input_bytes} bytes of input"
    return result


# -- .ksl sources: one long token of each kind -------------------------------------------------

#: kind -> (prefix, unit, suffix): a source with one token of ``unit`` repeated to about n bytes
LONG_TOKENS = {
    "block comment": ("/*", "a*", "*/\nkernel k(int* p) { p[0] = 1; }\n"),
    "line comment": ("//", "x", "\nkernel k(int* p) { p[0] = 1; }\n"),
    "unterminated comment": ("kernel k(int* p) { p[0] = 1; }\n/*", "a\n", ""),
    "string": ('host void h() { print("', "a", '"); }\n'),
    "escapes": ('host void h() { print("', "\\n\\q", '"); }\n'),
    "unterminated string": ('host void h() { print("', 'a\\"', "\n"),
    "char": ("kernel k(int* p) { p[0] = '", "\\'", "'; }\n"),
    "identifier": ("kernel k(int* p) { int ", "a", " = 1; p[0] = 1; }\n"),
    "decimal": ("kernel k(long* p) { p[0] = ", "7", "; }\n"),
    "hex": ("kernel k(long* p) { p[0] = 0x", "f", "; }\n"),
    "float": ("kernel k(float* p) { p[0] = ", "3", ".5e1f; }\n"),
    "blanks": ("kernel k(int* p) {", " \t", "p[0] = 1; }\n"),
    "lines": ("kernel k(int* p) {", "\n", "p[0] = 1; }\n"),
}


def long_token_case(kind: str, n: int) -> str:
    prefix, unit, suffix = LONG_TOKENS[kind]
    return f"""
        from minisycl.frontend import compile_source
        compile_source({prefix!r} + {unit!r} * {max(n // len(unit), 1)} + {suffix!r}, "long.ksl")
    """


@pytest.mark.parametrize("kind", sorted(LONG_TOKENS))
def test_long_tokens_cost_linear_memory(kind):
    n = 4 << 20
    run_case(long_token_case(kind, n), n)


@FUZZ
@given(kind=st.sampled_from(sorted(LONG_TOKENS)), n=st.integers(1, 3 << 20))
def test_generated_long_tokens(kind, n):
    run_case(long_token_case(kind, n), n)


# -- numbers of any length, everywhere -------------------------------------------------------------

#: where a number can stand in a .ksl source
KSL_NUMBERS = [
    "kernel k(long* p) {{ p[0] = {n}; }}",
    "kernel k(long* p) {{ p[0] = {n}u; }}",
    "kernel k(long* p) {{ p[0] = 0{n}; }}",
    "kernel k(long* p) {{ int a[{n}]; p[0] = a[0]; }}",
    "kernel k(nd_item<1> it, int* p) [[reqd_work_group_size({n})]] {{ p[0] = 1; }}",
    "kernel k(nd_item<1> it, int* p) [[reqd_sub_group_size({n})]] {{ p[0] = 1; }}",
    "kernel k(id<{n}> i, int* p) {{ p[0] = 1; }}",
    "const long c = {n};\nkernel k(long* p) {{ p[0] = c; }}",
    "device_global<int[{n}]> g;\nkernel k(int* p) {{ p[0] = g[0]; }}",
]

digits = st.integers(1, 20000).map(lambda k: "9" * k) | st.integers(4000, 9000).map(lambda k: "1" + "0" * k)
#: numbers no reader accepts (more than 64 bits)
huge = st.integers(20, 20000).map(lambda k: "9" * k)


@FUZZ
@given(where=st.sampled_from(KSL_NUMBERS), number=digits)
def test_numbers_in_sources(where, number):
    source = where.format(n=number)
    run_case(f"""
        from minisycl.frontend import compile_source
        compile_source({source!r}, "num.ksl")
    """, len(source))


@FUZZ
@given(number=digits, kind=st.sampled_from(["1", "2"]))
def test_numbers_and_long_values_in_prop_files(number, kind):
    value = number if kind == "1" else "A" * (len(number) * 100 // 4 * 4)
    text = f"[SYCL/misc properties]\nkey={kind}|{value}\n"
    run_case(f"""
        from minisycl.postlink.propertyset import PropertySets
        PropertySets.parse({text!r}, "x.prop")
    """, len(text))


def test_a_long_prop_value_decodes_in_linear_time():
    """A 4 MB byte array (a minute for 1 MB when decoding was quadratic)."""
    result = run_case("""
        from minisycl.postlink.propertyset import PropertySets, encode_base64, byte_array
        value = encode_base64(byte_array(bytes(range(256)) * 16384))
        props = PropertySets.parse("[s]\\nk=2|" + value + "\\n", "x.prop")
        assert len(props.get("s", "k")) == 8 + 4 * 2**20
    """, 6 << 20)
    assert result["seconds"] < 30


@FUZZ
@given(number=huge, key=st.sampled_from(["local-mem-size", "sub-group-sizes", "aspects"]))
def test_numbers_in_device_configs(tmp_path_factory, number, key):
    """A config with a huge number is a clean error for that file, and the
    runtime still lists the other devices (with a warning)."""
    folder = tmp_path_factory.mktemp("cfg")
    value = f"[{number}]" if key != "local-mem-size" else number
    (folder / "broken.yaml").write_text(f"aspects: [fp64]\n{key}: {value}\nruntime-device: true\n")
    (folder / "minisycl_cpu.yaml").write_text("aspects: [cpu, fp64]\n")
    run_case(f"""
        import os, warnings
        os.environ["MINISYCL_DEVICE_CONFIGS"] = {str(folder)!r}
        from minisycl.device_configs import targets
        import importlib
        devices = importlib.import_module("minisycl.runtime.device")
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            names = [d.name for d in devices.get_devices()]
        assert "minisycl_cpu" in names and "broken" not in names, names
        assert any("broken.yaml" in str(w.message) for w in seen), [str(w.message) for w in seen]
        targets.load_file({str(folder / "broken.yaml")!r})
    """, 30000)


@FUZZ
@given(number=digits, field=st.sampled_from(["split", "host", "kernels", "version"]))
def test_numbers_in_bundle_headers(tmp_path_factory, number, field):
    run_case(f"""
        import hashlib, json, struct
        from minisycl.postlink.bundle import Bundle, _HEAD, MAGIC, FORMAT_VERSION
        header = {{"images": [], "host": None, "kernels": {{}}, "device_globals": {{}}, "split": "kernel",
                  "targets": []}}
        text = json.dumps(header)
        if {field!r} == "version":
            text = text[:-1] + ', "version": {number}}}'
        else:
            text = text.replace('"{field}": ', '"{field}": {number}, "x": ', 1)
        body = _HEAD.pack(MAGIC, FORMAT_VERSION, len(text)) + text.encode()
        Bundle.from_bytes(body + hashlib.sha256(body).digest(), "x.bundle")
    """, len(number) + 200)


# -- nesting ---------------------------------------------------------------------------------------

@FUZZ
@given(stars=st.integers(0, 30000), dims=st.integers(0, 30000))
def test_deep_types(stars, dims):
    source = "kernel k(int* p) { int" + "*" * stars + " a" + "[2]" * dims + "; p[0] = 1; }\n"
    run_case(f"""
        from minisycl.frontend import compile_source
        compile_source({source!r}, "deep.ksl")
    """, len(source))


@FUZZ
@given(depth=st.integers(1000, 200000), kind=st.sampled_from(["json", "yaml"]))
def test_deep_json_and_yaml(tmp_path_factory, depth, kind):
    folder = tmp_path_factory.mktemp("deep")
    if kind == "yaml":
        (folder / "deep.yaml").write_text("aspects: " + "[" * depth + "]" * depth + "\n")
        code = f"from minisycl.device_configs.targets import load_file\nload_file({str(folder / 'deep.yaml')!r})"
    else:
        code = f"""
            import hashlib
            from minisycl.postlink.bundle import Bundle, _HEAD, MAGIC, FORMAT_VERSION
            text = b'{{"images": ' + b"[" * {depth} + b"]" * {depth} + b"}}"
            body = _HEAD.pack(MAGIC, FORMAT_VERSION, len(text)) + text
            Bundle.from_bytes(body + hashlib.sha256(body).digest(), "x.bundle")
        """
    run_case(code, depth * 2)


# -- special files wherever a path is read ----------------------------------------------------------

def _special(tmp_path, kind):
    if kind == "fifo":
        path = tmp_path / "fifo"
        os.mkfifo(path)
        return str(path)
    return "/dev/zero" if kind == "device" else str(tmp_path)


#: the command line, as the console script runs it
MINISYCL = [sys.executable, "-c", "import sys; from minisycl.passes.support.cli import entry; "
                                  "sys.argv[0] = 'minisycl'; entry()"]

COMMANDS = {
    "compile": lambda p, t: ["compile", p, "-o", f"{t}/o.ll"],
    "opt": lambda p, t: ["opt", "--passes=propagate-aspects", p, "-o", f"{t}/o.ll"],
    "link": lambda p, t: ["link", p, "-o", f"{t}/o.ll"],
    "post-link": lambda p, t: ["post-link", p, "-o", f"{t}/o.table"],
    "build": lambda p, t: ["build", p, "-o", f"{t}/o.bundle"],
    "build --target": lambda p, t: ["build", "--target", p, "-o", f"{t}/o.bundle", f"{t}/ok.ksl"],
    "inspect": lambda p, t: ["inspect", p],
    "inspect table": lambda p, t: ["inspect", f"{t}/special.table"],
    "inspect table props": lambda p, t: ["inspect", f"{t}/props.table"],
    "run": lambda p, t: ["run", p],
}


@pytest.fixture(scope="module")
def ok_ll(tmp_path_factory):
    """A valid IR file, for the tables that name a special file beside it."""
    from minisycl.frontend import compile_source
    path = tmp_path_factory.mktemp("ok") / "ok.ll"
    path.write_text(compile_source("kernel k(int* p) { p[0] = 1; }\n", "ok.ksl").ir)
    return path


@pytest.mark.parametrize("kind", ["device", "fifo", "directory"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_special_files_are_refused_everywhere(tmp_path, ok_ll, command, kind):
    special = _special(tmp_path, kind)
    out = tmp_path / "out"
    out.mkdir()
    (out / "ok.ksl").write_text("kernel k(int* p) { p[0] = 1; }\n")
    (out / "special.table").write_text(f"[Code|Symbols]\n{special}|{special}\n")
    (out / "props.table").write_text(f"[Code|Properties]\n{ok_ll}|{special}\n")
    proc = subprocess.run([*MINISYCL, *COMMANDS[command](special, str(out))],
                          capture_output=True, text=True, timeout=60, preexec_fn=_limits)
    if proc.returncode == 2:        # click's own check of a path argument: a usage error naming it
        assert "Error: Invalid value" in proc.stderr and special in proc.stderr, proc.stderr
        return
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("minisycl: error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert special in proc.stderr


def test_read_input_bounds():
    from minisycl.passes.support.inputs import read_input
    with pytest.raises(OSError, match="character device"):
        read_input("/dev/zero")
    with pytest.raises(OSError, match="at most 10 bytes"):
        read_input(__file__, limit=10)
    assert read_input(__file__) == open(__file__, "rb").read()


def test_parse_int_any_length():
    from minisycl.passes.support.numbers import parse_int
    assert parse_int("0" * 100000 + "42") == 42
    assert parse_int("9" * 100000) is None
    assert parse_int("ff", 16) == 255 and parse_int("fg", 16) is None
    assert parse_int("18446744073709551615", bits=64) == 2**64 - 1
    assert parse_int("18446744073709551616", bits=64) is None
    assert parse_int("-1") is None and parse_int("") is None and parse_int("١") is None


# -- LLVM IR: long lines, comments and functions -----------------------------------------------------

IR_SHAPES = {
    "comment": lambda n: "; " + "x" * n + "\ndefine void @f() {\n  ret void\n}\n",
    "comments": lambda n: ";\n" * (n // 2) + "define void @f() {\n  ret void\n}\n",
    "string": lambda n: '@s = constant [%d x i8] c"%s"\n' % (n, "a" * n),
    "lines": lambda n: "define void @f() {\n" + "  ; .\n" * (n // 6) + "  ret void\n}\n",
}


@pytest.mark.parametrize("shape", sorted(IR_SHAPES))
def test_long_ir_costs_linear_memory(tmp_path, shape):
    n = 4 << 20
    path = tmp_path / "long.ll"
    path.write_text(IR_SHAPES[shape](n))
    run_case(f"""
        from minisycl.passes.ir import load
        module = load({str(path)!r})
        module.text()
    """, n)
