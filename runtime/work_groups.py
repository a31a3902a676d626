"""Work-group kernels at run time: lowering at link time, launchers over groups,
work-group memory and the launch-time checks.

A kernel that ``lower-work-groups`` (``passes/work_item_loops.py``) rewrote
runs one work-group per call of its group function.  Its launcher (same
signature as every launcher, ``void (ptr args, i64 begin, i64 end, ptr geom)``)
loops over *group* indices ``[begin, end)``, so ``native.run_range`` spreads
groups, not work-items, over the cores.  Per piece (one thread) it puts the
work-group memory - static variables first, then each ``local T*`` argument,
each at a 64-byte boundary - in one buffer on that thread's stack and reuses
it for every group of the piece.

``geom`` of a group launch (int64s): global range [0..2], local range [3..5],
groups per dimension [6..8], work-group memory bytes [9], sub-group size
[10], address of the error record [11] (``{status, group}``: the first group
whose work-items reached different barriers; the other pieces stop early).

Launch-time checks: ``reqd_work_group_size`` (``errc::nd_range``), work-group
memory against ``device.local_mem_size`` and ``local_memory`` arguments
against their parameter (``errc::invalid``); a ``reqd_sub_group_size`` the
device does not list is refused earlier, when the image is chosen
(``program.missing_requirements``: ``errc::kernel_not_supported``).
"""
from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass

import numpy as np

from ..passes import parse_pipeline
from ..passes.ir import Module, quote_name
from ..passes.manager import PassManager
from ..passes.support.diagnostics import UserError
from .device import CPU_MAX_WORK_GROUP_SIZE
from .errors import Refused, errc, exception
from .native import run_range
from .reductions import accumulator_lines, flush_lines
from .validate import require_dtype

__all__ = ["GroupKernel", "local_memory", "lower_group_kernels", "group_launcher", "launch", "pack_local",
           "C_DTYPES", "LOCAL_ALIGN"]

LOCAL_ALIGN = 64
#: C type names of the kernel language -> NumPy dtypes
C_DTYPES = {"bool": np.bool_, "char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
            "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64, "half": np.float16,
            "float": np.float32, "double": np.float64}


class local_memory:  # noqa: N801 - SYCL-style name
    """Work-group memory for a ``local T*`` kernel parameter, sized at launch
    (SYCL's ``local_accessor<T>(count, handler)``): ``count`` elements of ``dtype``
    per work-group."""

    def __init__(self, count: int, dtype=np.float32):
        if not isinstance(count, (int, np.integer)) or isinstance(count, bool) or count < 0:
            raise exception(errc.invalid, f"local_memory needs a non-negative element count, got {count!r}")
        self.dtype = require_dtype(dtype, "local_memory's element type")
        self.count = int(count)

    @property
    def nbytes(self) -> int:
        return self.count * self.dtype.itemsize

    def __repr__(self):
        return f"local_memory({self.count}, {self.dtype})"


def pack_local(ty: str, value) -> int:
    """The slot of a ``local T*`` argument: its size in bytes (``launch`` turns sizes
    into offsets in the work-group buffer); ``Refused`` for a wrong value."""
    if not isinstance(value, local_memory):
        raise Refused(lambda where: f"{where} must be a sycl.local_memory, got {type(value).__name__}")
    elem = ty[len("local "):-1].strip()
    want = C_DTYPES.get(elem)
    if want is not None and np.dtype(want) != value.dtype:
        raise Refused(lambda where: f"{where}: local_memory of {value.dtype} given for a local {elem}*")
    return value.nbytes


@dataclass
class GroupKernel:
    """What the runtime knows of a lowered kernel."""
    function: str              # its group function (one call runs one work-group)
    points: list[str]          # descriptions of exchange points 1..
    static_local: int          # bytes of static work-group memory
    sub_group_size: int        # compiled-in S, or 0 (given at launch)
    local_params: list[int]    # indices (among the non-item parameters) of local T* parameters

    def point(self, j: int) -> str:
        return "the end of the kernel" if j == 0 else (self.points[j - 1] if j <= len(self.points) else f"point {j}")


