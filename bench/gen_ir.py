"""Generate large single-source modules (host + device code) in DPC++'s IR style.

Each group holds one kernel and nine other functions: a chain of three device
helpers (one in five groups uses ``double``, one in seven a 64-bit atomic), an
``if_device``/``otherwise`` pair of noinline helpers with their lambdas, and a
host function that prints.  Every tenth group adds a class with two virtual
functions in two sets, a vtable, a kernel that constructs the object and one
that calls through it.  Used by ``bench_passes.py`` and by the pass tests.
"""
from __future__ import annotations

HALF = '%"class.sycl::_V1::detail::half_impl::half"'


def _helper(g: int, j: int, last: bool) -> str:
    name = f"_Z6helperi{g}_{j}"
    uses_double = j == 1 and g % 5 == 0
    uses_atomic64 = j == 2 and g % 7 == 0
    body = [
        "entry:",
        "  %a.addr = alloca i32, align 4",
        "  %buf = alloca [4 x float], align 4",
        "  store i32 %a, ptr %a.addr, align 4",
        "  %0 = load i32, ptr %a.addr, align 4",
        "  %mul = mul nsw i32 %0, 3",
        "  %idx = sext i32 %mul to i64",
        "  %p = getelementptr inbounds [4 x float], ptr %buf, i64 0, i64 %idx",
        "  store float 1.000000e+00, ptr %p, align 4",
    ]
    if uses_double:
        body += ["  %d = sitofp i32 %mul to double", "  %d2 = fmul double %d, 5.000000e-01",
                 "  %mul2 = fptosi double %d2 to i32"]
    else:
        body += ["  %mul2 = add nsw i32 %mul, 1"]
    if uses_atomic64:
        body += [f"  %old = atomicrmw add ptr @counter{g}, i64 1 seq_cst, align 8"]
    if last:
        body += [f"  call spir_func void @_Z5branchi{g}(i32 %mul2)", "  ret i32 %mul2"]
    else:
        body += [f"  %r = call spir_func i32 @_Z6helperi{g}_{j + 1}(i32 %mul2)", "  ret i32 %r"]
    return (f"define linkonce_odr spir_func i32 @{name}(i32 %a) comdat {{\n" + "\n".join(body) + "\n}\n")


