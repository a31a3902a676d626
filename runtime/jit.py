"""Link device images, wrap kernels in native loops, and JIT them for this CPU.

1. Each image's bitcode is read back as text (the IR toolkit's view), by LLVM
   in a child process (``read_bundle_bitcode``: a bundle is a file, and corrupt
   bitcode can abort LLVM's reader; a checksum only shows the file is whole).  A strong
   definition that an earlier image already provides becomes a declaration,
   so images that copied the same helper (or device global) link cleanly.
2. LLVM links the images, and every kernel gets a launcher:
   ``void __minisycl_run_<k>(ptr args, i64 begin, i64 end, ptr geometry)``
   loads the arguments from 8-byte slots once, then loops over linear
   work-item indices ``[begin, end)``, building the ``id``/``nd_item`` value the
   kernel takes (row-major, last dimension fastest) and calling the kernel.
3. The module is retargeted to this CPU, optimised at -O3 (the kernel is
   inlined into its loop and vectorised) and compiled by MCJIT, with an object
   cache on disk keyed by the IR, the CPU and the options.
``native.run_range`` splits ``[0, total)`` over the cores, in native code, so no
Python runs per work-item.
"""
from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass

import llvmlite.binding as llvm

from ..passes.support import knobs
from ..passes.ir import IRError, Module, split_type, split_operands
from ..passes.ir.loading import read_untrusted_bitcode
from .atomics import accumulators, private_copy, private_name
from .errors import errc, exception
from .work_groups import group_launcher, lower_group_kernels

__all__ = ["LinkedProgram", "link_and_jit", "launcher_name", "read_bundle_bitcode"]

_OPT_LEVEL = 3
_init = threading.Lock()
_initialised = False
_machine = None


def _target_machine():
    """The shared machine that gives triple, data layout and the pass pipeline
    (never handed to an engine)."""
    global _machine
    with _init:
        if _machine is None:
            _machine = new_machine()
    return _machine


def new_machine():
    """A target machine for one execution engine: MCJIT takes ownership of the
    machine it is given and destroys it with the engine, so engines never share one."""
    global _initialised
    if not _initialised:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        _initialised = True
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(),
                                        opt=_OPT_LEVEL, reloc="default", codemodel="jitdefault")


def launcher_name(kernel: str) -> str:
    return f"__minisycl_run_{kernel}"


@dataclass
class KernelShape:
    """What the launcher needs to know about a kernel's parameters."""
    name: str
    item: str | None          # None (single_task), "id" or "nd_item"
    dims: int
    item_type: str            # LLVM spelling of the item parameter's type
    params: list[str]         # LLVM types of the other parameters, in order


def kernel_shape(module: Module, name: str) -> KernelShape:
    fn = module.functions[name]
    types = [split_type(op)[0] for op in split_operands(fn.params[1:-1])]
    first = types[0] if types else ""
    for kind in ("nd_item", "id"):
        prefix = f'%"class.sycl::_V1::{kind}.'
        if first.startswith(prefix):
            return KernelShape(name, kind, int(first[len(prefix):-1]), first, types[1:])
    return KernelShape(name, None, 0, "", types)


def _launchers(module: Module, shape: KernelShape, accs) -> str:
    """LLVM IR of the launcher of one kernel: its native loop, or, when the kernel
    only updates some parameters atomically (``accs``), a choice between that
    loop and one that aggregates the updates (``atomics.py``)."""
    if not accs:
        return _loop(shape, launcher_name(shape.name))
    plain, agg = f"__minisycl_each.{shape.name}", f"__minisycl_agg.{shape.name}"
    return (_loop(shape, plain, linkage="internal ") + private_copy(module, shape.name, accs)
            + _loop(shape, agg, callee=private_name(shape.name), accs=accs, linkage="internal ")
            + f"""define void @{launcher_name(shape.name)}(ptr %args, i64 %begin, i64 %end, ptr %geom) {{
entry:
  %n = sub i64 %end, %begin
  %one = icmp eq i64 %n, 1
  br i1 %one, label %plain, label %agg
plain:
  call void @{plain}(ptr %args, i64 %begin, i64 %end, ptr %geom)
  ret void
agg:
  call void @{agg}(ptr %args, i64 %begin, i64 %end, ptr %geom)
  ret void
}}
""")


