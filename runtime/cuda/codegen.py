"""Device images -> one PTX module per (image set, device) -> a driver module.

1. The chosen images (selection and virtual-function linking are the
   program's, unchanged: ``program.images_to_link``) are read back as text,
   later images declare what earlier ones define, and LLVM links them into
   one module (``image_link.py``, as for the CPU).
2. The ``lower-to-nvptx`` pass makes it NVPTX IR; with libdevice (found by
   ``libdevice_path``) math goes to libdevice, which is linked in.
3. llvmlite's NVPTX target emits PTX for the device's ``sm_XX``
   (``passes.ir.emit_ptx``), cached on disk as ``<cache dir>/ptx/<key>.ptx``
   (entries checked before use: ``disk_cache.py``),
   ``key`` the SHA-256 of the lowered IR, the architecture, the features and
   the libdevice file; the driver JIT-compiles it (``cuModuleLoadDataEx``,
   with its error log in any failure).  The program keeps the built module in
   memory (``program._cache``), so each (image set, device, context) is built
   once per process.
"""
from __future__ import annotations

import ctypes
import glob
import hashlib
import os
import re
import threading
import time

from ...passes import parse_pipeline
from ...passes.ir import Module, emit_ptx, in_child
from ...passes.manager import PassManager
from ...passes.support import knobs
from ...passes.support.diagnostics import UserError
from ..backend import (SPEC_GLOBAL, check_signatures, errc, exception, expose_device_globals, fold_handler_parameters,
                       link_images, read_bundle_bitcode, read_entry, write_entry)
from . import driver

__all__ = ["CudaProgram", "build_program", "libdevice_path", "lower_images", "PTX_FEATURES"]

PTX_FEATURES = "+ptx80"


def ptx_features(dev) -> str:
    """PTX 8.1 where the driver reads it (CUDA 12.1 on): its kernels take up to 32,764
    bytes of parameters, 8.0's only 4,352; else ``PTX_FEATURES``."""
    return "+ptx81" if dev.driver_version_number() >= 12010 else PTX_FEATURES
_VERSION = "minisycl-ptx-1"
_LIBDEVICE_PLACES = ("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc", "/usr/local/cuda-*/nvvm/libdevice/libdevice.10.bc",
                     "/usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc", "/opt/cuda/nvvm/libdevice/libdevice.10.bc")
_libdevice_text: dict[str, str] = {}
_lock = threading.Lock()


def libdevice_path() -> str | None:
    """CUDA's libdevice: ``MINISYCL_CUDA_LIBDEVICE``, else under ``CUDA_HOME``, the
    usual install places, or a pip-installed ``nvidia-cuda-nvcc``; None without one."""
    chosen = knobs.cuda_libdevice()
    if chosen == "off":
        return None
    if chosen:
        return chosen if os.path.isfile(chosen) else None
    places = []
    home = knobs.cuda_home()
    if home:
        places.append(os.path.join(home, "nvvm", "libdevice", "libdevice.10.bc"))
    places += _LIBDEVICE_PLACES
    try:
        import nvidia.cuda_nvcc as nvcc            # a pip-installed toolkit part, if any
        places += [os.path.join(p, "nvvm", "libdevice", "libdevice.10.bc") for p in nvcc.__path__]
    except ImportError:
        pass
    for place in places:
        for found in sorted(glob.glob(place)):
            if os.path.isfile(found):
                return found
    return None


def _libdevice(path: str) -> str:
    """libdevice's IR, retargeted to our layout, with ``__nvvm_reflect`` answered
    0 (no flush-to-zero: denormals kept, CUDA's default)."""
    with _lock:
        text = _libdevice_text.get(path)
        if text is None:
            with open(path, "rb") as fh:
                text = read_bundle_bitcode(fh.read(), f"libdevice {path}", cut=lambda t: t)
            text = re.sub(r'(?m)^target datalayout = .*$', "", text)
            text = re.sub(r'(?m)^target triple = .*$', 'target triple = "nvptx64-nvidia-cuda"', text)
            text = re.sub(r"call i32 @__nvvm_reflect\([^)]*\)(?: #\d+)?", "add i32 0, 0", text)
            text = re.sub(r"(?m)^declare [^\n]*@__nvvm_reflect\([^\n]*\n", "", text)
            _libdevice_text[path] = text
        return text


