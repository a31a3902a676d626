"""Every code block of the README runs as pasted (issue 17 point 7, issue 29 point 1).

The blocks run in the README's order, in one fresh folder holding a copy of the
repository's examples (so a later block may use what an earlier one built, as a
reader following the README would): ``sh`` blocks line by line with the
installed ``minisycl`` command on ``PATH``, ``python`` blocks as a whole script.
Left out, each with its reason in the skip: installing and running the whole
suite (what ``.ci/run`` itself does), the benchmarks (minutes each; their
figures are in bench/README.md), and the GPU block without an NVIDIA GPU.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: (pattern of a line, why it is not run here)
NOT_RUN = [
    (re.compile(r"^pip "), "installing is what .ci/run does"),
    (re.compile(r"^python -m pytest"), "the test suite is what .ci/run runs (and this is part of it)"),
    (re.compile(r"^python bench/"), "benchmarks take minutes; bench/README.md has their figures"),
]
GPU_LINE = re.compile(r"(tests/gpu|bench_gpu|-m gpu)")


def readme_blocks() -> list[tuple[str, str]]:
    """(language, text) of every fenced ``sh`` or ``python`` block, in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^```(sh|python)\n(.*?)^```", text, re.S | re.M)


def sh_lines(block: str) -> list[str]:
    lines = []
    for line in block.replace("\\\n", " ").splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line:
            lines.append(line)
    return lines


def _have_gpu() -> bool:
    from minisycl.runtime.cuda.device import cuda_devices
    return bool(cuda_devices())


BLOCKS = readme_blocks()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("readme")
    shutil.copytree(ROOT / "examples", path / "examples")
    return path


def _run(argv, cwd):
    env = dict(os.environ)                     # the children's environment: ours, with this Python first
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env, timeout=300)


def test_the_readme_has_its_blocks():
    kinds = [kind for kind, _ in BLOCKS]
    assert kinds.count("python") >= 2 and kinds.count("sh") >= 4
    assert any(line.startswith("minisycl build") for kind, b in BLOCKS if kind == "sh" for line in sh_lines(b))


@pytest.mark.parametrize("index", range(len(BLOCKS)),
                         ids=[f"{i}-{k}-{(sh_lines(b) or ['empty'])[0][:30]}" for i, (k, b) in enumerate(BLOCKS)])
def test_readme_block_runs_as_pasted(index, folder):
    kind, block = BLOCKS[index]
    if kind == "python":
        r = _run([sys.executable, "-c", block], folder)
        assert r.returncode == 0, f"{block}\n{r.stdout}\n{r.stderr}"
        return
    lines = sh_lines(block)
    if any(GPU_LINE.search(line) for line in lines) and not _have_gpu():
        pytest.skip("the GPU block needs an NVIDIA GPU")
    ran = 0
    for line in lines:
        why = next((why for pattern, why in NOT_RUN if pattern.search(line)), None)
        if why:
            continue
        r = _run(["bash", "-c", line], folder)
        assert r.returncode == 0, f"{line}\n{r.stdout}\n{r.stderr}"
        ran += 1
    if not ran:
        pytest.skip("; ".join(sorted({why for line in lines for p, why in NOT_RUN if p.search(line)})))


def test_gitignore_covers_what_the_readme_writes(folder):
    """Run after the blocks above (same folder): every file they left beside the
    examples would be ignored by git in the repository root, so following the
    README leaves ``git status`` clean."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    produced = sorted(p.name for p in folder.iterdir() if p.is_file())
    if not produced:
        pytest.skip("the README blocks did not run in this session (run the whole file)")
    r = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=ROOT, input="\n".join(produced),
                       capture_output=True, text=True)
    ignored = set(r.stdout.split())
    assert [name for name in produced if name not in ignored] == []