def lower_group_kernels(linked: Module, shapes: dict, sub_group_size: int) -> dict[str, GroupKernel]:
    """Lower the kernels of ``linked`` that need it (in place); their facts."""
    pipeline = parse_pipeline(f"lower-work-groups{{sub-group-size={int(sub_group_size)}}}")
    try:
        lowered = PassManager(pipeline).run(linked).work_groups
    except UserError as err:            # a kernel the CPU lowering cannot compile (work_item_loops.py)
        raise exception(errc.build, f"building for the CPU: {err}") from None
    out = {}
    for k, info in lowered.items():
        local = [i for i, t in enumerate(shapes[k].params) if t.replace(" ", "") == "ptraddrspace(3)"]
        out[k] = GroupKernel(info.function, info.points, info.static_local, info.sub_group_size, local)
    return out


def argument_lines(shape, i: int, ty: str) -> list[str]:
    """Entry-block lines of a launcher that load argument ``i`` (of IR type ``ty``) as
    ``%arg<i>`` from its slot; a struct by value from the address its slot holds
    (``passes/support/signature.py``)."""
    lines = [f"  %slot{i} = getelementptr i64, ptr %args, i64 {i}"]
    if i in shape.structs:
        return lines + [f"  %sp{i} = load ptr, ptr %slot{i}, align 8", f"  %arg{i} = load {ty}, ptr %sp{i}, align 8"]
    return lines + [f"  %arg{i} = load {ty}, ptr %slot{i}, align 8"]


def group_launcher(shape, info: GroupKernel, name: str, reducers=None) -> str:
    """LLVM IR of the launcher ``name`` of a lowered kernel (see the module docstring);
    ``reducers``: index -> (T, op) of its ``reducer<T, op>`` parameters (``reductions.py``)."""
    reducers = reducers or {}
    L = [f"define void @{quote_name(name)}(ptr %args, i64 %begin, i64 %end, ptr %geom) {{", "entry:"]
    g = lambda i: [f"  %gp{i} = getelementptr i64, ptr %geom, i64 {i}",            # noqa: E731
                   f"  %g{i} = load i64, ptr %gp{i}, align 8"]
    for i in range(11):
        L += g(i)
    L += ["  %errp = getelementptr i64, ptr %geom, i64 11", "  %err = load ptr, ptr %errp, align 8",
          "  %lbuf = alloca i8, i64 %g9, align 64", "  %rec = alloca [11 x i64], align 16"]
    for d in range(3):
        L += [f"  %rg{d} = getelementptr i64, ptr %rec, i64 {3 + d}", f"  store i64 %g{d}, ptr %rg{d}",
              f"  %rl{d} = getelementptr i64, ptr %rec, i64 {6 + d}", f"  store i64 %g{3 + d}, ptr %rl{d}"]
    L += ["  %rs = getelementptr i64, ptr %rec, i64 10", "  store i64 %g10, ptr %rs"]
    call = ["ptr %rec", "ptr %lbuf"]
    for i, ty in enumerate(shape.params):
        if i in info.local_params:
            L += [f"  %slot{i} = getelementptr i64, ptr %args, i64 {i}",
                  f"  %off{i} = load i64, ptr %slot{i}, align 8",
                  f"  %lp{i} = getelementptr i8, ptr %lbuf, i64 %off{i}",
                  f"  %arg{i} = addrspacecast ptr %lp{i} to ptr addrspace(3)"]
        else:
            L += argument_lines(shape, i, ty)
        if i in reducers:
            L += accumulator_lines(i, *reducers[i])
        call.append(f"ptr %red{i}" if i in reducers else f"{ty} %arg{i}")
    L += ["  br label %loop", "loop:", "  %grp = phi i64 [ %begin, %entry ], [ %next, %ok ]"]
    # the group's id: row-major over the group counts (last dimension fastest)
    rest = "%grp"
    for d in range(shape.dims - 1, -1, -1):
        if d == 0:
            L.append(f"  %id{d} = add i64 {rest}, 0")
        else:
            L += [f"  %id{d} = urem i64 {rest}, %g{6 + d}", f"  %q{d} = udiv i64 {rest}, %g{6 + d}"]
            rest = f"%q{d}"
        L += [f"  %ri{d} = getelementptr i64, ptr %rec, i64 {d}", f"  store i64 %id{d}, ptr %ri{d}"]
    L += [f"  %st = call i64 @{quote_name(info.function)}({', '.join(call)})",
          "  %bad = icmp ne i64 %st, 0", "  br i1 %bad, label %fail, label %ok",
          "ok:", "  %next = add i64 %grp, 1", "  %more = icmp ult i64 %next, %end",
          "  %other = load atomic i64, ptr %err monotonic, align 8", "  %quiet = icmp eq i64 %other, 0",
          "  %go = and i1 %more, %quiet", "  br i1 %go, label %loop, label %exit",
          "fail:", "  %x = cmpxchg ptr %err, i64 0, i64 %st seq_cst seq_cst",
          "  %won = extractvalue { i64, i1 } %x, 1", "  br i1 %won, label %where, label %exit",
          "where:", "  %gp = getelementptr i64, ptr %err, i64 1", "  store i64 %grp, ptr %gp", "  br label %exit",
          "exit:"] + [line for i, r in reducers.items() for line in flush_lines(i, *r, f"%arg{i}")] + ["  ret void", "}"]
    return "\n".join(L) + "\n"


