"""``sycl_ext_oneapi_graph``: command graphs, built explicitly or recorded from queues.

The package follows the extension's steps, one module each:

* ``nodes.py`` — nodes, node types and edges; the topological order;
* ``modifiable.py`` — ``command_graph``: explicit building (``add``,
  ``make_edge``), queries, ``finalize``;
* ``recording.py`` — record & replay: queues' submissions become nodes, with
  edges from event dependencies, in-order chains and barriers;
* ``allocations.py`` — graph-owned memory (``async_malloc`` / ``async_free``
  nodes, block reuse, ``zero_init``);
* ``dynamic.py`` — what an update takes: ``dynamic_parameter``,
  ``dynamic_command_group``;
* ``executable.py`` — ``executable_command_graph``: the finalized snapshot,
  its checks and its replay;
* ``plan.py`` — the host's plan: runs of small kernels handed to one native
  entry point (``native.PlanRun``), so replaying them costs no Python per node;
* ``update.py`` — executable graph update, per node and whole-graph;
* ``backend.py`` — the one place that asks a device back end what it runs
  itself (a CUDA graph, ``cuda/graph.py``);
* ``dot.py`` — ``print_graph``.

Errors are the spec's, with DPC++'s messages, as ``exception(errc.invalid)``;
what a device cannot do is ``feature_not_supported``.  Where the English text
and its newer Japanese revision differ, the newer one is followed for what it
adds (memory pools, ``get_required_mem_size`` on the executable graph,
host-task update, ``feature_not_supported`` at finalize).  Every refused
operation leaves the graph, its queues and memory as they were.
"""
from .allocations import async_free, async_malloc, async_malloc_from_pool
from .dynamic import dynamic_command_group, dynamic_parameter
from .executable import executable_command_graph
from .modifiable import command_graph
from .nodes import graph_state, node, node_type
from .recording import GRAPH_PROPERTIES

__all__ = ["node_type", "node", "command_graph", "executable_command_graph", "dynamic_parameter",
           "dynamic_command_group", "async_malloc", "async_malloc_from_pool", "async_free", "graph_state",
           "GRAPH_PROPERTIES"]