def _group(g: int) -> list[str]:
    out = [f"$_Z6helperi{g}_{j} = comdat any\n" for j in range(3)]
    if g % 7 == 0:
        out.append(f"@counter{g} = internal addrspace(0) global i64 0, align 8\n")
    out.append(
        f"define weak_odr spir_kernel void @_ZTS6kernel{g}(ptr %out, i32 %n) #0 {{\n"
        "entry:\n"
        "  %x = call spir_func i32 @_Z6helperi" f"{g}_0(i32 %n)\n"
        "  %p = getelementptr inbounds i32, ptr %out, i64 1\n"
        "  store i32 %x, ptr %p, align 4\n"
        "  ret void\n}\n")
    for j in range(3):
        out.append(_helper(g, j, j == 2))
    out.append(
        f"define spir_func void @_Z5branchi{g}(i32 %v) {{\n"
        "entry:\n"
        "  %v.addr = alloca i32, align 4\n"
        "  store i32 %v, ptr %v.addr, align 4\n"
        f"  call spir_func void @_Z17call_if_on_devicei{g}(ptr %v.addr)\n"
        f"  call spir_func void @_Z15call_if_on_hosti{g}(ptr %v.addr)\n"
        "  ret void\n}\n"
        f"define internal spir_func void @_Z17call_if_on_devicei{g}(ptr %c) #1 {{\n"
        f"entry:\n  call spir_func void @_Z9on_devicei{g}(ptr %c)\n  ret void\n}}\n"
        f"define internal spir_func void @_Z9on_devicei{g}(ptr %c) {{\n"
        "entry:\n  %0 = load i32, ptr %c, align 4\n  %1 = shl i32 %0, 1\n  store i32 %1, ptr %c, align 4\n"
        "  ret void\n}\n"
        f"define internal spir_func void @_Z15call_if_on_hosti{g}(ptr %c) #2 {{\n"
        f"entry:\n  call spir_func void @_Z7on_hosti{g}(ptr %c)\n  ret void\n}}\n"
        f"define internal spir_func void @_Z7on_hosti{g}(ptr %c) {{\n"
        "entry:\n  %0 = load i32, ptr %c, align 4\n"
        "  %1 = call i32 (ptr, ...) @printf(ptr @.fmt, i32 %0)\n  ret void\n}\n"
        f"define spir_func i32 @_Z4mainv{g}() #3 {{\n"
        f"entry:\n  %v = alloca i32, align 4\n  store i32 {g}, ptr %v, align 4\n"
        f"  call spir_func void @_Z5branchi{g}(i32 {g})\n  ret i32 0\n}}\n")
    if g % 10 == 0:
        out.append(
            f"@_ZTV5Shape{g} = linkonce_odr unnamed_addr constant {{ [4 x ptr] }} "
            f"{{ [4 x ptr] [ptr null, ptr null, ptr @_ZN5Shape4areaEv{g}, ptr @_ZN5Shape7preciseEv{g}] }}, align 8\n"
            f"define linkonce_odr spir_func float @_ZN5Shape4areaEv{g}(ptr %this) #4 {{\n"
            "entry:\n  %f = load float, ptr %this, align 4\n  %m = fmul float %f, %f\n  ret float %m\n}\n"
            f"define linkonce_odr spir_func double @_ZN5Shape7preciseEv{g}(ptr %this) #5 {{\n"
            "entry:\n  %f = load float, ptr %this, align 4\n  %d = fpext float %f to double\n"
            "  %m = fmul double %d, %d\n  ret double %m\n}\n"
            f"define weak_odr spir_kernel void @_ZTS9construct{g}(ptr %obj) #0 {{\n"
            f"entry:\n  store ptr getelementptr inbounds inrange(-16, 16) ({{ [4 x ptr] }}, ptr @_ZTV5Shape{g}, i32 0, i32 0, i32 2), ptr %obj, align 8\n"
            "  ret void\n}\n"
            f"define weak_odr spir_kernel void @_ZTS4call{g}(ptr %obj, ptr %out) #6 {{\n"
            "entry:\n  %vt = load ptr, ptr %obj, align 8\n  %slot = getelementptr inbounds ptr, ptr %vt, i64 0\n"
            "  %fn = load ptr, ptr %slot, align 8\n  %r = call spir_func float %fn(ptr %obj) #7\n"
            "  store float %r, ptr %out, align 4\n  ret void\n}\n")
    return out


def generate_module(groups: int) -> str:
    """A module of ``groups`` kernel groups: about ``10 * groups`` functions."""
    parts = [
        'source_filename = "bench.cpp"\n',
        'target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64"\n',
        'target triple = "spir64-unknown-unknown"\n',
        f"{HALF} = type {{ half }}\n",
        '@.fmt = private unnamed_addr constant [4 x i8] c"%d\\0A\\00", align 1\n',
    ]
    for g in range(groups):
        parts.extend(_group(g))
    parts.append('declare i32 @printf(ptr, ...) #8\n')
    parts.append(
        'attributes #0 = { "sycl-module-id"="bench.cpp" }\n'
        'attributes #1 = { noinline "sycl-call-if-on-device"="true" }\n'
        'attributes #2 = { noinline "sycl-call-if-on-host"="true" }\n'
        'attributes #3 = { "minisycl-host-entry" }\n'
        'attributes #4 = { "indirectly-callable"="_ZTSv" "sycl-module-id"="bench.cpp" }\n'
        'attributes #5 = { "indirectly-callable"="_ZTS8fp64_set" "sycl-module-id"="bench.cpp" }\n'
        'attributes #6 = { "calls-indirectly"="_ZTSv" "sycl-module-id"="bench.cpp" }\n'
        'attributes #7 = { "virtual-call" }\n'
        'attributes #8 = { "minisycl-host-only" }\n')
    aspects = [("fp16", 5), ("fp64", 6), ("atomic64", 28)]
    parts.append("!sycl_aspects = !{" + ", ".join(f"!{i}" for i in range(len(aspects))) + "}\n")
    for i, (name, v) in enumerate(aspects):
        parts.append(f'!{i} = !{{!"{name}", i32 {v}}}\n')
    return "".join(parts)


