"""How diagnostics are counted and shown (issue 17, point 5)."""
from click.testing import CliRunner

from minisycl.passes.support.cli import main
from minisycl.passes.support.diagnostics import Diagnostic, SourceLoc, UserError, printable, source_line


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


# -- control characters (issue 27, point 8) ---------------------------------------------
def test_control_characters_are_escaped_and_the_caret_follows():
    src = "int x;\n\x1b]0;title\x07 y = \x9b1m z;\n"
    col = src.split("\n")[1].index("z") + 1
    text = Diagnostic("error", SourceLoc("a.ksl", 2, col, 1), "bad '\x1b[2J'").render({"a.ksl": src})
    head, shown, caret = text.split("\n")
    assert head == "a.ksl:2:%d: error: bad '<U+001B>[2J'" % col
    assert shown == "<U+001B>]0;title<U+0007> y = <U+009B>1m z;"
    assert shown[caret.index("^")] == "z"
    assert all(c.isprintable() for c in text.replace("\n", ""))


def test_undecodable_bytes_and_invisible_characters():
    assert printable("a\udcffb") == "a<FF>b"
    assert printable("\u202e\u2028\ufeff\x00") == "<U+202E><U+2028><U+FEFF><U+0000>"
    assert printable("naïve ü 漢字 \u00a0") == "naïve ü 漢字 \u00a0"       # printable non-ASCII stays
    assert UserError("x\x1by\nnext\rline").render() == "minisycl: error: x<U+001B>y\nnext<U+000D>line"


def test_the_line_shown_is_the_lexers_line():
    """Only ``\\n`` ends a line (as the lexer counts): a form feed, a vertical tab
    or U+2028 inside a line does not move the line shown."""
    src = "a\x0cb\x0bc\u2028d\nsecond\r\nthird"
    assert source_line(src, 1) == "a\x0cb\x0bc\u2028d"
    assert source_line(src, 2) == "second"
    assert source_line(src, 3) == "third"
    assert source_line(src, 4) is None and source_line(src, 0) is None
    assert source_line("one\n", 2) is None
