"""No function in ``frontend/``, ``passes/``, ``postlink/`` or ``runtime/`` has
cyclomatic complexity above 25 (issue 16 for the front end, issue 29 point 3
for the tree), unless it is a flat dispatch table: one ``if`` or ``case`` per
kind, each a line or two, which splitting would only scatter.  Such a function
says so in its docstring ("flat dispatch table"), and the test takes its word.

Counted as radon counts it (McCabe: 1 + one per decision point), with Python's
``ast`` so that CI needs no extra tool: ``if``/``elif``, loops and their
``else``, ``except`` handlers, ``with``-less boolean operators (each extra
operand of ``and``/``or``), conditional expressions, comprehension ``for`` and
``if`` clauses, ``assert``, and ``match`` cases.  Nested functions and classes
count on their own.  ``radon cc -s -n C frontend passes postlink runtime``
gives the same ranking.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import minisycl.frontend
import minisycl.passes
import minisycl.postlink
import minisycl.runtime

LIMIT = 25
#: the packages the rule covers (the user's top-level folders that hold code)
ROOTS = [Path(pkg.__file__).parent for pkg in (minisycl.frontend, minisycl.passes, minisycl.postlink,
                                                minisycl.runtime)]
#: what a function's docstring says to be let off the limit
DISPATCH_TABLE = "flat dispatch table"


def complexity(fn: ast.AST) -> int:
    """McCabe complexity of one function body (nested definitions excluded)."""
    score = 1
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.If, ast.IfExp, ast.For, ast.AsyncFor, ast.While, ast.Assert,
                             ast.ExceptHandler, ast.match_case)):
            score += 1
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)) and node.orelse:
            score += 1
        elif isinstance(node, ast.BoolOp):
            score += len(node.values) - 1
        elif isinstance(node, ast.comprehension):
            score += 1 + len(node.ifs)
        stack.extend(ast.iter_child_nodes(node))
    return score


def functions(tree: ast.AST, prefix=""):
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield f"{prefix}{node.name}", node
            yield from functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from functions(node, f"{prefix}{node.name}.")
        else:
            yield from functions(node, prefix)


def too_complex(limit=LIMIT, roots=ROOTS):
    """``folder/file.py:line name (complexity)`` of each function above ``limit``
    that is not a flat dispatch table."""
    out = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for name, fn in functions(tree):
                c = complexity(fn)
                if c > limit and DISPATCH_TABLE not in (ast.get_docstring(fn) or ""):
                    out.append(f"{root.name}/{path.relative_to(root)}:{fn.lineno} {name} ({c})")
    return out


def test_no_function_above_limit():
    assert too_complex() == []


def test_every_folder_is_read():
    """Each root is read (a wrong path would make the check vacuous for it)."""
    for root in ROOTS:
        assert too_complex(limit=10, roots=[root]), root


def test_dispatch_table_is_let_off(tmp_path):
    """A function over the limit is reported, unless its docstring calls it a flat dispatch table."""
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(30))
    (tmp_path / "m.py").write_text(f"def f(x):\n{branches}\n\ndef g(x):\n    \"\"\"A {DISPATCH_TABLE}.\"\"\"\n{branches}")
    assert too_complex(roots=[tmp_path]) == [f"{tmp_path.name}/m.py:1 f (31)"]


@pytest.mark.parametrize("source, expected", [
    ("def f(x):\n    return x\n", 1),
    ("def f(x):\n    if x and x > 1 or x < -1:\n        return 1\n    elif x:\n        return 2\n", 5),
    ("def f(xs):\n    for x in xs:\n        pass\n    else:\n        pass\n"
     "    try:\n        pass\n    except ValueError:\n        pass\n    return [y for y in xs if y] if xs else 0\n", 7),
    ("def f(x):\n    def g():\n        if x:\n            pass\n    return g\n", 1),
])
def test_counting(source, expected):
    (_, fn), *_ = functions(ast.parse(source))
    assert complexity(fn) == expected


def test_the_check_can_fail():
    """A limit below the largest function reports it (the check is not vacuous)."""
    assert too_complex(limit=15)
