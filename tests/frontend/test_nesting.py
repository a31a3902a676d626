"""Deeply nested sources compile, or fail with one clean diagnostic.

The parser is a loop, but the checker and the emitter recurse once per level
of nesting.  Generated code easily nests hundreds deep (a 500-term sum is a
500-deep tree), which Python's default recursion limit did not survive; now
thousands of levels compile, and beyond what the stack allows the user gets
``file:line:col: error: ... nests ... too deeply`` at the declaration, never
an internal error.
"""
import pytest
from click.testing import CliRunner

from minisycl.frontend import CompileError, compile_source
from minisycl.passes.support.cli import main

SHAPES = {
    "sum": lambda n: "int f(int x) { return " + " + ".join(["x"] * n) + "; }",
    "blocks": lambda n: "int f(int x) { " + "{" * n + "}" * n + " return x; }",
    "calls": lambda n: "int g(int y) { return y; } kernel f(int* p) { p[0] = " + "g(" * n + "1" + ")" * n + "; }",
    "ternaries": lambda n: "int f(int x) { return " + "x ? x : " * n + "x; }",
    "if_device": lambda n: "int f(int x) { " + "if_device { " * n + "x = 1;" + "}" * n + " return x; }",
    "method": lambda n: "class A { int f(int x) { return " + "- " * n + "x; } };",
    "global": lambda n: "const int f = " + "- " * n + "1;",
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_thousands_of_levels_compile(shape):
    compile_source(SHAPES[shape](3000), "deep.ksl")


@pytest.fixture
def low_limit(monkeypatch):
    """The nesting limit made small, so that going past it takes a small input."""
    import minisycl.frontend as frontend
    monkeypatch.setattr(frontend, "RECURSION_LIMIT", 20_000)


@pytest.mark.parametrize("shape", ["sum", "blocks", "if_device", "method", "global"])
def test_beyond_the_stack_is_a_clean_error(shape, low_limit):
    with pytest.raises(CompileError) as err:
        compile_source(SHAPES[shape](60_000), "deep.ksl")
    [d] = err.value.diagnostics
    assert d.severity == "error" and d.loc.file == "deep.ksl"
    assert d.message == "'f' nests expressions or statements too deeply to compile"


def test_cli_exit_status(tmp_path, low_limit):
    src = tmp_path / "deep.ksl"
    src.write_text(SHAPES["calls"](60_000))
    r = CliRunner().invoke(main, ["compile", str(src), "-o", str(tmp_path / "out.ll")])
    assert r.exit_code == 1
    assert "deep.ksl:1:35: error: 'f' nests expressions or statements too deeply to compile" in r.output
    assert not (tmp_path / "out.ll").exists()