def check_local_memory(k, device, static: int, dynamic: int, limit: int) -> None:
    """``errc::invalid`` naming the device's limit (``local_mem_size``) when a launch of
    ``k`` needs more work-group memory than it has: the same error on every device."""
    if static + dynamic > limit:
        raise exception(errc.invalid, f"kernel '{k.name}' needs {static + dynamic} bytes of work-group memory "
                                      f"({static} static, {dynamic} from local_memory arguments) but device "
                                      f"{device.name} has {limit} (device.local_mem_size)")


def check_local_size(k, geometry, device) -> None:
    """``reqd_work_group_size``: an nd_range launch's local range must be the one the
    kernel requires (``errc::nd_range``)."""
    want = k.required_work_group_size(device)
    if want is not None:
        got = list(geometry[3:3 + k.dims])
        if got != list(want[:len(got)]):
            raise exception(errc.nd_range, f"The specified local size {{{', '.join(map(str, got))}}} doesn't "
                                           f"match the required work-group size specified in the program source "
                                           f"{{{', '.join(map(str, want))}}}")


#: a group launch's geometry (see the module docstring) and, after it, its error record
_GEOMETRY = ctypes.c_int64 * 14
_SIX, _TWELVE = struct.Struct("6q"), struct.Struct("12q")


def launch(launcher: int, info: GroupKernel, k, slots, geometry, device) -> None:
    """Run a lowered kernel (``launcher``: the address of its launcher): one call of
    its group function per work-group."""
    dims = k.dims
    g0, g1, g2, l0, l1, l2 = _SIX.unpack_from(geometry)
    if l0 * l1 * l2 > CPU_MAX_WORK_GROUP_SIZE:
        raise exception(errc.nd_range, f"kernel '{k.name}': a work-group of {l0 * l1 * l2} work-items exceeds "
                                       f"{CPU_MAX_WORK_GROUP_SIZE}, the max_work_group_size of {device.name}")
    n0, n1, n2 = g0 // l0, (g1 // l1 if dims > 1 else 1), (g2 // l2 if dims > 2 else 1)
    # work-group memory: static first, then each local T* argument at a 64-byte boundary
    offset = info.static_local
    args = slots
    if info.local_params:
        args = (ctypes.c_uint64 * len(slots))(*slots)
        for i in info.local_params:
            offset = (offset + LOCAL_ALIGN - 1) // LOCAL_ALIGN * LOCAL_ALIGN
            size = int(slots[i])
            args[i] = offset
            offset += size
    check_local_memory(k, device, info.static_local, offset - info.static_local, device.config.local_mem_size)
    S = info.sub_group_size or (device.sub_group_sizes[0] if device.sub_group_sizes else 1)
    geom = _GEOMETRY()                              # (pack_into: ~4x cheaper than _GEOMETRY(values))
    _TWELVE.pack_into(geom, 0, g0, g1, g2, l0, l1, l2, n0, n1, n2, max(offset, 1), S,
                      ctypes.addressof(geom) + 96)  # the error record: geom[12], geom[13]
    run_range(launcher, args, n0 * n1 * n2, geom, k.name, grain=1)
    status = geom[12]
    if status:
        groups = (n0, n1, n2)
        code = status - 1
        a, b = code >> 16, code & 0xFFFF
        grp = geom[13]
        ids = []
        for d in range(dims - 1, -1, -1):
            ids.append(grp % groups[d])
            grp //= groups[d]
        raise exception(errc.runtime, f"kernel '{k.name}': the work-items of work-group "
                                      f"({', '.join(map(str, reversed(ids)))}) did not all reach the same barrier: "
                                      f"some reached {info.point(a)}, others {info.point(b)}; the kernel was stopped")