def _loop(shape: KernelShape, name: str, callee: str | None = None, accs=(), linkage: str = "") -> str:
    """LLVM IR of the native loop around one kernel (``callee``, by default the
    kernel itself), with a private accumulator for each of ``accs``."""
    lines = [f"define {linkage}void @{name}(ptr %args, i64 %begin, i64 %end, ptr %geom) {{", "entry:"]
    call_args = []
    private = {a.param: a for a in accs}
    for i, ty in enumerate(shape.params):
        lines.append(f"  %slot{i} = getelementptr i64, ptr %args, i64 {i}")
        lines.append(f"  %arg{i} = load {ty}, ptr %slot{i}, align 8")
        if i in private:
            a = private[i]
            lines += [f"  %acc{i} = alloca {a.type}", f"  store {a.type} {a.identity}, ptr %acc{i}"]
        call_args.append(f"ptr %acc{i}" if i in private else f"{ty} %arg{i}")
    n = shape.dims
    for d in range(n):
        lines.append(f"  %gp{d} = getelementptr i64, ptr %geom, i64 {d}")
        lines.append(f"  %g{d} = load i64, ptr %gp{d}, align 8")
        if shape.item == "nd_item":
            lines.append(f"  %lp{d} = getelementptr i64, ptr %geom, i64 {3 + d}")
            lines.append(f"  %l{d} = load i64, ptr %lp{d}, align 8")
    lines += ["  br label %loop", "loop:", "  %lin = phi i64 [ %begin, %entry ], [ %next, %loop ]"]
    if shape.item is not None:
        # row-major: the last dimension varies fastest
        rest = "%lin"
        for d in range(n - 1, -1, -1):
            if d == 0:
                lines.append(f"  %i{d} = add i64 {rest}, 0")
            else:
                lines.append(f"  %i{d} = urem i64 {rest}, %g{d}")
                lines.append(f"  %q{d} = udiv i64 {rest}, %g{d}")
                rest = f"%q{d}"
        arr = f"[{n} x i64]"

        def array(name, values):
            prev = "undef"
            for d, v in enumerate(values):
                lines.append(f"  %{name}.{d} = insertvalue {arr} {prev}, i64 {v}, {d}")
                prev = f"%{name}.{d}"
            return prev

        if shape.item == "id":
            a = array("idv", [f"%i{d}" for d in range(n)])
            lines.append(f"  %item = insertvalue {shape.item_type} undef, {arr} {a}, 0")
        else:
            for d in range(n):
                lines.append(f"  %li{d} = urem i64 %i{d}, %l{d}")
                lines.append(f"  %gr{d} = udiv i64 %i{d}, %l{d}")
            fields = [array("gid", [f"%i{d}" for d in range(n)]), array("lid", [f"%li{d}" for d in range(n)]),
                      array("grp", [f"%gr{d}" for d in range(n)]), array("grg", [f"%g{d}" for d in range(n)]),
                      array("lrg", [f"%l{d}" for d in range(n)])]
            prev = "undef"
            for k, f in enumerate(fields):
                name = "item" if k == len(fields) - 1 else f"item.{k}"
                lines.append(f"  %{name} = insertvalue {shape.item_type} {prev}, {arr} {f}, {k}")
                prev = f"%{name}"
        call_args.insert(0, f"{shape.item_type} %item")
    lines += [f"  call spir_func void @{callee or shape.name}({', '.join(call_args)})",
              "  %next = add i64 %lin, 1",
              "  %done = icmp uge i64 %next, %end",
              "  br i1 %done, label %exit, label %loop",
              "exit:"]
    for i, a in private.items():
        lines += [f"  %accv{i} = load {a.type}, ptr %acc{i}",
                  f"  %flush{i} = atomicrmw {a.op} ptr %arg{i}, {a.type} %accv{i}{a.ordering}"]
    lines += ["  ret void", "}"]
    return "\n".join(lines) + "\n"


def _dedupe(modules: list[Module]) -> None:
    """Step 1: later images declare what earlier images already define."""
    defined: set[str] = set()
    for m in modules:
        for name in m.strong_definitions():
            if name in defined:
                m.make_declaration(name)
            else:
                defined.add(name)


class LinkedProgram:
    """Linked, JIT-compiled images: kernel launchers and global addresses."""

    def __init__(self, engine, context, shapes: dict[str, KernelShape], key: str, from_disk: bool,
                 aggregated: dict[str, list[int]]):
        self.engine, self.shapes, self.key, self.from_disk = engine, shapes, key, from_disk
        #: kernel -> indices (among the non-item parameters) of atomically updated parameters
        #: whose updates its launcher aggregates (``atomics.py``)
        self.aggregated = aggregated
        #: kernel -> GroupKernel, for kernels that run a work-group per call (work_groups.py)
        self.groups = {}
        keep_context(self, context)
        self._launchers = {}

    def __del__(self):
        close_engine(self)

    def launcher(self, kernel: str) -> int:
        """The address of ``kernel``'s launcher."""
        addr = self._launchers.get(kernel)
        if addr is None:
            addr = self.engine.get_function_address(launcher_name(kernel))
            if not addr:
                raise exception(errc.runtime, f"kernel '{kernel}' has no launcher in its program")
            self._launchers[kernel] = addr
        return addr

    def global_address(self, name: str) -> int:
        return self.engine.get_global_value_address(name)


def read_bundle_bitcode(bitcode: bytes, what: str, cut=None):
    """Bitcode from a bundle (an image or the host module), verified and printed
    by LLVM in a child process: ``cut(text)``, by default its ``Module``.
    Bitcode LLVM cannot read raises ``sycl.exception`` (``errc.invalid``) naming
    ``what``, never takes the process down."""
    try:
        return read_untrusted_bitcode(bitcode, what, cut)
    except IRError as err:
        raise exception(errc.invalid, str(err)) from None


