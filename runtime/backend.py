"""The interface a device back end implements (issue 29 point 4).

A back end is the code that runs a device.  Two exist: the CPU JIT
(``host_backend.py``: kernels JIT-compiled by LLVM and run on this CPU's
worker threads, USM in host memory) and NVIDIA GPUs (``cuda/``: the CUDA
driver).  The runtime's SYCL objects reach a device's back end only through
``device.impl``, an instance of ``Backend``, and through the queue class it
names; they never probe an object for a capability (no ``getattr`` /
``hasattr``): what a back end does not do has a defined answer here
(``None``, ``False``), written in its docstring.

The five parts, and what the runtime calls:

* memory   — ``malloc`` (the three USM kinds), ``copy_now`` (a copy another
  back end's queue needs with this device's memory on one side),
  ``can_access_peer`` / ``enable_peer_access`` / ``disable_peer_access``;
  an allocation's own ``_release`` (``usm_allocation``) gives memory back.
* queues   — ``queue_class``: the ``queue`` subclass whose ``submit`` runs
  commands on the device.  What a queue class overrides is listed in
  ``QUEUE_HOOKS`` (``prepare_reductions``, ``run_graph_steps``,
  ``native_stream``, ``_launch``).
* events   — the events a queue class returns (``events.event`` or a
  subclass: ``wait``, ``status``, ``get_profiling_info``).
* programs — ``link_images`` (device images -> a ``LinkedProgram``-like
  object: ``global_address``, ``launcher`` or ``function``), ``whole_program``,
  ``bind_globals`` and ``global_storage`` (``device_global`` storage, one per
  device and context).
* graphs   — ``graph_executor`` (an executable graph as one native graph, or
  ``None``: command by command), ``runs_on_host``.

``runtime/cuda`` imports nothing of the runtime but this module: the
building blocks a back end builds on (the queue, handler and event base
classes, commands, checked addresses, USM bookkeeping, the program's JIT
helpers) are re-exported at the end, so the surface between the runtime and a
back end is this one file (``tests/test_layering.py`` checks it).
"""
from __future__ import annotations

import abc

from .errors import errc, exception

__all__ = ["Backend", "QUEUE_HOOKS"]

#: the methods of ``queue`` a back end's queue class may override, and why
QUEUE_HOOKS = {
    "_launch": "run one kernel launch (packed slots, work-item count, geometry)",
    "prepare_reductions": "write each reduction's identity before the kernel (initialize_to_identity)",
    "run_graph_steps": "run an executable graph's commands one by one (a graph graph_executor did not take)",
    "native_stream": "the native stream or queue handle (interop: CUDA's CUstream as an integer)",
    "hold_until_done": "keep another library's memory alive while the queue's commands may use it (interop)",
}


