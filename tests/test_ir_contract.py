"""The IR contract (``passes/support/ir_contract.py``) is the one list of the
names the stages exchange, and the list is true:

- every name has a writer and a reader (a stage, or upstream DPC++'s compiler
  or runtime), so nothing is written that no one reads, nor read that no one
  writes;
- the modules it names as writers and readers are exactly the modules that
  import the name from it;
- no other module spells a contract name as a string literal, or takes one
  from anywhere but the contract.
"""
import ast
import os
import re

import pytest

from minisycl.passes.support import ir_contract
from minisycl.passes.support.ir_contract import CONTRACT, UPSTREAM_COMPILER, UPSTREAM_RUNTIME

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = ["frontend", "passes", "postlink", "runtime", "device_configs"]
CONTRACT_MODULE = "passes.support.ir_contract"

#: constant name -> spelling
CONSTANTS = {k: v for k, v in vars(ir_contract).items()
             if isinstance(v, str) and v in CONTRACT and k.isupper() and not k.startswith("_")}

#: SYCL's own words that upstream's metadata and keys spell the same: a kernel
#: property in a ``.ksl`` source (``reqd_work_group_size(...)``: the checker reads the
#: source's property name, not the IR's), a device info descriptor
#: (``info::device::max_work_group_size``)
SYCL_WORDS = {("frontend.checker.properties", "reqd_work_group_size"),
              ("frontend.checker.properties", "reqd_sub_group_size"),
              ("passes.work_item_loops", "reqd_sub_group_size"),
              ("runtime.device", "max_work_group_size"),
              ("runtime.work_groups", "max_work_group_size")}


def _modules():
    for folder in FOLDERS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
            for f in sorted(files):
                if f.endswith(".py"):
                    rel = os.path.relpath(os.path.join(dirpath, f), ROOT)[:-3].split(os.sep)
                    if rel[-1] == "__init__":
                        rel = rel[:-1]
                    with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                        yield ".".join(rel), ast.parse(fh.read())


TREES = dict(_modules())


def _docstrings(tree) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _imported_from_contract(tree) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("ir_contract"):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ir_contract":
            names.add(node.attr)
    return names


USERS = {m: _imported_from_contract(t) for m, t in TREES.items() if m != CONTRACT_MODULE}


def test_every_name_is_written_and_read():
    """Nothing written that no one reads, nothing read that no one writes."""
    bad = [f"{n.text}: {'no writer' if not n.writers else 'no reader'}"
           for n in CONTRACT.values() if not n.writers or not n.readers]
    assert bad == []
    assert len(CONSTANTS) == len(CONTRACT), "every registered name is a public constant of ir_contract"


@pytest.mark.parametrize("constant", sorted(CONSTANTS))
def test_writers_and_readers_are_the_modules_that_use_it(constant):
    entry = CONTRACT[CONSTANTS[constant]]
    declared = {m for m in entry.writers + entry.readers if m not in (UPSTREAM_COMPILER, UPSTREAM_RUNTIME)}
    for m in declared:
        assert m in TREES, f"{constant}: no module {m}"
    using = {m for m, names in USERS.items() if constant in names}
    assert sorted(using - declared) == [], f"{constant} is used by modules the contract does not list"
    assert sorted(declared - using) == [], f"{constant}: listed modules that do not import it"


def _pattern():
    texts = sorted(CONTRACT, key=len, reverse=True)
    return re.compile(r"(?<![\w\-/.])(?:" + "|".join(re.escape(t) for t in texts) + r")(?![\w\-])")


def test_no_module_spells_a_contract_name():
    """Outside the contract every name is its constant: no literal, not even inside
    a message, a help text or an IR template (an f-string takes the constant)."""
    pattern, found = _pattern(), []
    for module, tree in TREES.items():
        if module == CONTRACT_MODULE:
            continue
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                for m in pattern.finditer(node.value):
                    if (module, m.group(0)) not in SYCL_WORDS:
                        found.append(f"{module}:{node.lineno}: {m.group(0)!r}")
    assert found == []


def test_contract_names_come_from_the_contract():
    """No module re-exports a contract name: each user imports it from ir_contract."""
    found = []
    for module, tree in TREES.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and not (node.module or "").endswith("ir_contract"):
                found += [f"{module}:{node.lineno}: {a.name} from {node.module}" for a in node.names
                          if a.name in CONSTANTS]
    assert found == []


def test_the_scan_sees_a_literal():
    """The literal scan is not vacuous: the spelling of a name in code is found."""
    tree = ast.parse('x = module.functions_with("indirectly-callable")\ny = f"!{k} !sycl_used_aspects"')
    hits = [m.group(0) for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
            for m in _pattern().finditer(node.value)]
    assert hits == ["indirectly-callable", "sycl_used_aspects"]
