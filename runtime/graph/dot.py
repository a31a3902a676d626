"""``print_graph``: a modifiable graph as Graphviz DOT, in DPC++'s shape."""
from __future__ import annotations

from ..validate import require_bool, require_path
from .nodes import invalid, node_type

__all__ = ["write_dot"]

_DOT_TYPE = {node_type.empty: "None", node_type.kernel: "CGExecKernel", node_type.memcpy: "CGCopyUSM",
             node_type.memset: "CGFillUSM", node_type.memfill: "CGFillUSM", node_type.prefetch: "CGPrefetchUSM",
             node_type.memadvise: "CGAdviseUSM", node_type.host_task: "CGHostTask",
             node_type.ext_oneapi_barrier: "CGBarrier", node_type.subgraph: "CGExecCommandBuffer",
             node_type.async_malloc: "CGAsyncAlloc", node_type.async_free: "CGAsyncFree"}


def write_dot(nodes, path: str, verbose: bool = False) -> None:
    """Write ``nodes`` (a graph's, in insertion order) as DOT (the path must end in ``.dot``)."""
    path = require_path(path, "print_graph path")
    verbose = require_bool(verbose, "print_graph verbose")
    if not path.endswith(".dot"):
        raise invalid("DOT graph is the only format supported at the moment.")
    lines = ["digraph dot {"]
    for n in nodes:
        label = f"ID = {n.id}\\nTYPE = {_DOT_TYPE.get(n.kind, 'Other')} \\n"
        if n.kind == node_type.kernel:
            label += f"NAME = {n.command.kernel.name}\\n"
        if verbose and n.command is not None:         # arguments; addresses and sizes (Command.details)
            label += f"ARGS = {_quoted(n.command.describe())}\\n"
        lines.append(f'"{n.id}" [style=bold, label="{label}"];')
        lines += [f'  "{p.id}" -> "{n.id}"' for p in n.preds]
    lines.append("}")
    try:
        with open(path, "w") as fh:
            fh.write("\n".join(lines) + "\n")
    except OSError as err:
        raise invalid(f"print_graph cannot write '{path}': {err.strerror or err}") from None


def _quoted(text: str) -> str:
    """``text`` inside a DOT string: backslashes, quotes and line ends escaped."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
