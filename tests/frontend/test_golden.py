"""Golden outputs of the front end for the sources in ``corpus/``: the IR text the
emitter writes (before LLVM parses it) for a source that compiles, the rendered
diagnostics for one that does not.  The corpus uses every built-in, item query,
operator and cast kind and one of each checker diagnostic, so a restructuring
of the checker or emitter that changes a byte of output fails here.

Regenerate (only for an intended change): ``MINISYCL_REGEN_GOLDEN=1 pytest tests/frontend/test_golden.py``.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from minisycl.frontend import CompileError, check, emit, parse
from minisycl.passes.support.diagnostics import DiagnosticSink
from minisycl.passes.support import knobs

CORPUS = Path(__file__).parent / "corpus"
SOURCES = sorted(CORPUS.glob("*.ksl"))


def front_end_output(path: Path) -> str:
    """What the front end makes of ``path``: IR text, or ``error:`` lines."""
    name = f"corpus/{path.name}"
    text = path.read_text()
    diags = DiagnosticSink({name: text})
    try:
        unit = parse(text, name, diags)
        prog = check(unit, diags)
        diags.raise_if_errors()
    except CompileError as err:
        return err.render() + "\n"
    return str(emit(prog, name))


@pytest.mark.parametrize("path", SOURCES, ids=[p.stem for p in SOURCES])
def test_golden(path):
    expected = path.with_suffix(".golden")
    out = front_end_output(path)
    if knobs.regen_golden():
        expected.write_text(out)
    assert out == expected.read_text()


def test_corpus_covers_both_outcomes():
    outputs = [front_end_output(p) for p in SOURCES]
    assert any(o.startswith("; ModuleID") for o in outputs)
    assert sum(" error: " in o for o in outputs) >= 2
