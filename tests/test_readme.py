"""The README's shell commands run as pasted (issue 17 point 7): every ``sh``
block, from a copy of the repository's examples, in a fresh folder.  Installing,
running the whole suite, the GPU suite and benches are left out (they are what
CI itself does, or need a GPU)."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = re.compile(r"^(pip |python -m pytest|python bench/|python examples/)")


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not SKIP.match(line):
                lines.append(line)
    return lines


def test_readme_commands_run_as_pasted(tmp_path):
    commands = readme_commands()
    assert any(c.startswith("minisycl build") for c in commands)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    for command in commands:
        r = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, env=env,
                           timeout=300)
        assert r.returncode == 0, f"{command}\n{r.stdout}\n{r.stderr}"
