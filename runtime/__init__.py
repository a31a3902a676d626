"""The runtime: load bundles, pick devices, link images and run kernels on the LLVM JIT.

The API mirrors SYCL's names in snake_case (``docs/architecture.md``)::

    from minisycl import runtime as sycl
    prog = sycl.load_bundle("app.bundle")
    q = sycl.queue()                              # MINISYCL_DEVICE (a name, "gpu", "cuda:0"...) or the host CPU
    x = sycl.malloc_shared(1024, numpy.float32, q)
    q.parallel_for(prog.kernel("clamp_all"), sycl.range(1024), x).wait()
    q.device.get_info(sycl.info.device.max_work_group_size)
"""
from . import host_backend as _host  # noqa: F401 - registers the CPU JIT as the config devices' back end
from .cuda import device as _cuda     # noqa: F401 - registers the NVIDIA GPUs as devices
from .device import HOST_CPU, aspect, context, default_context, default_device, device, get_devices, info, peer_access
from .device_global import device_global
from .errors import errc, exception
from .features import SYCL_EXT_ONEAPI_DEVICE_GLOBAL, SYCL_EXT_ONEAPI_GRAPH
from .graph import (async_free, async_malloc, async_malloc_from_pool, command_graph, dynamic_command_group,
                    dynamic_parameter, executable_command_graph, graph_state, node, node_type)
from .memory_pool import memory_pool
from .kernel_bundle import bundle_state, build, compile, get_kernel_bundle, get_kernel_ids, kernel_bundle, kernel_id, link
from .memory import free, malloc_device, malloc_host, malloc_shared, usm_allocation
from .program import build_program, kernel, load_bundle, program
from .events import event
from .handler import handler
from . import distributed
from .interop import foreign_allocation, from_dlpack, interop_handle
from .queue import queue, queue_state
from .ranges import nd_range, range
from .work_groups import local_memory
from .reductions import (bit_and, bit_or, bit_xor, logical_and, logical_or, maximum, minimum, multiplies, plus,
                         reduction)

__all__ = ["aspect", "info", "peer_access", "device", "context", "default_context", "get_devices", "default_device", "HOST_CPU", "errc", "exception", "free",
           "malloc_device", "malloc_host", "malloc_shared", "usm_allocation", "kernel", "load_bundle", "program",
           "build_program", "device_global", "command_graph", "executable_command_graph", "node", "node_type",
           "dynamic_parameter", "dynamic_command_group", "async_malloc", "async_malloc_from_pool", "async_free",
           "memory_pool", "graph_state", "queue_state", "SYCL_EXT_ONEAPI_GRAPH", "SYCL_EXT_ONEAPI_DEVICE_GLOBAL",
           "event", "handler", "nd_range", "queue", "range", "local_memory", "reduction", "plus", "multiplies",
           "minimum", "maximum", "bit_and", "bit_or", "bit_xor", "logical_and", "logical_or",
           "distributed", "from_dlpack", "foreign_allocation", "interop_handle",
           "bundle_state", "kernel_bundle", "kernel_id", "get_kernel_bundle", "get_kernel_ids", "compile", "link", "build"]
