"""Where graphs reach a device back end: the only module of the graph package
that asks what a device or its queue can do itself.

A device's back end (``device.impl``, ``runtime/backend.py``) may run a whole
executable graph itself (``graph_executor``: an NVIDIA GPU makes one CUDA graph
of it, ``cuda/graph.py``); a device off the host runs a plan's steps on its
queue's stream (``run_graph_steps``); otherwise the host runs the plan
(``plan.py``)."""
from __future__ import annotations

import ctypes

__all__ = ["device_graph", "runs_steps", "zero"]


def device_graph(ex):
    """The device's own executable form of ``ex`` (``launch``, ``update_nodes``,
    ``update_whole``), or ``None`` when the host runs its plan."""
    return ex.device.impl.graph_executor(ex)


def runs_steps(q) -> bool:
    """Whether ``q`` runs a plan's steps itself, every kernel on its stream (a GPU queue)."""
    return not q.device.impl.runs_on_host


def zero(q, block) -> None:
    """Zero graph-owned ``block`` of ``q``'s device (``zero_init``)."""
    if runs_steps(q):
        q.memset(block, 0, block.nbytes).wait()     # GPU memory (cuda/queue.py)
    else:
        ctypes.memset(block.ptr, 0, block.nbytes)
