"""How diagnostics are counted and shown (issue 17, point 5)."""
from click.testing import CliRunner

from minisycl.passes.support.cli import main


def compile_text(tmp_path, text: str):
    src = tmp_path / "t.ksl"
    src.write_text(text)
    return CliRunner().invoke(main, ["compile", str(src), "--check"])


def test_the_count_says_how_many_errors_there_were(tmp_path):
    r = compile_text(tmp_path, "".join(f"int f{i}() {{ return undefined{i}; }}\n" for i in range(60)))
    assert r.exit_code == 1
    lines = r.output.splitlines()
    assert sum(": error: " in line for line in lines) == 50
    assert lines[-2:] == ["minisycl: note: too many errors (60); the first 50 are shown", "60 errors generated."]


def test_a_long_line_is_shown_around_the_caret(tmp_path):
    filler = "x = x + 1; " * 60_000            # a 660 KB line
    r = compile_text(tmp_path, "int f() { int x = 0; " + filler + "return missing; }\n")
    assert r.exit_code == 1
    head, shown, caret, count = r.output.splitlines()
    col = len("int f() { int x = 0; " + filler + "return ") + 1
    assert head.endswith(f"t.ksl:1:{col}: error: use of undeclared identifier 'missing'")
    assert len(shown) < 140 and shown.startswith("...") and "return missing; }" in shown
    assert caret.strip() == "^~~~~~~" and shown[caret.index("^"):].startswith("missing")
    assert count == "1 error generated."


def test_a_short_line_is_shown_whole(tmp_path):
    r = compile_text(tmp_path, "int f() { return missing; }\n")
    assert r.output.splitlines()[1:3] == ["int f() { return missing; }", "                 ^~~~~~~"]
