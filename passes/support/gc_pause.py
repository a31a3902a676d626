"""Pausing Python's cyclic garbage collector around bulk work.

Every stage builds large acyclic structures (tens of thousands of tokens, AST
nodes, IR entities); the collector's generation-0 collections would rescan them
again and again for cycles that are not there.  Reference counting frees them.
"""
from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def gc_paused(freeze: bool = False):
    """Pause the cyclic collector for the ``with`` block, restoring its state after.

    ``freeze``: for a whole short-lived process (the CLI): what exists at the
    end is moved out of the collector's reach, so that neither the next
    collection nor the interpreter's final one walks it (clang's
    ``-disable-free`` is the same idea)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was:
            gc.enable()
