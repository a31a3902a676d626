"""A loaded bundle: kernels, image selection, virtual-function linking, host functions.

Per kernel launch on a device (the seeds' algorithm of DPC++'s virtual-functions design,
intel/llvm sycl/doc/design/VirtualFunctions.md, "Changes to the runtime"):

1. Choose the image: the AOT image built for this device's target if there is
   one, otherwise the JIT image holding the kernel.
2. Check its ``SYCL/device requirements`` against the device:
   ``errc::kernel_not_supported`` naming every missing aspect.
3. Collect the images to link: for ``calls-virtual-functions-set`` (or upstream's
   ``uses-virtual-functions-set``) every provider of each set; for
   ``creates-virtual-functions-set`` each provider the device supports, and the
   provider's dummy twin otherwise.  Several providers of one set are all linked.
4. Link and JIT them (``jit.py``) once per (image set, device); every kernel of
   those images then launches without compiling anything.
"""
from __future__ import annotations

import ctypes
import os
import struct
import threading

import numpy as np

from ..device_configs.aspects import aspect_name
from ..passes.ir import Module, split_operands, split_type
from ..postlink.bundle import Bundle, BundleError, BundleImage
from ..postlink.propertyset import PropertySets, u32_values, u64_values
from .device import default_context, device as Device
from .errors import errc, exception
from .layouts import ClassLayouts
from .engine import EXITING, close_engine, jit_module, keep_context, with_stack_probes
from .jit import LinkedProgram, keep_if_code_escapes, read_bundle_bitcode
from .device_global import bind_program, device_global, source_name
from .arguments import pack_slots, packing_plan, slot
from .native import run_guarded
from ..passes.support.signature import SignatureError, parse as parse_signature
from .spec_constants import REPLACED_WITH_DEFAULT, SpecTable
from .validate import require_choice, require_names, require_path, require_paths, require_str
from ..passes.support.ir_contract import (CALLS_VF_SET_KEY, CREATES_VF_SET_KEY, DEVICE_REQUIREMENTS, MISC_PROPERTIES,
                                          REQD_SUB_GROUP_SIZE_KEY, REQD_WG_SIZE_U64_KEY, SPEC_CONSTANTS, USES_VF_SET_KEY,
                                          VF_SET_KEY, VIRTUAL_FUNCTIONS)

__all__ = ["program", "kernel", "load_bundle", "build_program"]



def _required_aspects(im: BundleImage) -> list[int]:
    raw = im.properties.get(DEVICE_REQUIREMENTS, "aspects")
    return [] if raw is None else u32_values(raw)


def _virtual_function_sets(im: BundleImage, key: str) -> list[str]:
    raw = im.properties.get(VIRTUAL_FUNCTIONS, key)
    return [s for s in PropertySets.payload(raw).decode().split(",") if s] if raw else []


def missing_requirements(im: BundleImage, dev: Device) -> list[str]:
    """Upstream's messages for every requirement of ``im`` that ``dev`` lacks."""
    out = [f"Required aspect {aspect_name(a, 'Unknown aspect {}')} is not supported on the device"
           for a in _required_aspects(im) if not any(int(x) == a for x in dev.aspects)]
    sg = im.properties.get(DEVICE_REQUIREMENTS, REQD_SUB_GROUP_SIZE_KEY)
    if sg is not None and dev.sub_group_sizes and sg not in dev.sub_group_sizes:
        out.append(f"Sub-group size {sg} is not supported on the device")
    return out