def lower_images(image_bitcodes: list[bytes], names: list[str], libdevice: bool, kernels=(),
                 signatures: dict | None = None, spec: bytes | None = None) -> Module:
    """Steps 1-2: the linked, lowered module; each kernel of ``signatures`` (kernel ->
    the ``Signature`` its arguments are packed by) checked against its code first;
    ``spec``: the buffer of specialization constant values the ``kernels`` that
    take a ``kernel_handler`` are compiled with (``spec_constants.fold_handler_parameters``),
    or kernel -> its own buffer."""
    linked = Module.parse(link_images(image_bitcodes, names))
    check_signatures(linked, signatures or {})
    expose_device_globals(linked)
    if isinstance(spec, dict):          # one program, several kernels: each with its own buffer
        for k, buffer in sorted(spec.items()):
            fold_handler_parameters(linked, [k], buffer, f"{SPEC_GLOBAL}.{k}")
    elif spec is not None:
        fold_handler_parameters(linked, kernels, spec)
    try:
        PassManager(parse_pipeline("lower-to-nvptx" + ("{libdevice=true}" if libdevice else ""))).run(linked)
    except UserError as err:
        raise exception(errc.build, f"{names[0]}: {err}") from None
    return linked


class CudaProgram:
    """A driver module built from images: kernels (``CUfunction``), globals."""

    def __init__(self, dev, module, ptx: str, key: str, from_disk: bool, shapes: dict, seconds: float):
        self.device, self.module, self.ptx, self.key, self.from_disk = dev, module, ptx, key, from_disk
        self.shapes = shapes            # kernel -> (item kind or None, dims)
        self.build_seconds = seconds
        self._functions: dict[str, ctypes.c_void_p] = {}
        self._limits: dict[str, tuple[int, int]] = {}
        self._dynamic: dict[str, int] = {}      # kernel -> dynamic shared bytes it may launch with
        self.aggregated = {}            # the CPU launcher's aggregation does not apply

    def function(self, kernel: str) -> ctypes.c_void_p:
        fn = self._functions.get(kernel)
        if fn is None:
            fn = ctypes.c_void_p()
            self.device.activate()
            driver.call("cuModuleGetFunction", ctypes.byref(fn), self.module, kernel.encode(),
                        what=f"finding kernel '{kernel}' in its PTX module")
            self._functions[kernel] = fn
        return fn

    def limits(self, kernel: str) -> tuple[int, int]:
        """(bytes of static shared memory, most threads per block) of ``kernel``'s
        compiled code (``CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES``, ``..._MAX_THREADS_PER_BLOCK``)."""
        found = self._limits.get(kernel)
        if found is None:
            fn = self.function(kernel)
            static, threads = ctypes.c_int(), ctypes.c_int()
            driver.call("cuFuncGetAttribute", ctypes.byref(static), 1, fn, what=f"asking kernel '{kernel}' its shared memory")
            driver.call("cuFuncGetAttribute", ctypes.byref(threads), 0, fn, what=f"asking kernel '{kernel}' its threads")
            found = self._limits[kernel] = (static.value, threads.value)
        return found

    def private_bytes(self, kernel: str) -> int:
        """Bytes of private (local) memory each thread of ``kernel`` needs: its stack
        frame (``CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES``)."""
        size = ctypes.c_int()
        driver.call("cuFuncGetAttribute", ctypes.byref(size), 3, self.function(kernel),
                    what=f"asking kernel '{kernel}' its local memory")
        return size.value

    def allow_dynamic_shared(self, kernel: str, nbytes: int) -> None:
        """Let ``kernel`` launch with ``nbytes`` of dynamic shared memory: above the
        driver's default (48 KiB less the static part) that needs
        ``cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)``."""
        allowed = self._dynamic.get(kernel)
        if allowed is None:
            v = ctypes.c_int()
            driver.call("cuFuncGetAttribute", ctypes.byref(v), 8, self.function(kernel),
                        what=f"asking kernel '{kernel}' its dynamic shared memory")
            allowed = self._dynamic[kernel] = v.value
        if nbytes > allowed:
            driver.call("cuFuncSetAttribute", self.function(kernel), 8, int(nbytes),
                        what=f"allowing kernel '{kernel}' {nbytes} bytes of dynamic shared memory "
                             f"(cuFuncSetAttribute CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)")
            self._dynamic[kernel] = int(nbytes)

    def global_address(self, name: str) -> int:
        """The device address of a module global (0 when the module has none of that name)."""
        self.device.activate()
        addr, size = ctypes.c_uint64(), ctypes.c_size_t()
        rc = driver.query("cuModuleGetGlobal_v2", ctypes.byref(addr), ctypes.byref(size), self.module, name.encode())
        return addr.value if rc == 0 else 0

    def bind_globals(self, prog, ctx) -> None:
        """Point every shared device global's ``{ptr, T}`` at its per-(device, context) storage."""
        impl = self.device.impl
        for uid, info in prog.device_globals.items():
            if info["device_image_scope"]:
                continue
            addr = self.global_address(info["name"])
            if addr:
                where = impl.storage(uid, info, ctx)
                value = ctypes.c_uint64(where)
                self.device.activate()
                driver.copy_now(addr, ctypes.addressof(value), 8, what=f"binding device_global '{info['name']}'")
                impl.relocate_global(uid, ctx, self.global_address)


