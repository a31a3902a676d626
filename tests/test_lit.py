"""Runs the golden tests under tests/lit: every file's ``RUN:`` lines, as lit does.

``%s`` is the file (by name: commands run in its folder), ``%t`` a temporary path; ``not CMD`` expects failure.  CHECK
lines live next to the input they describe and are checked by the ``filecheck``
package (LLVM FileCheck's Python port).
"""
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).parent / "lit"
# files under an ``Inputs`` folder are helpers that tests use, not tests (lit's convention)
CASES = sorted(p for p in ROOT.rglob("*") if p.suffix in (".ksl", ".ll") and p.is_file()
               and "Inputs" not in p.relative_to(ROOT).parts)
_SUFFIXES = ("", "-NEXT", "-NOT", "-SAME", "-DAG", "-LABEL", "-EMPTY", "-COUNT")
_DIRECTIVE = re.compile(r"(?://|;)\s*([A-Z][A-Z0-9-]*)\s*([:;])")


def malformed_directives(text: str) -> list[str]:
    """Directives with a typo (``CHECK;``, ``CHECK :``, ``CHECK-NXT:``) for the
    prefixes the RUN lines use: the typo in upstream's basic-module-split.ll."""
    prefixes = {"CHECK"}
    for m in re.finditer(r"--check-prefix(?:es)?[= ](\S+)", text):
        prefixes.update(m.group(1).split(","))
    bad = [m.group(0) for m in re.finditer(r"(?://|;)\s*CHECK\s+:", text)]
    for m in _DIRECTIVE.finditer(text):
        word, sep = m.groups()
        known = any(word == p + suf or (suf == "-COUNT" and re.fullmatch(re.escape(p) + r"-COUNT-\d+", word))
                    for p in prefixes for suf in _SUFFIXES)
        related = any(word.startswith(p) for p in prefixes)
        if related and (sep == ";" or not known):
            bad.append(m.group(0))
    return bad


def run_lines(path):
    return [m.group(1).strip() for m in re.finditer(r"(?://|;)\s*RUN:\s*(.*)", path.read_text())]


@pytest.mark.parametrize("path", CASES, ids=[str(p.relative_to(ROOT)) for p in CASES])
def test_lit(path, tmp_path):
    lines = run_lines(path)
    assert lines, f"{path} has no RUN line"
    assert not malformed_directives(path.read_text()), f"malformed directives: {malformed_directives(path.read_text())}"
    bindir = pathlib.Path(sys.executable).parent
    for line in lines:
        cmd = line.replace("%s", path.name).replace("%t", str(tmp_path / "t"))
        expect_fail = cmd.startswith("not ")
        if expect_fail:
            cmd = cmd[4:]
        if expect_fail:
            # `not` inverts the first command of the pipeline only, as in lit
            first, _, rest = cmd.partition("|")
            cmd = f"{{ {first}; [ $? -eq 1 ]; }}" + (f" | {rest}" if rest else "")
        proc = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True,
                              env={"PATH": f"{bindir}:/usr/bin:/bin", "MINISYCL_VERIFY_EACH": "1"},
                              cwd=path.parent)
        assert proc.returncode == 0, f"RUN: {line}\n{proc.stdout}\n{proc.stderr}"


def test_directive_lint():
    assert malformed_directives("; RUN: x | filecheck %s\n; CHECK; foo\n; CHECK-NXT: bar\n; CHECK : baz\n")
    assert not malformed_directives("; RUN: filecheck --check-prefix=DEV %s\n; DEV-NEXT: a\n; CHECK-DAG: b\n; DEVICE code\n")


def test_filecheck_installed():
    assert shutil.which("filecheck", path=str(pathlib.Path(sys.executable).parent)) or shutil.which("filecheck")