class program:  # noqa: N801
    """The kernels and host functions of one bundle (several bundles may share
    virtual-function sets: pass them all as ``bundles``)."""

    def __init__(self, bundles: list[Bundle] | Bundle, name: str = "<bundle>"):
        self.bundles = [bundles] if isinstance(bundles, Bundle) else list(bundles)
        self.name = name
        self.images: list[BundleImage] = [im for b in self.bundles for im in b.images]
        self.signatures: dict[str, str] = {}
        self.device_globals: dict[str, dict] = {}
        layouts: dict[str, dict] = {}
        for b in self.bundles:
            self.signatures.update(b.kernels)
            self.device_globals.update(b.device_globals)
            for cls, layout in b.layouts.items():
                layouts.setdefault(cls, layout)
        self.layouts = ClassLayouts(layouts, name)
        self._views: dict = {}
        self._cache: dict[tuple, LinkedProgram] = {}
        self._resolved: dict[tuple, tuple] = {}     # (kernel, device, context) -> what linked_for found
        self._kernels: dict[str, kernel] = {}
        self._lock = threading.Lock()
        self._spec_tables: dict[int, SpecTable] = {}
        self._spec_names: frozenset | None = None
        self._host = None
        self.builds = 0                 # programs linked and JIT-compiled (for tests and benchmarks)

    # -- selection and linking ----------------------------------------------------

    def _image_for(self, name: str, dev: Device, default: bool = True) -> int:
        """The image of kernel ``name`` for ``dev``; ``default``: no specialization
        constant was set, so a JIT image with the defaults folded in is preferred
        (``specConstsReplacedWithDefault``); otherwise such images are skipped."""
        aot = [i for i, im in enumerate(self.images) if im.target == dev.name and name in im.entry_points]
        if aot:
            return aot[0]
        jit = [i for i, im in enumerate(self.images) if im.target is None and not im.dummy and name in im.entry_points]
        folded = [i for i in jit if _defaults_folded(self.images[i])]
        jit = [i for i in jit if i not in folded]
        if default and folded:
            return folded[0]
        if jit:
            return jit[0]
        if any(name in im.entry_points for im in self.images):
            raise exception(errc.kernel_not_supported,
                            f"kernel '{name}' has no image for device {dev.name} (its target was not built)")
        known = ", ".join(sorted(self.signatures)) or "none"
        raise exception(errc.invalid, f"no kernel named '{name}' in {self.name} (kernels: {known})")

    def images_to_link(self, main: int, dev: Device) -> list[int]:
        """Step 3: the main image, then the virtual-function images it needs."""
        im = self.images[main]
        if im.target is not None:
            return [main]
        out = [main]
        providers: dict[str, list[int]] = {}
        for i, other in enumerate(self.images):
            if other.target is None:
                for s in _virtual_function_sets(other, VF_SET_KEY):
                    providers.setdefault(s, []).append(i)
        for s in _virtual_function_sets(im, CALLS_VF_SET_KEY) + _virtual_function_sets(im, USES_VF_SET_KEY):
            out += [i for i in providers.get(s, []) if not self.images[i].dummy and i not in out]
        for s in _virtual_function_sets(im, CREATES_VF_SET_KEY):
            real = [i for i in providers.get(s, []) if not self.images[i].dummy]
            dummies = [i for i in providers.get(s, []) if self.images[i].dummy]
            for r in real:
                if r in out:
                    continue
                if not missing_requirements(self.images[r], dev):
                    out.append(r)
                else:
                    twin = next((d for d in dummies if self.images[d].entry_points == self.images[r].entry_points),
                                None)
                    if twin is not None and twin not in out:
                        out.append(twin)
        return out

    def linked_for(self, name: str, dev: Device, ctx=None, spec: bytes | None = None) -> tuple[LinkedProgram, list[int]]:
        """The built program for kernel ``name`` on ``dev`` in ``ctx`` (default context);
        ``spec``: the buffer of specialization constant values to compile it with
        (None: none was set, the image with the defaults folded in)."""
        ctx = ctx or default_context(dev)
        found = self._resolved.get((name, dev.name, ctx.id, spec))
        if found is not None:               # (the choice of images is the same every launch)
            return found
        main = self._image_for(name, dev, default=spec is None)
        missing = missing_requirements(self.images[main], dev)
        if missing:
            raise exception(errc.kernel_not_supported, "; ".join(missing))
        chosen = self._whole_program(dev, spec is None) if dev.impl.whole_program else self.images_to_link(main, dev)
        kernels = [k for i in chosen for k in self.images[i].entry_points if k in self.signatures]
        fold = spec if dev.impl.runs_on_host else self._folds(kernels, chosen, name, spec)
        # the build's key is everything the build depends on: on a GPU the values are folded into
        # one kernel's code (``_folds``), so two kernels given the same values are two builds
        key = (tuple(chosen), dev.name, ctx.id, tuple(sorted(fold.items())) if isinstance(fold, dict) else fold)
        with self._lock:
            linked = self._cache.get(key)
            if linked is None:
                images = [self.images[i].ir for i in chosen]
                names = [self._image_name(i) for i in chosen]
                signatures = {k: self.kernel(k).signature for k in kernels}     # what the arguments are packed by
                linked = dev.impl.link_images(images, kernels, names, signatures, fold,
                                              dev.sub_group_sizes[0] if dev.sub_group_sizes else 1)
                bind_program(self, linked, dev, ctx)
                self._cache[key] = linked
                self.builds += 1
            self._resolved[(name, dev.name, ctx.id, spec)] = (linked, chosen)
        return linked, chosen

    def _whole_program(self, dev: Device, default: bool) -> list[int]:
        """Every kernel's image for ``dev`` (``_image_for``: one per kernel, the
        defaults-folded twin where ``default``) with the images each links (step 3),
        in one list: for a device whose code addresses belong to one driver module
        (an NVIDIA GPU), so that an object one kernel constructs (its vtable's
        function pointers) can be used by every other kernel."""
        mains: list[int] = []
        for im in self.images:
            if im.target is None and not im.dummy and not missing_requirements(im, dev):
                for k in im.entry_points:
                    if k in self.signatures:
                        m = self._image_for(k, dev, default)
                        if m not in mains and not missing_requirements(self.images[m], dev):
                            mains.append(m)
        out: list[int] = []
        for m in mains:
            out += [j for j in self.images_to_link(m, dev) if j not in out]
        return out

    def _folds(self, kernels: list[str], chosen: list[int], name: str, spec: bytes | None) -> dict | None:
        """For a device without launchers (no buffer pointer to pass: an NVIDIA GPU),
        each kernel of ``chosen`` images that reads its constants from the buffer and
        the buffer it is compiled with: ``spec`` for kernel ``name`` when set, else
        its defaults (an image with a defaults-folded twin reads none)."""
        folds = {}
        for k in kernels:
            if any(k in self.images[i].entry_points and SPEC_CONSTANTS in self.images[i].properties
                   and not _defaults_folded(self.images[i]) for i in chosen):
                table = self.spec_table(k)
                if table is not None:
                    folds[k] = table.defaults
        if spec is not None:
            folds[name] = spec
        return folds or None

    def spec_table(self, name: str) -> SpecTable | None:
        """The specialization constants kernel ``name`` reads (``spec_constants.py``), or None."""
        found = [i for i, im in enumerate(self.images) if name in im.entry_points and not im.dummy
                 and not _defaults_folded(im) and SPEC_CONSTANTS in im.properties]
        if not found:
            return None
        index = found[0]
        table = self._spec_tables.get(index)
        if table is None:
            table = self._spec_tables[index] = SpecTable.of_image(self.images[index].properties,
                                                                   self._image_view(index))
        return table

    def spec_constant_names(self) -> set[str]:
        """The symbolic ids of every specialization constant some kernel of the program reads."""
        names = self._spec_names
        if names is None:
            names = self._spec_names = frozenset(n for im in self.images
                                                 for n in im.properties.sets.get(SPEC_CONSTANTS, {}))
        return names

    def device_global(self, name: str):
        """The handle of a device global, by source name (``"counter"``, a static
        member as ``"Foo::d"``), IR name or unique id."""
        name = require_str(name, "device_global name")
        for uid, info in self.device_globals.items():
            if name in (uid, info["name"], source_name(info["name"])) or uid.endswith("___" + name):
                return device_global(self, uid, info)
        known = ", ".join(self.device_global_names()) or "none"
        raise exception(errc.invalid, f"no device_global named '{name}' in {self.name} (device globals: {known})")

    def device_global_names(self) -> list[str]:
        """The program's device globals, by their names as the source wrote them, sorted."""
        return sorted(source_name(i["name"]) for i in self.device_globals.values())

    def image_scope_program(self, dg, dev: Device, ctx=None) -> LinkedProgram:
        """The program, on ``dev``, of the one image holding a ``device_image_scope`` variable."""
        holders = []
        for i, im in enumerate(self.images):
            if im.dummy or (im.target is not None and im.target != dev.name):
                continue
            view = self._image_view(i)
            g = view.globals.get(dg.name)
            if g is not None and not g.is_declaration:
                holders.append(i)
        aot = [i for i in holders if self.images[i].target == dev.name]
        holders = aot or holders
        if not holders:
            raise exception(errc.invalid, "No image exists with the device_global.")
        if len(holders) > 1:
            raise exception(errc.invalid, "More than one image exists with the device_global.")
        view, im = self._image_view(holders[0]), self.images[holders[0]]
        users = [k for k in im.entry_points if k in self.signatures and k in view.functions
                 and dg.name in view.closure([k])]
        if not users:
            raise exception(errc.kernel_not_supported, f"no kernel of the image holding device_global "
                                                       f"'{dg.name}' uses it")
        return self.linked_for(users[0], dev, ctx)[0]

    def _image_name(self, index: int) -> str:
        return f"{self.name}: image '{self.images[index].name}'"

    def _image_view(self, index: int):
        view = self._views.get(index)
        if view is None:
            view = self._views[index] = read_bundle_bitcode(self.images[index].ir, self._image_name(index))
        return view

    def kernel(self, name: str) -> "kernel":
        """The kernel ``name`` (the same object each time: it remembers what its launches looked up)."""
        found = self._kernels.get(name) if type(name) is str else None
        if found is not None:
            return found
        name = require_str(name, "kernel name")
        if name not in self.signatures:
            known = ", ".join(sorted(self.signatures)) or "none"
            raise exception(errc.invalid, f"no kernel named '{name}' in {self.name} (kernels: {known})")
        try:
            found = kernel(self, name, self.signatures[name])
        except SignatureError as err:
            raise exception(errc.invalid, f"kernel '{name}' in {self.name}: {err}") from None
        self._kernels[name] = found
        return found

    __getitem__ = kernel

    # -- class layouts ---------------------------------------------------------------

    def sizeof(self, name: str) -> int:
        """``sizeof(name)`` of a class or struct of the program, in bytes."""
        return self.layouts.sizeof(name)

    def dtype(self, name: str):
        """A NumPy structured dtype with the fields of class ``name`` at their offsets
        and its size (``runtime/layouts.py``): ``sycl.malloc_shared(n, prog.dtype("S"), q)``."""
        return self.layouts.dtype(name)

    # -- host side ------------------------------------------------------------------

    def host_function(self, name: str):
        """A host function of the program, JIT-compiled from the host module and
        callable from Python with USM allocations, ints and floats."""
        name = require_str(name, "host_function name")
        if self._host is None:
            self._host = _HostProgram(self.bundles[0].host, f"{self.name}: host module")
        return self._host.function(name)


