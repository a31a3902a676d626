"""``device_global`` in the runtime (``sycl_ext_oneapi_device_global``).

* Without ``device_image_scope`` a variable is ``{ ptr, T }`` in every image that
  uses it.  The runtime keeps one allocation per (device, context, unique id), shared by
  every kernel, image and bundle on that device.  It is initialised from the
  bundle's copy of ``T``'s initial value the first time a kernel or a copy
  touches it, and never again.  Every program built for the device gets its
  pointer.  Pointers in the initial value (a polymorphic ``T``'s vtable
  pointer: the bundle's ``relocations``) are written by the first program
  bound to the storage that defines their symbols (``apply_relocations``); that
  program's code is then kept as long as the storage (the process), whatever
  becomes of the ``program`` object.
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
import re
import threading

import numpy as np

from .errors import errc, exception
from .memory import usm_allocation

__all__ = ["device_global", "storage_address", "bind_program", "apply_relocations", "source_name"]

_ACCESS = {0: "read", 1: "write", 2: "read_write", 3: "none"}
_PROPERTIES = ("device_image_scope", "host_access", "init_mode", "implement_in_csr")
_STORAGE: dict[tuple[int, str, str], usm_allocation] = {}
_PENDING: dict[tuple[int, str, str], list] = {}        # relocations not yet written, by storage
#: storage -> the programs whose symbols (vtables) its relocations wrote: the storage lives
#: for the process, and so must the code its pointers reach
_WRITERS: dict[tuple[int, str, str], list] = {}
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


_NESTED = re.compile(r"_ZN([rVK]*)((?:\d+[A-Za-z_$][A-Za-z0-9_$]*)+)E")
_UNQUALIFIED = re.compile(r"_ZL?(\d+)([A-Za-z_$][A-Za-z0-9_$]*)")
_PART = re.compile(r"(\d+)")


def source_name(symbol: str) -> str:
    """A device global's name as its source wrote it, from its IR symbol: the
    Itanium mangling of a variable (``_ZN3Foo1dE`` is ``Foo::d``, a static
    member or a namespace member; ``_ZL2dg``, a ``static`` one in DPC++'s IR,
    is ``dg``); an unmangled name or another mangling is itself."""
    m = _NESTED.fullmatch(symbol)
    if m is not None:
        parts, text, i = [], m.group(2), 0
        while i < len(text):
            n = _PART.match(text, i)
            length, start = int(n.group(1)), n.end()
            if start + length > len(text):
                return symbol
            parts.append(text[start:start + length])
            i = start + length
        return "::".join("(anonymous namespace)" if p == "_GLOBAL__N_1" else p for p in parts)
    m = _UNQUALIFIED.fullmatch(symbol)
    if m is not None and int(m.group(1)) == len(m.group(2)):
        return m.group(2)
    return symbol


#: NumPy kinds that can hold each LLVM scalar type (``check_element_type``)
_SCALAR_KINDS = {"i1": "bui", "i8": "iu", "i16": "iu", "i32": "iu", "i64": "iu", "half": "f", "float": "f",
                 "double": "f"}


class device_global:  # noqa: N801 - SYCL's name
    """A program's handle on one device global (``program.device_global("name")``)."""

    def __init__(self, prog, uid: str, info: dict):
        self.program, self.uid, self.info = prog, uid, info
        self.name = info["name"]                 # the IR symbol
        self.source_name = source_name(self.name)   # as the source wrote it (``Foo::d``)
        self.size = info["size"]
        self.element_size = info.get("element_size") or self.size
        self.image_scope = info["device_image_scope"]
        self.host_access = _ACCESS.get(info.get("host_access", 2), "read_write")

    def has_property(self, name: str) -> bool:
        """Whether the declaration gave property ``name`` (``device_image_scope``,
        ``host_access``, ``init_mode``, ``implement_in_csr``), as SYCL's ``has_property``."""
        if not isinstance(name, str) or name not in _PROPERTIES:
            raise exception(errc.invalid, f"{name!r:.60} is not a device_global property; known: {', '.join(_PROPERTIES)}")
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
            raise exception(errc.invalid, f"device_global '{self.source_name}' does not have property '{name}'")
        if name == "device_image_scope":
            return True
        if name == "host_access":
            return self.host_access
        if name == "init_mode":
            return {"0": "reprogram", "1": "reset"}.get(str(self.info.get("init_mode")), self.info.get("init_mode"))
        return str(self.info.get("implement_in_csr")) == "true"

    def check_element_type(self, dtype, what: str) -> None:
        """``errc::invalid`` unless host memory of ``dtype`` holds this global's
        elements: the same size, and an integer type for an LLVM integer, a
        floating type for an LLVM floating type (LLVM's types carry no sign, so
        ``long`` takes int64 and uint64).  Other element types (structs,
        pointers, whose layout NumPy cannot name) and bundles written without
        the type are not checked."""
        kind = _SCALAR_KINDS.get(self.info.get("element_type") or "")
        if kind is not None and (dtype.itemsize != self.element_size or dtype.kind not in kind):
            element = self.info.get("element_type") or f"{self.element_size}-byte elements"
            raise exception(errc.invalid, f"{what}: device_global '{self.source_name}' holds {element}, not {dtype} "
                                          f"(the element types must match; memcpy copies bytes)")

    @property
    def elements(self) -> int:
        return self.size // self.element_size

    def initial_bytes(self) -> bytes:
        return bytes.fromhex(self.info.get("init") or "") or bytes(self.size)

    def __repr__(self):
        return f"<device_global {self.source_name} ({self.size} bytes{', image scope' if self.image_scope else ''})>"

    def check_access(self, direction: str) -> None:
        """``direction``: "to" (host writes it) or "from" (host reads it)."""
        forbidden = ("read", "none") if direction == "to" else ("write", "none")
        if self.host_access in forbidden:
            verb = "written" if direction == "to" else "read"
            raise exception(errc.invalid, f"device_global '{self.source_name}' has host_access({self.host_access}) and "
                                          f"cannot be {verb} by the host")

    def check_bounds(self, direction: str, offset: int, nbytes: int) -> None:
        if offset < 0 or nbytes < 0 or offset + nbytes > self.size:
            raise exception(errc.invalid, f"Copy {direction} device_global is out of bounds.")


def check_one_definition(name: str, have: int, want: int) -> None:
    """Programs that share a device global's storage (the same ``sycl-unique-id``
    in one context) must agree on its size: one that needs more than the storage
    holds would write past it, so it is refused (C++'s one-definition rule)."""
    if have != want:
        raise exception(errc.invalid, f"device_global '{name}' is {want} bytes in this program, but a program "
                                      f"loaded before defines it with {have} bytes in the same context: one "
                                      f"definition per name (rename one of them or make it static)")


def _shared_storage(dg: device_global, device, ctx) -> usm_allocation:
    with _LOCK:
        key = (ctx.id, device.name, dg.uid)
        storage = _STORAGE.get(key)
        if storage is not None:
            check_one_definition(dg.name, storage.count, dg.size)
        else:
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
                    left = apply_relocations(_PENDING[key], linked.global_address, _writer(storage.ptr))
                    if len(left) < len(_PENDING[key]):
                        _WRITERS.setdefault(key, []).append(linked)
                    _PENDING[key] = left
