"""lower-to-nvptx: a linked SPIR-style device module made ready for LLVM's NVPTX back end.

The same post-link images that run on the CPU run on an NVIDIA GPU after
this pass (issue 20 point 2); ``runtime/cuda/codegen.py`` then emits PTX with
llvmlite's NVPTX target.  What it does, in order:

1. **Target.**  Triple ``nvptx64-nvidia-cuda`` and NVPTX's data layout.
2. **Address spaces** (SPIR -> NVPTX): 1 global -> 1, 3 local -> 3 (``.shared``,
   aligned to 16 bytes so that neighbouring loads become vector loads),
   2 constant -> 1 (global: constant data written by the host at run time
   cannot live in ``.const``), 4 generic -> 0 (NVPTX's generic space); 0 stays
   0 (allocas: NVPTX's alloca space is 0, its own passes move them to
   ``.local``).  An ``addrspacecast`` that the mapping makes a no-op becomes
   a ``bitcast``.
3. **Calling conventions.**  ``spir_func`` is dropped (NVPTX calls are plain C
   calls); comdats are dropped (NVPTX has none).
4. **Kernels.**  Each ``spir_kernel`` ``K(item, args...)`` becomes the internal
   function ``__minisycl_body.K``, and a ``ptx_kernel`` ``K`` replaces it:
   ``K(i64 r0, i64 r1, i64 r2, args...)`` for a kernel that takes ``id<N>`` or
   ``nd_item<N>`` (``r`` is the global range, unused dimensions 1), ``K(args...)``
   for a single task.  SYCL dimension ``d`` of ``N`` maps to CUDA axis
   ``xyz[N-1-d]`` (the last dimension varies fastest, as in SYCL's linear ids),
   so one image runs any range:
   * ``id<N>``: global id ``ctaid*ntid+tid`` per axis; work-items outside the
     range return at once (the runtime rounds the grid up to whole blocks);
   * ``nd_item<N>``: a work-group is a thread block: local id ``tid``, group
     ``ctaid``, local range ``ntid``, global id ``ctaid*ntid+tid``, global range ``r``.
5. **Math.**  The math NVPTX cannot select (``exp``, ``log``, ``sin``, ``tanh``,
   ``atan2``, ``cbrt``, ``hypot`` ...: the table ``nvptx_math.MATH``) becomes
   calls: with ``libdevice`` to CUDA's libdevice (``__nv_sinf``, ``__nv_sin``
   ...; the runtime links it), otherwise to single-precision implementations
   of our own (``nvptx_math.py`` says how each is computed and how accurate it
   is).  Other math intrinsics (sqrt, fabs, floor, ceil, trunc, round,
   min/max, exp2 on float and half, fma) NVPTX selects itself.
6. **The assert hook.**  ``__minisycl_assert_fail(message)`` (a failed
   ``assert``; the stub in a device vtable slot of a host-only virtual method,
   ``host_only_virtuals.py``) is defined here: it keeps the first message's
   address in ``@__minisycl_assert_message`` (``ir/sycl_names.py``) with one
   compare-and-swap, and the work-item goes on to return as on the CPU.  The
   runtime reads the flag after the kernels (``errc::runtime`` with the
   message, the CUDA context intact).  A ``trap`` would lose the context.
8. **Checks.**  A call of a function the module does not define (``printf``:
   ``print`` is refused as on every device) or of an intrinsic NVPTX cannot
   select is an error naming it: LLVM's NVPTX back end would abort the process.

9. **Work-groups** (issue 19 on the GPU, ``nvptx_groups.py``): local memory
   (addrspace 3) is ``.shared``; every ``__spirv_*`` built-in of the IR
   contract (barriers, sub-group queries, shuffles, broadcasts, votes, group
   reduce/scans) becomes an internal ``alwaysinline`` definition on warps,
   ``shfl.sync``/``vote.sync``/``bar.red`` and a ``.shared`` scratch; a
   ``local T*`` kernel parameter is an ``i64`` byte offset into one ``extern
   .shared`` array the runtime sizes at launch; a ``reducer<T, op>`` parameter
   (read from ``minisycl-kernel-signature``) gets a private accumulator in the
   entry point, combined per work-group, then once atomically into the result.
   A built-in form it does not implement stays declared and is refused by name.

IR contract: the output is NVPTX IR; the kernels' entry points keep their
names.  Tests: ``tests/lit/passes/lower-to-nvptx/``, ``tests/passes/test_lower_to_nvptx.py``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from .ir.items import build_item
from .ir import Module, quote_name, split_operands, split_type
from .ir.sycl_names import ASSERT_FAIL, ASSERT_MESSAGE
from .manager import PassResult
from .nvptx_math import OWN_DECLS, lower_math
from .nvptx_groups import DYNAMIC_SHARED, LANG_TYPES, Builtins, reducer_op
from .work_group_builtins import identity
from .support.diagnostics import UserError
from .support.signature import SignatureError, parse as parse_signature
from .support.ir_contract import SIGNATURE_ATTRIBUTE

__all__ = ["LowerToNVPTX", "lower_to_nvptx", "NVPTXLoweringError", "NVPTX_TRIPLE", "NVPTX_DATALAYOUT",
           "body_name"]

NVPTX_TRIPLE = "nvptx64-nvidia-cuda"
NVPTX_DATALAYOUT = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
_SPACES = {"1": "1", "2": "1", "3": "3", "4": "0"}
_AXES = "xyz"
#: intrinsics NVPTX selects (prefixes of their names)
_SELECTABLE = ("llvm.nvvm.", "llvm.sqrt.", "llvm.fabs.", "llvm.floor.", "llvm.ceil.", "llvm.trunc.", "llvm.round.",
               "llvm.rint.", "llvm.nearbyint.", "llvm.roundeven.", "llvm.minnum.", "llvm.maxnum.", "llvm.minimum.",
               "llvm.maximum.", "llvm.fma.", "llvm.fmuladd.", "llvm.copysign.", "llvm.smax.", "llvm.smin.",
               "llvm.umax.", "llvm.umin.", "llvm.abs.", "llvm.ctpop.", "llvm.ctlz.", "llvm.cttz.", "llvm.bswap.",
               "llvm.bitreverse.", "llvm.fshl.", "llvm.fshr.", "llvm.memcpy.", "llvm.memset.", "llvm.memmove.",
               "llvm.lifetime.", "llvm.assume", "llvm.expect.", "llvm.dbg.", "llvm.sadd.with.overflow.",
               "llvm.uadd.with.overflow.", "llvm.ssub.with.overflow.", "llvm.usub.with.overflow.",
               "llvm.smul.with.overflow.", "llvm.umul.with.overflow.", "llvm.exp2.f32", "llvm.exp2.f16",
               "llvm.invariant.", "llvm.experimental.noalias.scope.decl", "llvm.stacksave", "llvm.stackrestore")


class NVPTXLoweringError(UserError):
    """The module uses something the NVPTX back end cannot compile."""


def body_name(kernel: str) -> str:
    return f"__minisycl_body.{kernel}"


@dataclass
class _Kernel:
    name: str
    item: str | None        # "id", "nd_item" or None
    dims: int
    item_type: str
    params: list[str]
    reducers: dict = field(default_factory=dict)    # parameter index -> (LLVM type, combining operation)


def _reducers(module: Module, fn) -> dict[int, tuple[str, str]]:
    """The ``reducer<T, op>`` parameters of kernel ``fn`` (index among the non-item
    parameters), from its ``minisycl-kernel-signature`` (``passes/support/signature.py``)."""
    signature = module.function_attributes(fn).get(SIGNATURE_ATTRIBUTE) or ""
    if "reducer<" not in signature:
        return {}
    try:
        args = parse_signature(signature.strip('"')).args
    except SignatureError:
        return {}               # (the build refuses such a kernel: postlink/build.py)
    return {i: reducer_op(p.op, p.name) for i, p in enumerate(args) if p.kind == "reducer" and p.name in LANG_TYPES}


def _kernel_shape(module: Module, fn) -> _Kernel:
    types = [split_type(op)[0] for op in split_operands(fn.params[1:-1])]
    first = types[0] if types else ""
    for kind in ("nd_item", "id"):
        prefix = f'%"class.sycl::_V1::{kind}.'
        if first.startswith(prefix):
            return _Kernel(fn.name, kind, int(first[len(prefix):-1]), first, types[1:], _reducers(module, fn))
    return _Kernel(fn.name, None, 0, "", types, _reducers(module, fn))


def _sreg(reg: str, axis: str) -> str:
    return f"llvm.nvvm.read.ptx.sreg.{reg}.{axis}"


def _wrapper(k: _Kernel, groups: Builtins) -> tuple[str, set[str]]:
    """The ``ptx_kernel`` entry point of kernel ``k`` and the intrinsics it calls.

    A ``local T*`` parameter is passed as an ``i64`` byte offset into the one
    ``extern .shared`` array (``DYNAMIC_SHARED``; the runtime sizes it at launch);
    a ``reducer<T, op>`` parameter as the address of the result: the body gets a
    private accumulator at the identity, and after it the work-group combines the
    accumulators (``Builtins.wg_algorithm``) and its first work-item combines that
    into the result atomically (``Builtins.atomic_combine``)."""
    used: set[str] = set()
    local = [i for i, t in enumerate(k.params) if t.replace(" ", "") == "ptraddrspace(3)"]
    params = ([f"i64 %r{d}" for d in range(3)] if k.item else []) + [
        f"{'i64' if i in local else t} %a{i}" for i, t in enumerate(k.params)]
    lines = [f"define ptx_kernel void @{quote_name(k.name)}({', '.join(params)}) {{", "entry:"]
    args = []
    for i, t in enumerate(k.params):
        if i in local:
            lines.append(f"  %l{i} = getelementptr i8, ptr addrspace(3) @{quote_name(DYNAMIC_SHARED)}, i64 %a{i}")
            args.append(f"{t} %l{i}")
        elif i in k.reducers:
            ty, op = k.reducers[i]
            lines += [f"  %red{i} = alloca {ty}, align 8", f"  store {ty} {identity(op, ty)}, ptr %red{i}"]
            args.append(f"ptr %red{i}")
        else:
            args.append(f"{t} %a{i}")
    after = "join" if k.reducers else "done"
    if k.item:
        n = k.dims
        for d in range(n):
            axis = _AXES[n - 1 - d]
            for reg in ("tid", "ntid", "ctaid"):
                used.add(_sreg(reg, axis))
                lines.append(f"  %{reg}{d}.32 = call i32 @{_sreg(reg, axis)}()")
                lines.append(f"  %{reg}{d} = zext i32 %{reg}{d}.32 to i64")
            lines.append(f"  %base{d} = mul i64 %ctaid{d}, %ntid{d}")
            lines.append(f"  %gid{d} = add i64 %base{d}, %tid{d}")

        if k.item == "id":
            conds = []
            for d in range(n):
                lines.append(f"  %in{d} = icmp ult i64 %gid{d}, %r{d}")
                conds.append(f"%in{d}")
            cond = conds[0]
            for d in range(1, n):
                lines.append(f"  %inall{d} = and i1 {cond}, {conds[d]}")
                cond = f"%inall{d}"
            lines += [f"  br i1 {cond}, label %run, label %{after}", "run:"]
            lines += build_item(k.item_type, [[f"%gid{d}" for d in range(n)]], "it", "item")
        else:
            lines += build_item(k.item_type, [[f"%{v}{d}" for d in range(n)] for v in ("gid", "tid", "ctaid", "r", "ntid")],
                                "it", "item")
            lines += ["  br label %run", "run:"]
        args.insert(0, f"{k.item_type} %item")
    else:
        lines += ["  br label %run", "run:"]
    lines += [f"  call void @{quote_name(body_name(k.name))}({', '.join(args)})", f"  br label %{after}"]
    if k.reducers:
        # every work-item of the block (those outside an id range too) takes part
        lines.append("join:")
        for i, (ty, op) in k.reducers.items():
            lines += [f"  %rv{i} = load {ty}, ptr %red{i}",
                      f"  %rr{i} = call {ty} {groups.wg_algorithm(0, op, ty)}({ty} %rv{i})"]
        lines += [f"  %lt = call i32 {groups.ltid()}()", "  %lead = icmp eq i32 %lt, 0",
                  "  br i1 %lead, label %flush, label %done", "flush:"]
        for i, (ty, op) in k.reducers.items():
            lines.append(f"  call void {groups.atomic_combine(op, ty)}(ptr %a{i}, {ty} %rr{i})")
        lines.append("  br label %done")
    lines += ["done:", "  ret void", "}"]
    return "\n".join(lines) + "\n", used


_ADDRSPACE = re.compile(r"addrspace\((\d+)\)")
_NOOP_CAST = re.compile(r"addrspacecast \((ptr(?: addrspace\(\d+\))?) ([^()]*?) to (ptr(?: addrspace\(\d+\))?)\)"
                        r"|addrspacecast (ptr(?: addrspace\(\d+\))?) (\S+) to (ptr(?: addrspace\(\d+\))?)")
_CALLED = re.compile(r"\bcall\b[^@\n]*?(@[-\w.$]+|@\"[^\"]*\")\(")


#: work-group memory (``.shared``) aligned to 16 bytes, so that LLVM's NVPTX
#: back end merges neighbouring loads into ``ld.shared.v4`` (the tiled matrix
#: product reads a row of its tile four floats at a time: 20 loads per 16
#: FMAs instead of 32)
_SHARED_ALIGN = re.compile(r"(?m)^(@[^\n=]+= (?:internal |private )?addrspace\(3\) global [^\n]*?, align )(\d+)")


def _map_spaces(text: str) -> str:
    text = _ADDRSPACE.sub(lambda m: "addrspace(@@%s)" % _SPACES.get(m.group(1), m.group(1)), text)
    text = text.replace(" addrspace(@@0)", "").replace("addrspace(@@0)", "").replace("addrspace(@@", "addrspace(")

    def cast(m):
        if m.group(1) is not None:
            src, val, dst = m.group(1), m.group(2), m.group(3)
            return f"bitcast ({src} {val} to {dst})" if src == dst else m.group(0)
        src, val, dst = m.group(4), m.group(5), m.group(6)
        return f"bitcast {src} {val} to {dst}" if src == dst else m.group(0)
    return _NOOP_CAST.sub(cast, text)


def lower_to_nvptx(module: Module, libdevice: bool = False) -> None:
    """Steps 1-7 on ``module`` (in place)."""
    _define_assert_hook(module)
    kernels = [_kernel_shape(module, f) for f in module.functions.values() if not f.is_declaration and f.is_kernel]
    groups = Builtins()
    groups.define(module)                   # step 7: the __spirv_* built-ins (nvptx_groups.py)
    for k in kernels:
        fn = module.functions[k.name]
        rest = fn.header[fn.header.index("@" + quote_name(k.name) + "(") + len(quote_name(k.name)) + 1:]
        header = f"define internal void @{quote_name(body_name(k.name))}{rest}"
        module.functions[k.name] = type(fn)(k.name, header, fn.body)
    needed: set[str] = set()
    wrappers = []
    for k in kernels:
        w, used = _wrapper(k, groups)
        wrappers.append(w)
        needed |= used
    if any(t.replace(" ", "") == "ptraddrspace(3)" for k in kernels for t in k.params):
        wrappers.insert(0, f"@{quote_name(DYNAMIC_SHARED)} = external addrspace(3) global [0 x i8], align 16\n")
    text = module.text() + "\n" + "\n".join(wrappers)
    text = re.sub(r'(?m)^target triple = .*$', f'target triple = "{NVPTX_TRIPLE}"', text)
    text = re.sub(r'(?m)^target datalayout = .*$', f'target datalayout = "{NVPTX_DATALAYOUT}"', text)
    text = re.sub(r"(?m)^\$\S+ = comdat \w+\n", "", text)
    text = re.sub(r",? comdat(\(\$[^)\s]*\))?(?=[\s,{])", "", text)
    text = text.replace(" spir_func ", " ").replace(" spir_kernel ", " ")
    text = _map_spaces(text)
    text = _SHARED_ALIGN.sub(lambda m: m.group(1) + str(max(int(m.group(2)), 16)), text)
    text, extra = lower_math(text, libdevice)
    for e in extra:
        for name in re.findall(r"@(llvm\.[\w.]+)\(", e):
            needed.add(name)
    declared = set(re.findall(r"(?m)^declare [^@\n]*@([-\w.$]+)\(", text))
    for name in needed:
        if name.startswith("llvm.nvvm.read.ptx.sreg."):
            groups.sreg(name[len("llvm.nvvm.read.ptx.sreg."):])
    decls = []
    for name in sorted(needed - declared):
        if name in OWN_DECLS and name not in groups.decls:
            decls.append(OWN_DECLS[name])
    new = Module.parse(text + "\n" + "\n".join(extra + decls) + "\n" + groups.text(declared | set(
        re.findall(r"^declare [^@\n]*@([-\w.$]+)\(", "\n".join(decls), re.M))), module.name)
    _check_calls(new, libdevice)
    module.take_contents_of(new)


def _define_assert_hook(module: Module) -> None:
    """Step 6: the assert hook keeps the first message's address in a flag the
    runtime reads (``ASSERT_MESSAGE``, a visible global of the module)."""
    hook = module.functions.get(ASSERT_FAIL)
    if hook is None or not hook.is_declaration:
        return
    module.add_entities(
        f"@{ASSERT_MESSAGE} = addrspace(1) global i64 0, align 8\n"
        f"define internal void @{ASSERT_FAIL}(ptr %message) {{\n"
        f"entry:\n"
        f"  %p = ptrtoint ptr %message to i64\n"
        f"  %first = cmpxchg ptr addrspace(1) @{ASSERT_MESSAGE}, i64 0, i64 %p monotonic monotonic\n"
        f"  ret void\n}}\n")


def _check_calls(module: Module, libdevice: bool) -> None:
    """Step 7: every called declaration is a selectable intrinsic or libdevice's."""
    bad = []
    bodies = "".join(f.body for f in module.functions.values() if f.body) + "".join(
        g.line for g in module.globals.values())
    for fn in module.functions.values():
        if not fn.is_declaration:
            continue
        name = fn.name
        if "@" + quote_name(name) not in bodies:
            continue                    # declared, never used: nothing to link
        if name.startswith("llvm."):
            if not name.startswith(_SELECTABLE):
                bad.append(f"'{name}' (an LLVM intrinsic the NVPTX back end cannot compile)")
        elif name.startswith("__nv_") and libdevice:
            continue
        elif name.startswith("_Z") and "__spirv_" in name:
            bad.append(f"'{name}' (a SPIR-V built-in this lowering does not map yet)")
        elif name in ("printf", "puts", "putchar") or "print" in name:
            bad.append(f"'{name}' (print is refused in device code on every device)")
        else:
            bad.append(f"'{name}' (not defined in the device program: a GPU program links nothing else)")
    if bad:
        raise NVPTXLoweringError("cannot compile for NVPTX: calls " + "; ".join(bad))


@dataclass
class LowerToNVPTX:
    """Make a linked device module NVPTX IR (options: ``libdevice``: math through
    CUDA's libdevice, which the caller links; see the module docstring)."""

    name: ClassVar[str] = "lower-to-nvptx"
    libdevice: bool = field(default=False, metadata={"help": "math through CUDA's libdevice (the caller links it)"})

    def run(self, module: Module, am) -> PassResult:
        lower_to_nvptx(module, self.libdevice)
        return PassResult.NONE