def _defaults_folded(im: BundleImage) -> bool:
    return bool(im.properties.get(MISC_PROPERTIES, REPLACED_WITH_DEFAULT))


class _Specialized:
    """A program as a specialised kernel sees it: the same program, built with
    its buffer of specialization constant values (``kernel.specialized``)."""

    def __init__(self, prog: program, spec: bytes):
        self._prog, self._spec = prog, spec

    def __getattr__(self, name):
        return getattr(self._prog, name)

    def linked_for(self, name: str, dev: Device, ctx=None):
        return self._prog.linked_for(name, dev, ctx, spec=self._spec)


def _value_key(value):
    """``value`` as ``kernel.specialized``'s table tells values apart: a float by its
    bits (-0.0 equals 0.0 but is another constant), a NumPy scalar by its bytes."""
    if isinstance(value, float):            # (NumPy's float64 too)
        return struct.pack("<d", value)
    if isinstance(value, np.generic):
        return value.tobytes()
    return value


class kernel:  # noqa: N801
    """A kernel of a program, with its parameter signature from the bundle.

    A kernel whose last parameter is a ``kernel_handler`` reads specialization
    constants: its last slot holds the address of the buffer of their values
    (the defaults, or ``specialized``'s), which launches do not pass."""

    def __init__(self, prog: program, name: str, signature: str, spec: bytes | None = None):
        self.program, self.name = prog, name
        #: the one signature its arguments are checked and packed by (``passes/support/signature.py``)
        self.signature = sig = parse_signature(signature)
        #: a last ``kernel_handler`` parameter: its slot points at the buffer of specialization constant values
        self.handler = sig.handler
        #: the buffer of specialization constant values it was specialised with (None: the defaults)
        self.spec = spec
        self._spec_buffer = None
        self._specialized: dict[bytes, "kernel"] = {}
        #: ((name, type, value), ...) of scalar values given before -> ``specialized``'s answer
        self._by_values: dict[tuple, "kernel"] = {}
        self.item = sig.item.text if sig.item else None
        self.params = tuple(p.text for p in sig.args)
        #: its parameters' packers (``arguments.packing_plan``), for a dynamic parameter's update
        self.packing = packing_plan(self.params, self.handler)
        self.dims = sig.dims
        self._slots = ctypes.c_uint64 * max(sig.slot_count, 1)     # the type of its packed arguments
        self.reduces = any(p.kind == "reducer" for p in sig.args)      # takes a sycl.reduction
        self._required: dict[str, list[int] | None] = {}      # device name -> required_work_group_size
        #: (device name, context id) -> what a CPU queue's launch needs (``queue._target``)
        self.targets: dict[tuple, tuple] = {}

    def required_work_group_size(self, dev: Device) -> list[int] | None:
        """``reqd_work_group_size`` of the kernel in the image ``dev`` runs, or None."""
        try:
            return self._required[dev.name]
        except KeyError:
            pass
        im = self.program.images[self.program._image_for(self.name, dev)]
        raw = im.properties.get(DEVICE_REQUIREMENTS, REQD_WG_SIZE_U64_KEY)
        found = self._required[dev.name] = u64_values(raw) if raw is not None else None
        return found

    def pack(self, args) -> ctypes.Array:
        """Check the arguments against the signature and put each in an 8-byte slot."""
        if len(args) != len(self.params):
            raise exception(errc.invalid, f"kernel '{self.name}' takes {len(self.params)} argument"
                                          f"{'s' if len(self.params) != 1 else ''} ({', '.join(self.params)}), "
                                          f"got {len(args)}")
        slots = self._slots()
        pack_slots(self.params, args, slots, self._where, self.handler)
        if self.handler:
            slots[len(self.params)] = self._buffer_address()
        return slots

    def _buffer_address(self) -> int:
        buf = self._spec_buffer
        if buf is None:
            table = self.program.spec_table(self.name)
            data = self.spec if self.spec is not None else (table.defaults if table is not None else b"")
            buf = self._spec_buffer = ctypes.create_string_buffer(bytes(data) or b"\0", max(len(data), 1))
        return ctypes.addressof(buf)

    def specialized(self, values: dict) -> "kernel":
        """This kernel with specialization constants set (name -> value): the same
        object for the same values; this kernel itself when they are the defaults.
        A value of the wrong type or size, or a name no kernel of the program
        reads, is ``errc::invalid`` naming the constant; a constant this kernel
        does not read is ignored, as SYCL's handler does.  Scalar values given
        before (the same names, types and values) are answered from a table:
        encoding them again cost a specialised launch more than the launch."""
        try:
            key = tuple((name, value.__class__, _value_key(value)) for name, value in values.items())
            found = self._by_values.get(key)
        except TypeError:                   # a list, an array: unhashable, encoded each time
            return self._specialize(values)
        if found is None:
            found = self._by_values[key] = self._specialize(values)
        return found

    def _specialize(self, values: dict) -> "kernel":
        base = self.program._prog if isinstance(self.program, _Specialized) else self.program
        known = base.spec_constant_names()
        table = base.spec_table(self.name)
        encoded: dict[str, bytes] = {}
        for name, value in values.items():
            if not isinstance(name, str):
                raise exception(errc.invalid, f"a specialization constant is named by a string, got "
                                              f"{type(name).__name__}")
            if name not in known and not any(n.endswith("___" + name) for n in known):
                raise exception(errc.invalid, f"no specialization constant named '{name}' in {base.name}")
            sc = table.find(name) if table is not None else None
            if sc is not None:
                encoded[sc.name] = table.encode(sc, value)
        if table is None or not encoded:
            return self
        spec = table.buffer(encoded)
        if spec == table.defaults:
            return self
        found = self._specialized.get(spec)
        if found is None:
            found = self._specialized[spec] = kernel(_Specialized(base, spec), self.name, self.signature.text, spec)
        return found

    def _where(self, i: int, ty: str) -> str:
        return f"argument {i + 1} of kernel '{self.name}' ({ty})"


