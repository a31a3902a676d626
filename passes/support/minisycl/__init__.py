"""The ``minisycl`` package itself: its version, and ``python -m minisycl``.

Why this folder: the repository's top level is the user's layout
(``frontend/``, ``passes/``, ``postlink/``, ``runtime/``, ``device_configs/``, each
mapped to ``minisycl.<folder>`` by ``pyproject.toml``'s ``package-dir``), with no
``minisycl/`` folder of its own.  A namespace package cannot have a
``__version__`` or a ``__main__``, so ``pyproject.toml`` maps the ``minisycl``
package to this folder.  It sits in ``passes/support`` because what it holds
belongs to that layer: the version and the command root (``passes/support/cli.py``)
are infrastructure that imports nothing above it.  It is reached as ``minisycl``
only (never as ``minisycl.passes.support.minisycl``), and imports nothing else
eagerly, so ``import minisycl`` stays cheap.

``__version__`` comes from the installed distribution's metadata, whose one
source is ``version`` in ``pyproject.toml`` (``minisycl --version`` prints the
same).
"""
from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("minisycl")
except _metadata.PackageNotFoundError:    # imported from a tree that was never installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