def generate_device_module(kernels: int, sets: int = 100, vfs_per_set: int = 20) -> str:
    """A device module for the post-link benchmark: ``kernels`` kernels with three
    helpers each, spread over 20 source files, and ``sets`` virtual-function sets
    of ``vfs_per_set`` functions (every third set uses double) with one vtable
    each; one kernel in 20 constructs an object of a set and calls it."""
    parts = [
        'target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64"\n',
        'target triple = "spir64-unknown-unknown"\n',
    ]
    attrs = []
    for s in range(sets):
        slots = ", ".join(f"ptr @_ZN3Set{s}2vfEv{j}" for j in range(vfs_per_set))
        parts.append(f"@_ZTV3Set{s} = linkonce_odr unnamed_addr constant {{ [{vfs_per_set + 2} x ptr] }} "
                     f"{{ [{vfs_per_set + 2} x ptr] [ptr null, ptr null, {slots}] }}, align 8\n")
        for j in range(vfs_per_set):
            body = ("  %d = alloca double, align 8\n  store double 1.0, ptr %d, align 8\n" if s % 3 == 0 else
                    "  %f = alloca float, align 4\n  store float 1.0, ptr %f, align 4\n")
            md = " !sycl_used_aspects !1" if s % 3 == 0 else ""
            parts.append(f"define linkonce_odr spir_func void @_ZN3Set{s}2vfEv{j}(ptr %this) #{s * 2}{md} {{\n"
                         f"entry:\n{body}  ret void\n}}\n")
        attrs.append(f'attributes #{s * 2} = {{ "indirectly-callable"="_ZTS3set{s}" "sycl-module-id"="tu{s % 20}.cpp" }}\n')
        attrs.append(f'attributes #{s * 2 + 1} = {{ "calls-indirectly"="_ZTS3set{s}" "sycl-module-id"="tu{s % 20}.cpp" }}\n')
    base = sets * 2
    for t in range(20):
        attrs.append(f'attributes #{base + t} = {{ "sycl-module-id"="tu{t}.cpp" }}\n')
    for k in range(kernels):
        for j in range(3):
            nxt = f"  %r = call spir_func i32 @_Z6helperi{k}_{j + 1}(i32 %m)\n  ret i32 %r\n" if j < 2 else "  ret i32 %m\n"
            parts.append(f"define internal spir_func i32 @_Z6helperi{k}_{j}(i32 %a) {{\nentry:\n"
                         f"  %m = mul nsw i32 %a, 3\n{nxt}}}\n")
        if k % 20 == 0:
            s = (k // 20) % sets
            parts.append(
                f"define weak_odr spir_kernel void @_ZTS6kernel{k}(ptr %obj, ptr %out) #{s * 2 + 1} {{\nentry:\n"
                f"  store ptr getelementptr inbounds inrange(-16, 16) ({{ [{vfs_per_set + 2} x ptr] }}, ptr @_ZTV3Set{s}, i32 0, i32 0, i32 2), ptr %obj, align 8\n"
                "  %vt = load ptr, ptr %obj, align 8\n  %fn = load ptr, ptr %vt, align 8\n"
                "  call spir_func void %fn(ptr %obj)\n"
                f"  %x = call spir_func i32 @_Z6helperi{k}_0(i32 1)\n  store i32 %x, ptr %out, align 4\n  ret void\n}}\n")
        else:
            parts.append(
                f"define weak_odr spir_kernel void @_ZTS6kernel{k}(ptr %out) #{base + k % 20} {{\nentry:\n"
                f"  %x = call spir_func i32 @_Z6helperi{k}_0(i32 1)\n  store i32 %x, ptr %out, align 4\n  ret void\n}}\n")
    parts += attrs
    parts.append('!sycl_aspects = !{!0}\n!0 = !{!"fp64", i32 6}\n!1 = !{i32 6}\n')
    return "".join(parts)
