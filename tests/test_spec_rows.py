"""The table of spec rows (``tests/spec_rows.py``, issue 30 point 15): every
row names tests that exist and are collected, or says why it is out of scope."""
import ast
import configparser
import pathlib
import re
import sys

import pytest

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
from spec_rows import OPEN_POINTS, ROWS  # noqa: E402

ROOT = HERE.parent
SPECS = ("if_device", "vf", "device_global", "graph")


def _collected_names(path: pathlib.Path) -> set[str]:
    """The test ids pytest collects from ``path`` by its default rules:
    ``test*`` functions at module level and ``test*`` methods of ``Test*``
    classes without an ``__init__``."""
    tree = ast.parse(path.read_text())
    out = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            out.add(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            methods = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            if "__init__" not in methods:
                out |= {f"{node.name}::{m}" for m in methods if m.startswith("test")}
    return out


def _lit_tests() -> set[str]:
    """The golden tests ``tests/test_lit.py`` runs (files with a RUN line under tests/lit)."""
    return {str(p.relative_to(ROOT)) for p in (HERE / "lit").rglob("*")
            if p.is_file() and p.suffix in (".ll", ".ksl") and "RUN:" in p.read_text(errors="replace")}


def test_rows_are_well_formed_and_unique():
    ids = [r.id for r in ROWS]
    assert len(ids) == len(set(ids)), "duplicate row ids"
    for r in ROWS:
        spec, _, n = r.id.rpartition("-")
        assert spec in SPECS and n.isdigit(), r.id
        assert r.rule and r.where, r.id
        assert not (r.tests and r.out_of_scope), f"{r.id}: tests or a reason for being out of scope, not both"
        assert r.tests or r.out_of_scope or r.issue_point, f"{r.id}: no test, no reason"
        assert not r.issue_point or r.issue_point in OPEN_POINTS or r.tests, f"{r.id}: {r.issue_point} is not fixed"
        assert not (r.issue_point and r.out_of_scope), r.id
        assert len(set(r.tests)) == len(r.tests), f"{r.id} names a test twice"
    for spec in SPECS:             # numbered 1..n in order, so a row cannot vanish unnoticed
        numbers = [int(r.id.rpartition("-")[2]) for r in ROWS if r.id.startswith(spec + "-")]
        assert numbers == list(range(1, len(numbers) + 1)), spec


def test_every_named_test_exists_and_is_collected():
    lit = _lit_tests()
    names: dict[pathlib.Path, set[str]] = {}
    missing = []
    for r in ROWS:
        for t in r.tests:
            path, _, name = t.partition("::")
            if not name:
                if t not in lit:
                    missing.append(f"{r.id}: {t} is not a lit test with a RUN line")
                continue
            file = ROOT / path
            assert re.fullmatch(r"tests/.+/test_\w+\.py|tests/test_\w+\.py", path), f"{r.id}: {path} is not collected"
            if file not in names:
                names[file] = _collected_names(file) if file.is_file() else set()
            if name not in names[file]:
                missing.append(f"{r.id}: {t} does not exist")
    assert not missing, "\n".join(missing)


def test_pytest_collects_the_default_patterns():
    """The check above uses pytest's default discovery; the project must not change it."""
    cfg = (ROOT / "pyproject.toml").read_text()
    assert "python_functions" not in cfg and "python_classes" not in cfg and "python_files" not in cfg
    ini = ROOT / "pytest.ini"
    if ini.exists():
        parser = configparser.ConfigParser()
        parser.read(ini)
        assert not any(k in parser["pytest"] for k in ("python_functions", "python_classes", "python_files"))


@pytest.mark.parametrize("spec", SPECS)
def test_each_spec_has_rows(spec):
    assert any(r.id.startswith(spec + "-") for r in ROWS)
