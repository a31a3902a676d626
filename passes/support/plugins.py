"""Commands and passes are plugins: each module that defines one registers it as
an entry point of the ``minisycl`` distribution (``pyproject.toml``,
``[project.entry-points."minisycl.commands"]`` and ``"minisycl.passes"``), and
the command root (``cli.py``) and the pass registry (``passes/__init__.py``)
learn them from the installed metadata.

So the lowest layer names no module above it: a command module depends on the
root it plugs into, never the other way (``tests/test_layering.py`` reads the
same entry points, checks each names a command or pass its module defines
under that name, and counts the plug-in as an import of the registry).  Only
the ``minisycl`` distribution's own entry points are read (one small file, no
scan of every installed package), and a module is imported only when its
command or pass is used.
"""
from __future__ import annotations

from importlib import metadata

from .diagnostics import UserError

__all__ = ["COMMANDS", "PASSES", "registered", "load"]

COMMANDS = "minisycl.commands"
PASSES = "minisycl.passes"


def registered(group: str) -> dict[str, str]:
    """``name -> "module:attribute"`` of the entry points in ``group``, in the
    order ``pyproject.toml`` lists them; an install whose metadata has none
    (made from an older tree) is refused with what to do."""
    try:
        found = {ep.name: ep.value for ep in metadata.distribution("minisycl").entry_points if ep.group == group}
    except metadata.PackageNotFoundError:
        found = {}
    if not found:
        raise UserError(f"minisycl's installed metadata registers no {group.split('.')[-1]} "
                        f"(entry points '{group}'): reinstall it (pip install -e .)")
    return found


def load(target: str):
    """The object a ``"module:attribute"`` entry point names (its module imported now)."""
    import importlib
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)