class _HostProgram:
    """The bundle's host module, JIT-compiled, its functions callable from Python.

    Each function Python can call (parameters and result of the types in
    ``_RESULT``) gets a wrapper with a kernel launcher's signature that reads
    the arguments from 8-byte slots, calls it and stores its result after
    them.  The wrapper runs under the kernels' fault guard
    (``native.run_guarded``): a host function that faults (a null pointer, say)
    raises ``errc::runtime`` instead of killing the process."""

    #: IR result type -> how to read it back from its slot
    _RESULT = {"void": None, "float": ctypes.c_float, "double": ctypes.c_double, "i1": ctypes.c_bool,
               "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32, "i64": ctypes.c_int64,
               "ptr": ctypes.c_void_p}

    def __init__(self, bitcode: bytes, what: str):
        text = read_bundle_bitcode(bitcode, what, cut=lambda t: t)      # LLVM's text parser does not abort
        self.view = Module.parse(text)
        #: name -> (parameter types, result type), or the reason Python cannot call it
        self.signatures: dict[str, tuple | str] = {}
        wrappers = []
        for name, fn in self.view.functions.items():
            if fn.is_declaration:
                continue
            types = [split_type(op)[0] for op in split_operands(fn.params[1:-1])]
            bad = [t for t in types + [fn.return_type] if t not in self._RESULT] + (["void"] if "void" in types else [])
            if bad or '"' in name or "\\" in name:
                self.signatures[name] = f"has a parameter or result of type '{(bad or ['?'])[0]}' that Python " \
                                        f"cannot pass"
                continue
            self.signatures[name] = (types, fn.return_type)
            wrappers.append(_host_wrapper(name, types, fn.return_type))
        with_stack_probes(self.view)        # a huge local array faults on the guard page (engine.py)
        self.engine, context = jit_module(self.view.text() + "\n" + "\n".join(wrappers))
        keep_context(self, context)
        keep_if_code_escapes(self, self.view)       # objects it constructs point at its vtables
        self._fns = {}

    def __del__(self, _close=close_engine, _exiting=EXITING):     # (defaults: the module may be gone at exit)
        if not _exiting.now:
            _close(self)

    def function(self, name: str):
        if name in self._fns:
            return self._fns[name]
        sig = self.signatures.get(name)
        if sig is None:
            known = ", ".join(n for n, f in self.view.functions.items() if not f.is_declaration and "." not in n)
            raise exception(errc.invalid, f"no host function named '{name}' (host functions: {known or 'none'})")
        if isinstance(sig, str):
            raise exception(errc.invalid, f"host function '{name}' {sig}")
        types, result = sig
        wrapper = self.engine.get_function_address(_HOST_WRAPPER + name)
        restype = self._RESULT[result]

        def call(*args):
            if len(args) != len(types):
                raise exception(errc.invalid, f"host function '{name}' takes {len(types)} arguments, got {len(args)}")
            slots = (ctypes.c_uint64 * (len(types) + 1))()
            for i, (ty, value) in enumerate(zip(types, args)):
                slots[i] = slot(ty, value, f"argument {i + 1} of host function '{name}' ({ty})")
            run_guarded(wrapper, slots, f"host function '{name}'")
            return None if restype is None else restype.from_buffer(slots, 8 * len(types)).value

        call.host_module = self     # the callable keeps the engine that holds its code (its program may go first)
        self._fns[name] = call
        return call