class Backend(abc.ABC):
    """What the runtime asks of the code that runs one device (see the module
    docstring).  One instance per device: ``device.impl``."""

    #: the backend's name as ``ONEAPI_DEVICE_SELECTOR`` spells it (``native_cpu``, ``cuda``)
    name: str = ""
    #: kernels run on this CPU's worker threads (the LLVM JIT): an executable graph may run
    #: small kernels inside its native plan runner, and memory is host memory
    runs_on_host: bool = False
    #: code addresses belong to one native module per device and context: a program's
    #: kernels are all linked into one module (``program._whole_program``), so a vtable
    #: one kernel's object points at works in every other kernel
    whole_program: bool = False

    # -- queues and events ------------------------------------------------------------

    @property
    @abc.abstractmethod
    def queue_class(self) -> type:
        """The ``queue`` class of this device's queues (``queue`` itself for the CPU JIT)."""

    # -- memory ---------------------------------------------------------------------

    @abc.abstractmethod
    def malloc(self, count: int, dtype, kind: str, queue):
        """A ``usm_allocation`` of ``count`` elements of ``dtype``, ``kind`` one of
        ``device``, ``host``, ``shared``, for ``queue`` (of this device)."""

    @abc.abstractmethod
    def copy_now(self, dst: int, src: int, nbytes: int) -> None:
        """Copy ``nbytes`` now (returning when done) where ``dst`` or ``src`` is memory
        of this device that the host cannot address, the other side any memory: what
        a queue of another back end (a CPU device's) does with it — staged through
        the host by the driver where needed."""

    def can_access_peer(self, peer, atomics: bool = False) -> bool:
        """Whether this device's kernels can access ``peer``'s device memory once
        ``enable_peer_access`` is called (``atomics``: atomically, too).  ``False``
        unless a back end says otherwise; a device always reaches its own."""
        return peer.impl is self

    def enable_peer_access(self, peer) -> None:
        """Let this device's kernels access ``peer``'s device memory (idempotent)."""
        if not self.can_access_peer(peer):
            raise exception(errc.feature_not_supported, f"peer access from {self.device_name()} to "
                                                        f"{peer.name} is not supported")

    def disable_peer_access(self, peer) -> None:
        """Undo ``enable_peer_access`` (``errc::invalid`` when it was not enabled)."""
        if peer.impl is not self:
            raise exception(errc.invalid, f"peer access from {self.device_name()} to {peer.name} was not enabled")

    def peer_enabled(self, peer) -> bool:
        """Whether ``enable_peer_access(peer)`` is in effect (always for the device itself)."""
        return peer.impl is self

    def device_name(self) -> str:
        return self.name

    # -- programs -------------------------------------------------------------------

    def pointer_place(self, address: int):
        """Interop: DLPack's ``(device type, id)`` of the memory at ``address`` as this
        back end's driver knows it, or ``None`` (a device on the host knows none)."""
        return None

    def wait_for_stream(self, theirs: int, mine: int) -> None:
        """Interop: make this back end's stream ``mine`` wait for another library's
        stream ``theirs`` (a device on the host has no streams)."""
        raise exception(errc.feature_not_supported, f"the {self.name} back end has no streams")

    @abc.abstractmethod
    def link_images(self, images: list[bytes], kernels: list[str], names: list[str], signatures: dict,
                    spec: bytes | None, sub_group_size: int):
        """Link the device images (bitcode) into one program for this device: an
        object with ``global_address(name)`` (0 when absent) and what this back
        end's queue class launches with.  ``signatures``: kernel -> the signature its
        arguments are packed by; ``spec``: the specialization constant buffer to fold
        (``None``: none)."""

    @abc.abstractmethod
    def bind_globals(self, prog, linked, ctx) -> None:
        """Point every shared (not ``device_image_scope``) device global of ``prog``
        in the freshly linked ``linked`` at its storage on this device in ``ctx``."""

    @abc.abstractmethod
    def global_storage(self, dg, ctx) -> int:
        """The address of shared device global ``dg``'s value on this device in
        ``ctx`` (allocated and initialised on first use): one per device."""

    # -- graphs ---------------------------------------------------------------------

    def graph_executor(self, ex):
        """Executable graph ``ex`` as one native graph (``launch(q)``, ``update_nodes``,
        ``update_whole``), or ``None``: its queue runs it step by step.  ``None``
        unless a back end says otherwise."""
        return None

    # -- description ----------------------------------------------------------------

    def describe(self) -> str:
        """What ``minisycl devices`` prints after a device's type ("" for nothing)."""
        return ""


# -- what a back end builds on: the one surface between the runtime and runtime/cuda ------
# (imported after ``Backend`` is defined; nothing these modules import needs this one)
from .addresses import checked_address, checked_count, checked_memory  # noqa: E402
from .arguments import pack_slots  # noqa: E402
from .assertions import failure  # noqa: E402
from .commands import PLAIN, Command, DynamicValue, KernelCommand, foreign, launch_geometry  # noqa: E402
from .device import RUNTIME_ASPECTS, device, register_hardware  # noqa: E402
from .device_global import apply_relocations, check_one_definition, device_global, storage_address  # noqa: E402
from .disk_cache import read_entry, write_entry  # noqa: E402
from .events import event  # noqa: E402
from .handler import (UNPROFILED_GRAPH, check_graph_submission, copy_details, device_global_copy,  # noqa: E402
                      fill_details, handler)
from . import dlpack  # noqa: E402
from .image_link import check_signatures, expose_device_globals, link_images, read_bundle_bitcode  # noqa: E402
from .memory import allocation_at, allocation_starting_at, checked_shape, register, usm_allocation  # noqa: E402
from .program import kernel  # noqa: E402
from .queue import check_command_group, queue  # noqa: E402
from .reductions import has_reductions, reduction  # noqa: E402
from .spec_constants import SPEC_GLOBAL, fold_handler_parameters  # noqa: E402
from .work_groups import check_local_memory, check_local_size  # noqa: E402

__all__ += ["checked_address", "checked_count", "checked_memory", "pack_slots", "failure", "Command", "DynamicValue", "KernelCommand",
            "launch_geometry", "RUNTIME_ASPECTS", "device", "register_hardware", "apply_relocations",
            "check_one_definition", "device_global", "storage_address", "read_entry", "write_entry", "errc",
            "exception", "event", "handler", "check_signatures", "read_bundle_bitcode", "allocation_at",
            "allocation_starting_at", "checked_shape", "register", "usm_allocation", "kernel", "queue",
            "has_reductions", "reduction", "expose_device_globals", "link_images", "fold_handler_parameters", "SPEC_GLOBAL", "check_local_size", "check_local_memory",
            "check_command_group", "dlpack", "foreign", "PLAIN", "copy_details", "device_global_copy", "fill_details",
            "UNPROFILED_GRAPH", "check_graph_submission"]
