"""The package's ecosystem habits (issue 29 point 6): ``minisycl.__version__`` is the
installed metadata's version, whose one source is ``pyproject.toml``, and
``python -m minisycl`` is the ``minisycl`` command."""
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import minisycl

ROOT = Path(__file__).resolve().parent.parent


def test_version_is_pyprojects():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert minisycl.__version__ == metadata.version("minisycl") == declared


def test_python_dash_m_is_the_command(tmp_path):
    r = subprocess.run([sys.executable, "-m", "minisycl", "--version"], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.split()[-1] == minisycl.__version__, r.stderr
    src = tmp_path / "a.ksl"
    src.write_text("kernel k(int* o) { o[0] = 1; }\n")
    r = subprocess.run([sys.executable, "-m", "minisycl", "compile", "--check", str(src)], capture_output=True,
                       text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    src.write_text("kernel k(int* o) { o[0] = ; }\n")
    r = subprocess.run([sys.executable, "-m", "minisycl", "compile", "--check", str(src)], capture_output=True,
                       text=True, cwd=tmp_path)
    assert r.returncode == 1 and "a.ksl:1:" in r.stderr


def test_importing_minisycl_loads_nothing_else():
    code = "import sys, minisycl; print(sorted(m for m in sys.modules if m.startswith('minisycl')))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.strip() == "['minisycl']", r.stdout + r.stderr