def link_and_jit(image_bitcodes: list[bytes], kernels: list[str], names: list[str] | None = None,
                 sub_group_size: int = 0) -> LinkedProgram:
    """Steps 1-3 for the images (the first holds the kernels); ``names`` name
    them in errors; ``sub_group_size``: the device's default, for work-group kernels."""
    names = names or [f"device image {i + 1}" for i in range(len(image_bitcodes))]
    texts = [read_bundle_bitcode(bc, name) for bc, name in zip(image_bitcodes, names)]
    _dedupe(texts)
    ctx = llvm.create_context()
    try:
        main = llvm.parse_assembly(texts[0].text(), context=ctx)
        for t in texts[1:]:
            main.link_in(llvm.parse_assembly(t.text(), context=ctx))
    except RuntimeError as err:
        raise exception(errc.build, f"linking device images failed: {str(err).strip()}") from None
    linked_text = str(main)
    if "atomicrmw" in linked_text:      # SROA first, so that kernels use their parameters directly
        mpm = llvm.create_new_module_pass_manager()
        mpm.add_sroa_pass()
        mpm.run(main, llvm.create_pass_builder(_target_machine(), llvm.create_pipeline_tuning_options()))
        linked_text = str(main)
    linked = Module.parse(linked_text)
    shapes = {k: kernel_shape(linked, k) for k in kernels if k in linked.functions}
    groups = lower_group_kernels(linked, shapes, sub_group_size)    # hook: work_groups.py (barriers, local memory)
    for k in (k for k in shapes if k not in groups):            # a spir_kernel cannot be called; on the CPU it is a plain function
        fn = linked.functions[k]
        linked.functions[k] = type(fn)(k, fn.header.replace(" spir_kernel ", " spir_func ", 1), fn.body)
    for g in linked.globals_with("sycl-device-global-size"):
        if linked.globals[g].linkage in ("internal", "private"):
            linked.set_linkage(g, "external")     # so the runtime can find a static device global
    accs = {k: accumulators(linked, k, s.params) if s.item is not None and k not in groups else []
            for k, s in shapes.items()}
    text = linked.text() + "".join(group_launcher(s, groups[k], launcher_name(k)) if k in groups else
                                   _launchers(linked, s, accs[k]) for k, s in shapes.items())
    engine, context, key, from_disk = compile_ir(text, "device program")
    program = LinkedProgram(engine, context, shapes, key, from_disk,
                            {k: [a.param for a in found] for k, found in accs.items() if found})
    program.groups = groups
    return program


def compile_ir(text: str, what: str):
    """Verify, optimise and compile IR ``text`` for this CPU, reusing the disk
    cache's object when it has one.  Returns ``(engine, context, key, from_disk)``;
    the caller keeps the context alive (``keep_context``)."""
    machine = _target_machine()
    key = hashlib.sha256("\n".join([text, machine.triple, llvm.get_host_cpu_name(),
                                    llvm.get_host_cpu_features().flatten(), str(_OPT_LEVEL),
                                    "minisycl-jit-1"]).encode()).hexdigest()
    context = llvm.create_context()
    try:
        mod = llvm.parse_assembly(text, context=context)
        mod.triple = machine.triple
        mod.data_layout = str(machine.target_data)
        mod.verify()
    except RuntimeError as err:
        raise exception(errc.build, f"{what} failed to build: {str(err).strip()}") from None
    cache = _DiskCache(key)
    from_disk = cache.has()
    if not from_disk:
        pto = llvm.create_pipeline_tuning_options(speed_level=_OPT_LEVEL)
        pb = llvm.create_pass_builder(machine, pto)
        pb.getModulePassManager().run(mod, pb)
    engine = llvm.create_mcjit_compiler(mod, new_machine())
    engine.set_object_cache(cache.notify, cache.get)
    engine.finalize_object()
    return engine, context, key, from_disk


#: id(owner) -> the LLVM context of its engine's module
_CONTEXTS: dict[int, object] = {}


def keep_context(owner, context) -> None:
    """Keep ``context`` alive until ``owner`` has closed its engine.

    Disposing a context deletes its modules; if Python's cycle collector
    finalised the context before the engine, the engine would delete its module
    a second time.  Held here, a context is released only by ``close_engine``,
    after the engine is gone, whatever order the collector picks."""
    _CONTEXTS[id(owner)] = context


def close_engine(owner) -> None:
    engine = getattr(owner, "engine", None)
    if engine is not None and not engine.closed:
        engine.close()
    owner.engine = None
    _CONTEXTS.pop(id(owner), None)


class _DiskCache:
    """MCJIT object cache: ``<cache dir>/objects/<key>.o``."""

    def __init__(self, key: str):
        d = knobs.cache_dir()
        self.path = os.path.join(d, "objects", key + ".o") if d else None

    def has(self) -> bool:
        return self.path is not None and os.path.isfile(self.path)

    def get(self, module):
        if self.has():
            with open(self.path, "rb") as fh:
                return fh.read()
        return None

    def notify(self, module, data: bytes):
        if self.path is None:
            return
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            tmp = f"{self.path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, self.path)
        except OSError:
            pass            # a read-only or full cache directory only costs speed