_HOST_WRAPPER = "__msycl_host_call."


def _host_wrapper(name: str, types: list[str], result: str) -> str:
    """IR of the guard wrapper of host function ``name``: ``void (ptr slots, i64, i64, ptr)``,
    arguments in slots 0..n-1, the result in slot n."""
    lines = [f'define void @"{_HOST_WRAPPER}{name}"(ptr %slots, i64 %begin, i64 %end, ptr %geometry) {{']
    for i, ty in enumerate(types):
        lines += [f"  %p{i} = getelementptr i64, ptr %slots, i64 {i}", f"  %a{i} = load {ty}, ptr %p{i}"]
    call = f'call {result} @"{name}"(' + ", ".join(f"{ty} %a{i}" for i, ty in enumerate(types)) + ")"
    if result == "void":
        lines.append(f"  {call}")
    else:
        lines += [f"  %r = {call}", f"  %pr = getelementptr i64, ptr %slots, i64 {len(types)}",
                  f"  store {result} %r, ptr %pr"]
    return "\n".join(lines + ["  ret void", "}"])


def build_program(sources, *, split: str = "auto", targets=()) -> program:
    """Build sources in this process (``minisycl build`` without the file) and load the result.
    ``sources`` is one path (``str`` or path-like) or a list of them."""
    sources = require_paths(sources, "build_program sources")
    targets = require_names(targets, "build_program targets")
    # The runtime's one use of post-link beyond the bundle format, and made here,
    # not at the top, on purpose (the documented exception to the layering):
    # building from sources needs the whole compiler, which loading and running
    # a bundle never does.
    from ..passes.support.diagnostics import CompileError, UserError
    from ..postlink.build import SPLIT_MODES, build
    split = require_choice(split, SPLIT_MODES, "build_program split")
    for s in sources:
        if not os.path.isfile(s):
            raise exception(errc.invalid, f"build_program: no source file '{s}'")
    try:
        bundle, _ = build(sources, split=split, targets=targets)
    except CompileError as err:
        raise exception(errc.build, str(err)) from err
    except (UserError, OSError) as err:
        raise exception(errc.build, f"build_program: {err}") from err
    return program(bundle, " ".join(sources))


def load_bundle(path: str) -> program:
    """Read a bundle file (``minisycl build``) as a program."""
    path = require_path(path, "load_bundle path")
    try:
        return program(Bundle.read(path), path)
    except BundleError as err:
        raise exception(errc.invalid, str(err)) from None
