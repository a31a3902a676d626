"""The repository's documents are inside it, and say what the code does (issue 29 points 1 and 6).

* no tracked file refers to a document or path outside the repository (the
  design notes a session was given, a machine's absolute paths);
* every relative link of the README and ``docs/`` names a file that exists;
* every kernel-language example of ``docs/language.md`` compiles;
* the README's table of environment variables is ``knobs.VARIABLES``, and no
  module but ``passes/support/knobs.py`` reads the environment.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from minisycl.frontend import compile_source
from minisycl.passes.support import knobs

ROOT = Path(__file__).resolve().parent.parent
ME = Path(__file__).resolve().relative_to(ROOT).as_posix()

#: what a reference outside the repository looks like.  Written in pieces so this
#: file does not match itself; it is left out of the search as well.
OUTSIDE = [
    r"\.\./" + "shared",                               # the sibling folder of design notes
    "/" + "work/",                                     # the machine's checkout root
    "shared/" + "(design|specs|reference)",
    "postlink" + "-formats", "runtime" + "-behaviour", "cuda" + "-backend\\.md",
    "practices" + "\\.md", "virtual_functions" + "_design", "if_device" + "_design",
    "/" + "home/", "/" + "Users/",
    "/" + r"tmp/[\w.-]+\.md",                           # a scratch note of some session
]


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [p for p in out.decode().split("\0") if p]


@pytest.fixture(scope="module")
def files():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    return tracked_files()


def test_no_file_refers_outside_the_repository(files):
    pattern = re.compile("|".join(OUTSIDE))
    bad = []
    for rel in files:
        if rel == ME:
            continue
        try:
            text = (ROOT / rel).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue                                   # binary data, or deleted in the work tree
        for n, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                bad.append(f"{rel}:{n}: {line.strip()[:120]}")
    assert bad == []


def test_the_outside_patterns_find_what_they_should():
    pattern = re.compile("|".join(OUTSIDE))
    for text in ("see ../" "shared/design/language.md", "/" "work/main/x", "postlink" "-formats.md §3",
                 "/" "tmp/h11-contract.md"):
        assert pattern.search(text)
    assert not pattern.search("docs/formats.md, \"Bundles\"")


def _markdown_files(files):
    return [f for f in files if f.endswith(".md")]


def test_markdown_links_name_existing_files(files):
    bad = []
    for rel in _markdown_files(files):
        text = (ROOT / rel).read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if re.match(r"[a-z]+:", target):
                continue                               # a URL
            if not (ROOT / rel).parent.joinpath(target).exists():
                bad.append(f"{rel}: {target}")
    assert bad == []


def test_docs_exist():
    for name in ("language.md", "formats.md", "architecture.md"):
        assert (ROOT / "docs" / name).stat().st_size > 2000
    assert (ROOT / "bench" / "README.md").exists()


def _ksl_blocks():
    text = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    return re.findall(r"```c\n(.*?)```", text, re.S)


@pytest.mark.parametrize("index", range(len(_ksl_blocks())))
def test_language_reference_examples_compile(index):
    source = _ksl_blocks()[index]
    result = compile_source(source, f"language-{index}.ksl")
    assert "define" in result.ir


def test_readme_environment_table_is_the_knobs_list():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Environment variables", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `([A-Z_]+)` \| (.*) \|$", section, re.M))
    assert rows == knobs.VARIABLES


#: reading the environment: ``os.environ.get(...)``, ``os.getenv(...)``, ``os.environ[...]`` as a value
_READS = re.compile(r"environ\.get\(|getenv\(|environ\[[^\]]*\](?!\s*=[^=])")


def test_only_knobs_reads_the_environment(files):
    bad = []
    for rel in files:
        if not rel.endswith(".py") or rel in ("passes/support/knobs.py", ME):
            continue
        for n, line in enumerate((ROOT / rel).read_text(encoding="utf-8").splitlines(), 1):
            if _READS.search(line):
                bad.append(f"{rel}:{n}: {line.strip()}")
    assert bad == []


def test_every_knob_is_read_through_knobs():
    """Each listed variable is read by ``knobs.py`` itself (no entry without a reader)."""
    source = (ROOT / "passes" / "support" / "knobs.py").read_text(encoding="utf-8")
    body = source.split("def _get", 1)[1]
    unread = [name for name in knobs.VARIABLES if f'"{name}"' not in body]
    assert unread == []
