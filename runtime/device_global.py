"""``device_global`` in the runtime (``sycl_ext_oneapi_device_global``).

* Without ``device_image_scope`` a variable is ``{ ptr, T }`` in every image that
  uses it.  The runtime keeps one allocation per (device, context, unique id), shared by
  every kernel, image and bundle on that device.  It is initialised from the
  bundle's copy of ``T``'s initial value the first time a kernel or a copy
  touches it, and never again.  Every program built for the device gets its
  pointer.  Pointers in the initial value (a polymorphic ``T``'s vtable
  pointer: the bundle's ``relocations``) are written by the first program
  bound to the storage that defines their symbols (``apply_relocations``).
* With ``device_image_scope`` the variable lives in its one image; copies read
  and write the variable of that image's program on the device.
* Host copies check bounds and ``host_access`` at run time (``errc::invalid``):
  Python has no compile-time overload set to make them unavailable.
* ``init_mode`` and ``implement_in_csr`` are FPGA properties.  They are carried
  through the IR and the bundle (``minisycl inspect`` shows them) and have no
  effect on these devices.
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np

from .errors import errc, exception
from .memory import usm_allocation

__all__ = ["device_global", "storage_address", "bind_program", "apply_relocations"]

_ACCESS = {0: "read", 1: "write", 2: "read_write", 3: "none"}
_PROPERTIES = ("device_image_scope", "host_access", "init_mode", "implement_in_csr")
_STORAGE: dict[tuple[int, str, str], usm_allocation] = {}
_PENDING: dict[tuple[int, str, str], list] = {}        # relocations not yet written, by storage
_LOCK = threading.Lock()


def apply_relocations(relocations: list, resolve, write) -> list:
    """Write each ``[offset, symbol, addend]`` whose symbol ``resolve`` finds
    (an address, 0 when the program lacks it) with ``write(offset, address)``;
    the ones left for a later program."""
    left = []
    for offset, symbol, addend in relocations:
        address = resolve(symbol)
        if address:
            write(offset, address + addend)
        else:
            left.append([offset, symbol, addend])
    return left


class device_global:  # noqa: N801 - SYCL's name
    """A program's handle on one device global (``program.device_global("name")``)."""

    def __init__(self, prog, uid: str, info: dict):
        self.program, self.uid, self.info = prog, uid, info
        self.name = info["name"]
        self.size = info["size"]
        self.element_size = info.get("element_size") or self.size
        self.image_scope = info["device_image_scope"]
        self.host_access = _ACCESS.get(info.get("host_access", 2), "read_write")

    def has_property(self, name: str) -> bool:
        """Whether the declaration gave property ``name`` (``device_image_scope``,
        ``host_access``, ``init_mode``, ``implement_in_csr``), as SYCL's ``has_property``."""
        if name not in _PROPERTIES:
            raise exception(errc.invalid, f"'{name}' is not a device_global property; known: {', '.join(_PROPERTIES)}")
        given = self.info.get("properties")
        if given is None:           # a bundle written before the table listed them
            return name == "device_image_scope" and self.image_scope
        return name in given

    def get_property(self, name: str):
        """The value of property ``name``: ``True`` for ``device_image_scope``, the
        access as a string for ``host_access`` ("read", "write", "read_write",
        "none"), "reprogram"/"reset" for ``init_mode``, a bool for
        ``implement_in_csr``.  A property not given is ``errc::invalid``."""
        if not self.has_property(name):
            raise exception(errc.invalid, f"device_global '{self.name}' does not have property '{name}'")
        if name == "device_image_scope":
            return True
        if name == "host_access":
            return self.host_access
        if name == "init_mode":
            return {"0": "reprogram", "1": "reset"}.get(str(self.info.get("init_mode")), self.info.get("init_mode"))
        return str(self.info.get("implement_in_csr")) == "true"

    @property
    def elements(self) -> int:
        return self.size // self.element_size

    def initial_bytes(self) -> bytes:
        return bytes.fromhex(self.info.get("init") or "") or bytes(self.size)

    def __repr__(self):
        return f"<device_global {self.name} ({self.size} bytes{', image scope' if self.image_scope else ''})>"

    def check_access(self, direction: str) -> None:
        """``direction``: "to" (host writes it) or "from" (host reads it)."""
        forbidden = ("read", "none") if direction == "to" else ("write", "none")
        if self.host_access in forbidden:
            verb = "written" if direction == "to" else "read"
            raise exception(errc.invalid, f"device_global '{self.name}' has host_access({self.host_access}) and "
                                          f"cannot be {verb} by the host")

    def check_bounds(self, direction: str, offset: int, nbytes: int) -> None:
        if offset < 0 or nbytes < 0 or offset + nbytes > self.size:
            raise exception(errc.invalid, f"Copy {direction} device_global is out of bounds.")


def _shared_storage(dg: device_global, device, ctx) -> usm_allocation:
    with _LOCK:
        key = (ctx.id, device.name, dg.uid)
        storage = _STORAGE.get(key)
        if storage is None:
            storage = usm_allocation(dg.size, np.uint8, "device")
            init = bytes.fromhex(dg.info.get("init") or "")
            if init:
                ctypes.memmove(storage.ptr, init, min(len(init), dg.size))
            else:                       # a zero-initialised T has no bytes in the bundle
                ctypes.memset(storage.ptr, 0, dg.size)
            _STORAGE[key] = storage
            if dg.info.get("relocations"):
                _PENDING[key] = list(dg.info["relocations"])
        return storage


def storage_address(dg: device_global, device, ctx) -> int:
    """Where ``dg``'s value lives on ``device`` in ``ctx`` (allocating and
    initialising it on first use)."""
    if not dg.image_scope:
        own = getattr(device, "global_storage", None)     # a device with its own memory (an NVIDIA GPU)
        return own(dg.uid, dg.info, ctx) if own is not None else _shared_storage(dg, device, ctx).ptr
    linked = dg.program.image_scope_program(dg, device, ctx)
    addr = linked.global_address(dg.name)
    if not addr:
        raise exception(errc.runtime, f"device_global '{dg.name}' is missing from its program")
    return addr


def _writer(base: int):
    """``write(offset, value)``: a pointer-sized value into host-addressable memory at ``base``."""
    def write(offset: int, value: int) -> None:
        ctypes.c_uint64.from_address(base + offset).value = value
    return write


def bind_program(prog, linked, device, ctx) -> None:
    """Write the shared allocations' addresses into a freshly built program."""
    if hasattr(linked, "bind_globals"):         # a GPU program: device memory (``cuda/codegen.py``)
        linked.bind_globals(prog, ctx)
        return
    for uid, info in prog.device_globals.items():
        if info["device_image_scope"]:
            continue
        addr = linked.global_address(info["name"])
        if addr:
            storage = _shared_storage(device_global(prog, uid, info), device, ctx)
            ctypes.c_uint64.from_address(addr).value = storage.ptr
            key = (ctx.id, device.name, uid)
            with _LOCK:
                if _PENDING.get(key):
                    _PENDING[key] = apply_relocations(_PENDING[key], linked.global_address, _writer(storage.ptr))
