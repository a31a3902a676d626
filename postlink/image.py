"""One device image of the post-link step (upstream's ``ModuleDesc``) and the
error the step raises for an input it refuses."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..passes.ir import Module
from ..passes.support.diagnostics import UserError
from .propertyset import PropertySets

__all__ = ["Image", "SplitError"]


class SplitError(UserError):
    """An input the post-link step refuses (upstream's errors)."""


@dataclass
class Image:
    """A device image: its module, its entry points (in module order), the key
    of the entry-point group it was made from, its property sets, and whether
    it is a dummy (``dummies.py``)."""
    module: Module
    entry_points: list[str]
    key: str
    properties: PropertySets = field(default_factory=PropertySets)
    dummy: bool = False
