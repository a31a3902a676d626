"""Link device images, wrap kernels in native loops, and JIT them for this CPU.

1. The images are read back and linked as for every back end (``image_link.py``:
   each image read by LLVM in a child process, later images declaring what
   earlier ones define, device globals made external).
2. Every kernel gets a launcher:
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

from dataclasses import dataclass

from ..passes import parse_pipeline
from ..passes.ir import build_item, Module, kernel_signature, module_text, run_sroa, split_operands, split_type
from ..passes.support.signature import SignatureError
from ..passes.manager import PassManager
from .engine import EXITING, close_engine, compile_ir, keep_context, shared_machine, with_stack_probes
from .errors import errc, exception
from .image_link import check_signatures, expose_device_globals, link_images, read_bundle_bitcode
from . import assertions  # noqa: F401 - registers the assert hook before any kernel is compiled
from .packed_args import PACK_ABOVE, pack_kernel
from .reductions import accumulator_lines, combine_functions, flush_lines
from .spec_constants import SPEC_GLOBAL, spec_global
from .work_groups import argument_lines, group_launcher, lower_group_kernels

__all__ = ["LinkedProgram", "link_and_jit", "launcher_name", "read_bundle_bitcode", "check_signatures",
           "keep_if_code_escapes"]

#: the registered pass that finds atomic updates a launcher can aggregate and
#: makes each such kernel's copy that updates private accumulators
_AGGREGATE = "aggregate-atomics"


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
    structs: frozenset = frozenset()    # indices (among ``params``) of structs by value: their slot holds an address
    #: the ``ptr`` of a buffer of specialization constant values to pass for the last
    #: parameter (a ``kernel_handler``) instead of its slot: the launcher of a kernel
    #: compiled for a set of values, whose loads from it LLVM folds
    spec_buffer: str | None = None


def kernel_shape(module: Module, name: str) -> KernelShape:
    fn = module.functions[name]
    types = [split_type(op)[0] for op in split_operands(fn.params[1:-1])]
    first = types[0] if types else ""
    for kind in ("nd_item", "id"):
        prefix = f'%"class.sycl::_V1::{kind}.'
        if first.startswith(prefix):
            return KernelShape(name, kind, int(first[len(prefix):-1]), first, types[1:])
    return KernelShape(name, None, 0, "", types)


def _launcher_ir(shape: KernelShape, accs, private: str | None, reducers=None, packed: bool = False) -> str:
    """LLVM IR of the launcher of one kernel: its native loop, or, when the kernel
    only updates some parameters atomically (``accs``, with ``private`` the
    kernel's copy that updates private accumulators: the ``aggregate-atomics``
    pass), a choice between that loop and one that aggregates the updates.
    ``packed``: the kernel loads its own arguments from the slots (``packed_args.py``)."""
    if not accs:
        return _loop_ir(shape, launcher_name(shape.name), reducers=reducers, packed=packed)
    plain, agg = f"__minisycl_each.{shape.name}", f"__minisycl_agg.{shape.name}"
    return (_loop_ir(shape, plain, linkage="internal ", reducers=reducers)
            + _loop_ir(shape, agg, callee=private, accs=accs, linkage="internal ", reducers=reducers)
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


def _loop_ir(shape: KernelShape, name: str, callee: str | None = None, accs=None, linkage: str = "",
             reducers=None, packed: bool = False) -> str:
    """LLVM IR of the native loop around one kernel (``callee``, by default the
    kernel itself), with a private accumulator for each of ``accs`` (index among
    the non-item parameters -> accumulator) and for each ``reducer<T, op>``
    parameter of ``reducers`` (index -> (T, op); ``reductions.py``)."""
    lines = [f"define {linkage}void @{name}(ptr %args, i64 %begin, i64 %end, ptr %geom) {{", "entry:"]
    call_args = []
    private = accs or {}
    reducers = reducers or {}
    for i, ty in enumerate(() if packed else shape.params):
        lines += argument_lines(shape, i, ty)
        if i in private:
            a = private[i]
            lines += [f"  %acc{i} = alloca {a.type}", f"  store {a.type} {a.identity}, ptr %acc{i}"]
        if i in reducers:
            lines += accumulator_lines(i, *reducers[i])
        if shape.spec_buffer is not None and i == len(shape.params) - 1:
            call_args.append(f"ptr {shape.spec_buffer}")
            continue
        call_args.append(f"ptr %acc{i}" if i in private else f"ptr %red{i}" if i in reducers else f"{ty} %arg{i}")
    if packed:
        call_args.append("ptr %args")
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

        dims = range(n)
        if shape.item == "id":
            lines += build_item(shape.item_type, [[f"%i{d}" for d in dims]], "it", "item")
        else:
            for d in dims:
                lines.append(f"  %li{d} = urem i64 %i{d}, %l{d}")
                lines.append(f"  %gr{d} = udiv i64 %i{d}, %l{d}")
            lines += build_item(shape.item_type, [[f"%{v}{d}" for d in dims] for v in ("i", "li", "gr", "g", "l")],
                                "it", "item")
        call_args.insert(0, f"{shape.item_type} %item")
    lines += [f"  call spir_func void @{callee or shape.name}({', '.join(call_args)})",
              "  %next = add i64 %lin, 1",
              "  %done = icmp uge i64 %next, %end",
              "  br i1 %done, label %exit, label %loop",
              "exit:"]
    for i, a in private.items():
        lines += [f"  %accv{i} = load {a.type}, ptr %acc{i}",
                  f"  %flush{i} = atomicrmw {a.op} ptr %arg{i}, {a.type} %accv{i}{a.ordering}"]
    for i, (elem, op) in reducers.items():
        lines += flush_lines(i, elem, op, f"%arg{i}")
    lines += ["  ret void", "}"]
    return "\n".join(lines) + "\n"


class LinkedProgram:
    """Linked, JIT-compiled images: kernel launchers and global addresses."""

    def __init__(self, engine, context, shapes: dict[str, KernelShape], key: str, from_disk: bool,
                 aggregated: dict[str, list[int]]):
        self.engine, self.shapes, self.key, self.from_disk = engine, shapes, key, from_disk
        #: kernel -> indices (among the non-item parameters) of atomically updated parameters
        #: whose updates its launcher aggregates (the ``aggregate-atomics`` pass)
        self.aggregated = aggregated
        #: kernel -> GroupKernel, for kernels that run a work-group per call (work_groups.py)
        self.groups = {}
        keep_context(self, context)
        self._launchers = {}

    def __del__(self, _close=close_engine, _exiting=EXITING):     # (defaults: the module may be gone at exit)
        if not _exiting.now:
            _close(self)

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


def link_and_jit(image_bitcodes: list[bytes], kernels: list[str], names: list[str] | None = None,
                 sub_group_size: int = 0, signatures: dict | None = None, spec: bytes | None = None) -> LinkedProgram:
    """Steps 1-3 for the images (the first holds the kernels); ``names`` name
    them in errors; ``sub_group_size``: the device's default, for work-group kernels;
    ``signatures``: kernel -> the ``Signature`` its arguments are packed by (by
    default, what its IR says: ``kernel_signature``); ``spec``: the buffer of
    specialization constant values to compile the kernels that take a
    ``kernel_handler`` with (a constant global their launchers pass them, so that
    LLVM folds the values in: a specialised kernel)."""
    names = names or [f"device image {i + 1}" for i in range(len(image_bitcodes))]
    linked_text, aggregating = _linked_text(image_bitcodes, names)
    linked = Module.parse(linked_text)
    present = [k for k in kernels if k in linked.functions]
    sigs = _signatures(linked, present, signatures)
    check_signatures(linked, {k: sigs[k] for k in present})
    aggregated = _aggregate_atomics(linked) if aggregating else {}
    shapes, spec_text = _shapes(linked, present, sigs, spec)
    reducers = {k: {i: (p.name, p.op) for i, p in enumerate(sigs[k].args) if p.kind == "reducer"}
                for k in shapes}     # reductions.py
    groups = lower_group_kernels(linked, shapes, sub_group_size)    # hook: work_groups.py (barriers, local memory)
    for k in (k for k in shapes if k not in groups):            # a spir_kernel cannot be called; on the CPU it is a plain function
        fn = linked.functions[k]
        linked.functions[k] = type(fn)(k, fn.header.replace(" spir_kernel ", " spir_func ", 1), fn.body)
    with_stack_probes(linked)
    expose_device_globals(linked)
    text, accs = _with_launchers(linked, shapes, groups, aggregated, reducers)
    text += spec_text
    engine, context, key, from_disk = compile_ir(text, "device program")
    program = LinkedProgram(engine, context, shapes, key, from_disk,
                            {k: list(found) for k, found in accs.items() if found})
    program.groups = groups
    keep_if_code_escapes(program, linked)
    return program


def _linked_text(image_bitcodes: list[bytes], names: list[str]) -> tuple[str, bool]:
    """Step 1: the images read and linked (``image_link.link_images``), as text
    (after SROA when a kernel has atomics to aggregate), and whether it has."""
    aggregating = False

    def sroa_if_atomic(main, text: str) -> str:
        nonlocal aggregating
        aggregating = "atomicrmw" in text
        if aggregating:                 # SROA first, so that kernels use their parameters directly
            run_sroa(main, shared_machine())
            text = module_text(main)
        return text
    return link_images(image_bitcodes, names, sroa_if_atomic), aggregating


def _signatures(linked: Module, present: list[str], signatures: dict | None) -> dict:
    """Kernel -> the ``Signature`` its arguments are packed by (given, or its IR's)."""
    sigs = dict(signatures or {})
    for k in present:
        if k not in sigs:
            try:
                sigs[k] = kernel_signature(linked, k)
            except SignatureError as err:
                raise exception(errc.invalid, f"kernel '{k}' cannot be launched: {err}") from None
    return sigs


def _shapes(linked: Module, present: list[str], sigs: dict, spec: bytes | None) -> tuple[dict, str]:
    """Kernel -> its ``kernel_shape``, and the global of the specialization
    constants' values (``spec``; empty without)."""
    shapes = {}
    for k in present:
        shape = kernel_shape(linked, k)
        shape.structs = frozenset(i for i, p in enumerate(sigs[k].args) if p.kind == "struct")
        shapes[k] = shape
    spec_text = ""
    if spec is not None:
        spec_text = spec_global(spec)
        for k, s in shapes.items():
            if sigs[k].handler and s.params and s.params[-1] == "ptr":
                s.spec_buffer = f"@{SPEC_GLOBAL}"
    return shapes, spec_text


def _with_launchers(linked: Module, shapes: dict, groups: dict, aggregated: dict, reducers: dict) -> tuple[str, dict]:
    """The program's IR: ``linked`` with a launcher for each kernel; and, for
    kernels launched over a range, index among the non-item parameters -> accumulator."""
    accs = {k: {a.param - 1: a for a in aggregated[k].accumulators}
            if k in aggregated and s.item is not None and k not in groups else {} for k, s in shapes.items()}
    # many parameters: the kernel loads them itself (a call of thousands of arguments costs LLVM quadratic time)
    packed = {k for k, s in shapes.items() if len(s.params) > PACK_ABOVE and k not in groups and not accs[k]
              and not reducers[k] and not s.structs and s.spec_buffer is None and pack_kernel(linked, k, s.item is not None)}
    text = linked.text() + "".join(group_launcher(s, groups[k], launcher_name(k), reducers[k]) if k in groups else
                                   _launcher_ir(s, accs[k], aggregated[k].copy if accs[k] else None, reducers[k],
                                                k in packed)
                                   for k, s in shapes.items())
    text += combine_functions({r for found in reducers.values() for r in found.values()}, set(linked.functions))
    return text, accs


def keep_if_code_escapes(owner, module: Module) -> None:
    """Keep ``owner`` (what holds the engine of ``module``'s code) for the process
    when that code has vtables (``_PINNED``)."""
    if any(name.startswith("_ZTV") and not g.is_declaration for name, g in module.globals.items()):
        _PINNED.append(owner)


#: Programs with vtables, kept for the life of the process: a kernel (or host function)
#: that constructs an object writes its vtable's address into USM memory, where any
#: later kernel (of any program: a reload of the bundle, say) may call through it, and
#: nothing can tell when the last such object is gone.  Every other program's code lives as long as a Python
#: object reaches it (its ``program``, a ``kernel``, a queue's or graph's cached launch).
_PINNED: list[LinkedProgram] = []


def _aggregate_atomics(linked: Module) -> dict:
    """Run the ``aggregate-atomics`` pass on ``linked``: kernel -> what it
    aggregates (``Aggregation``: the kernel's private copy and its accumulators,
    parameter indices counting every parameter)."""
    return PassManager(parse_pipeline(_AGGREGATE)).run(linked).aggregated_atomics
