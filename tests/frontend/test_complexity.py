"""No function in ``frontend/`` has cyclomatic complexity above 25 (issue 16).

Counted as radon counts it (McCabe: 1 + one per decision point), with Python's
``ast`` so that CI needs no extra tool: ``if``/``elif``, loops and their
``else``, ``except`` handlers, ``with``-less boolean operators (each extra
operand of ``and``/``or``), conditional expressions, comprehension ``for`` and
``if`` clauses, ``assert``, and ``match`` cases.  Nested functions and classes
count on their own.  ``radon cc -s -n C frontend`` gives the same ranking.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import minisycl.frontend

LIMIT = 25
FRONTEND = Path(minisycl.frontend.__file__).parent


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


def too_complex(limit=LIMIT):
    out = []
    for path in sorted(FRONTEND.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for name, fn in functions(tree):
            c = complexity(fn)
            if c > limit:
                out.append(f"{path.relative_to(FRONTEND)}:{fn.lineno} {name} ({c})")
    return out


def test_no_frontend_function_above_limit():
    assert too_complex() == []


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
