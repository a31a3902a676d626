"""NVIDIA GPUs as runtime devices (issue 20), through the CUDA driver API.

* ``backend`` — the runtime's ``Backend`` interface for one GPU (``device.impl``):
  what the runtime asks of it (memory, queues, programs, device-global
  storage, graphs, peer access); this package imports nothing of the runtime
  but ``runtime/backend.py``.
* ``commands`` — copies and fills recorded for a stream (peer copies between GPUs).
* ``driver``  — ctypes bindings to ``libcuda.so.1``: every call checked, a
  failure raised as ``sycl.exception`` with the driver's error name.
* ``device``  — discovery (``cuda_devices()``: empty, silently, without a
  driver or a GPU), the ``cuda_device`` class and its primary context.
* ``codegen`` — images linked at IR level, lowered by the ``lower-to-nvptx``
  pass, PTX from llvmlite's NVPTX target, modules from the driver's JIT; both
  cached (memory and disk).
* ``memory``  — USM on the GPU: device, pinned host and managed allocations.
* ``queue``   — streams, events (CUDA events recorded only when needed, GPU
  timestamps when profiling), host tasks, copies, the launch fast path.
* ``graph``   — executable command graphs as CUDA graphs built node by node
  (kernel, memcpy, memset, host, empty, allocation and free nodes), replayed
  with one ``cuGraphLaunch``, updated through the driver's update calls.

Nothing here is imported unless a CUDA device exists (``device.py`` of the
runtime asks ``cuda_devices()``, which only opens the library).
"""