def _disk(key: str) -> str | None:
    d = knobs.cache_dir()
    return os.path.join(d, "ptx", key + ".ptx") if d else None


def build_program(dev, image_bitcodes: list[bytes], kernels: list[str], names: list[str],
                  signatures: dict | None = None, spec: bytes | None = None) -> CudaProgram:
    """Steps 1-3 for ``dev`` (``signatures``, ``spec``: see ``lower_images``)."""
    start = time.perf_counter()
    lib = libdevice_path()
    lowered = lower_images(image_bitcodes, names, lib is not None, kernels, signatures, spec)
    shapes = {}
    for k in kernels:
        fn = lowered.functions.get(k)
        if fn is not None:
            first = fn.params[1:fn.params.find(",") if "," in fn.params else -1]
            shapes[k] = first
    text = lowered.text()
    needs_lib = lib is not None and "@__nv_" in text
    stamp = f"{lib}:{os.path.getmtime(lib)}" if needs_lib else "-"
    features = ptx_features(dev)
    key = hashlib.sha256("\n".join([text, dev.sm, features, stamp, _VERSION]).encode()).hexdigest()
    path = _disk(key)
    cached = read_entry(path)           # checked: a damaged entry is a miss (disk_cache.py)
    ptx, from_disk = (cached.decode("utf-8", "replace"), True) if cached is not None else (None, False)
    if ptx is None:
        texts = [text] + ([_libdevice(lib)] if needs_lib else [])
        try:        # in a child: the NVPTX back end aborts on what it cannot select
            ptx = in_child(lambda: emit_ptx(texts, dev.sm, features, keep=kernels).encode("utf-8"),
                           "the NVPTX back end").decode("utf-8")
        except (UserError, RuntimeError) as err:
            raise exception(errc.build, f"{names[0]}: PTX generation failed: {err}") from None
        write_entry(path, ptx.encode("utf-8"))
    module = load_module(dev, ptx, names[0])
    return CudaProgram(dev, module, ptx, key, from_disk, shapes, time.perf_counter() - start)


def load_module(dev, ptx: str, what: str) -> ctypes.c_void_p:
    """The driver's JIT on ``ptx``; its error log goes into the exception."""
    dev.activate()
    module = ctypes.c_void_p()
    log = ctypes.create_string_buffer(8192)
    opts = (ctypes.c_int * 2)(5, 6)         # CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
    vals = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p), ctypes.c_void_p(8192))
    rc = driver.query("cuModuleLoadDataEx", ctypes.byref(module), ptx.encode() + b"\0", 2, opts, vals)
    if rc != 0:
        text = log.value.decode(errors="replace").strip()
        too_much = _TOO_MUCH_SHARED.search(text)
        if too_much:            # the same error as on every device (work_groups.check_local_memory)
            kernel, need, limit = too_much.group(1), int(too_much.group(2), 16), int(too_much.group(3), 16)
            raise exception(errc.invalid, f"kernel '{kernel}' needs {need} bytes of work-group memory ({need} "
                                          f"static, 0 from local_memory arguments) but device {dev.name} has "
                                          f"{limit} for static local arrays (device.local_mem_size is "
                                          f"{dev.local_mem_size}, the rest only for local_memory arguments)")
        raise exception(errc.build, f"{what}: the CUDA driver could not load its PTX: {driver.error_name(rc)}"
                                    f"{': ' + text if text else ''}")
    return module


#: ptxas's report of a kernel whose static shared memory is above the GPU's static limit
_TOO_MUCH_SHARED = re.compile(r"Entry function '([^']+)' uses too much shared data \((0x[0-9a-fA-F]+) bytes, "
                              r"(0x[0-9a-fA-F]+) max\)")
