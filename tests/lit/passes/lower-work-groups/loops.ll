; RUN: minisycl opt -passes=lower-work-groups %s -o - | filecheck %s
; Loops in work-group kernels (tests/runtime/test_work_groups.py runs these kernels).
;
; @short_loop: the loop after the barrier runs 16 times for every work-item; LLVM
; unrolls a loop that short whole, so it gets no implicit loop barrier: it stays
; a loop inside the sweep (its accumulator in a register), and once unrolled the
; loop over work-items is innermost and vectorised.
; @long_loop: the same loop up to %n gets the implicit barrier at its header
; (PoCL's implicit loop barriers): each sweep runs one iteration for all
; work-items, so the loop over work-items is the inner loop.
; @carried: a uniform counter %i (kept once for the group) and an accumulator
; carried across two barriers: the phi %acc and the value %acc1 flowing into it
; share one per-work-item slot (no copy from one array into the other per sweep);
; %i's use before the first barrier is dominated by its definition in every
; region, so it reads the register. The local T* parameter is noalias, as is the
; group's work-group memory.
; @apart: a phi still read after the value flowing into it is defined keeps its
; own slot.

target triple = "spir64-unknown-unknown"

%"class.sycl::_V1::nd_item.1" = type { [1 x i64], [1 x i64], [1 x i64], [1 x i64], [1 x i64] }

@t = internal addrspace(3) global [16 x float] undef, align 4

; CHECK-LABEL: define i64 @__minisycl_wg.short_loop(
; CHECK: inner.r1:
; CHECK-NEXT: %k.r1 = phi i64 [ 0, %wg.p1.r1 ], [ %k1.r1, %inner.r1 ]
; CHECK-NEXT: %acc.r1 = phi float [ 0.000000e+00, %wg.p1.r1 ], [ %acc1.r1, %inner.r1 ]
; CHECK-NOT: store float %acc
; CHECK: br i1 %more.r1, label %inner.r1, label %done.r1
; CHECK-LABEL: define i64 @__minisycl_wg.long_loop(
; CHECK: switch i32 %wg.g.state, label %wg.r0.pre [
; CHECK-NEXT: i32 1, label %wg.r1.pre
; CHECK-NEXT: i32 2, label %wg.r2.pre
; CHECK-LABEL: define i64 @__minisycl_wg.carried(ptr noalias %wg.g.rec, ptr noalias %wg.g.local, ptr %x, ptr %y, ptr addrspace(3) noalias %tile, i32 %n)
; CHECK: %[[ACC:wg.g.s[0-9]+]] = alloca float, i64 %wg.g.n
; CHECK-NEXT: %[[I:wg.g.s[0-9]+]] = alloca i32, i64 1
; CHECK-NOT: alloca float, i64 %wg.g.n
; CHECK: body.r0:
; CHECK-NEXT: %f.r0 = sitofp i32 %i.r0 to float
; CHECK: wg.p2.r2:
; CHECK: %i1.r2 = add i32 %wg.u{{[0-9]+}}.r2, 1
; CHECK-LABEL: define i64 @__minisycl_wg.apart(
; CHECK-COUNT-3: alloca float, i64 %wg.g.n
; CHECK-NOT: alloca float, i64 %wg.g.n
; CHECK: wg.dispatch:
; CHECK-DAG: "minisycl-wg-points"="work-group barrier #1 (__spirv_ControlBarrier)" {{.*}}"minisycl-work-group-kernel"="short_loop"
; CHECK-DAG: "minisycl-wg-points"="work-group barrier #1 (__spirv_ControlBarrier)|the implicit loop barrier at loop %inner" {{.*}}"minisycl-work-group-kernel"="long_loop"

define spir_kernel void @short_loop(%"class.sycl::_V1::nd_item.1" %it, ptr %x, ptr %y) #0 {
entry:
  %gid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 0, 0
  %lid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 1, 0
  %px = getelementptr float, ptr %x, i64 %gid
  %v = load float, ptr %px
  %pt = getelementptr [16 x float], ptr addrspace(3) @t, i64 0, i64 %lid
  store float %v, ptr addrspace(3) %pt
  call void @_Z22__spirv_ControlBarrierjjj(i32 2, i32 2, i32 272)
  br label %inner
inner:
  %k = phi i64 [ 0, %entry ], [ %k1, %inner ]
  %acc = phi float [ 0.0, %entry ], [ %acc1, %inner ]
  %pk = getelementptr [16 x float], ptr addrspace(3) @t, i64 0, i64 %k
  %tk = load float, ptr addrspace(3) %pk
  %acc1 = call float @llvm.fmuladd.f32(float %tk, float %v, float %acc)
  %k1 = add i64 %k, 1
  %more = icmp ult i64 %k1, 16
  br i1 %more, label %inner, label %done
done:
  %py = getelementptr float, ptr %y, i64 %gid
  store float %acc1, ptr %py
  ret void
}

define spir_kernel void @long_loop(%"class.sycl::_V1::nd_item.1" %it, ptr %x, ptr %y, i64 %n) #1 {
entry:
  %gid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 0, 0
  %lid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 1, 0
  %px = getelementptr float, ptr %x, i64 %gid
  %v = load float, ptr %px
  %pt = getelementptr [16 x float], ptr addrspace(3) @t, i64 0, i64 %lid
  store float %v, ptr addrspace(3) %pt
  call void @_Z22__spirv_ControlBarrierjjj(i32 2, i32 2, i32 272)
  br label %inner
inner:
  %k = phi i64 [ 0, %entry ], [ %k1, %inner ]
  %acc = phi float [ 0.0, %entry ], [ %acc1, %inner ]
  %pk = getelementptr [16 x float], ptr addrspace(3) @t, i64 0, i64 %k
  %tk = load float, ptr addrspace(3) %pk
  %acc1 = call float @llvm.fmuladd.f32(float %tk, float %v, float %acc)
  %k1 = add i64 %k, 1
  %more = icmp ult i64 %k1, %n
  br i1 %more, label %inner, label %done
done:
  %py = getelementptr float, ptr %y, i64 %gid
  store float %acc1, ptr %py
  ret void
}

; y[gid] = sum over i < n of i * x[the next work-item of the group, cyclically]
define spir_kernel void @carried(%"class.sycl::_V1::nd_item.1" %it, ptr %x, ptr %y, ptr addrspace(3) %tile, i32 %n) #2 {
entry:
  %gid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 0, 0
  %lid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 1, 0
  %L = extractvalue %"class.sycl::_V1::nd_item.1" %it, 4, 0
  %px = getelementptr float, ptr %x, i64 %gid
  %pt = getelementptr float, ptr addrspace(3) %tile, i64 %lid
  %l1 = add i64 %lid, 1
  %nb = urem i64 %l1, %L
  %pn = getelementptr float, ptr addrspace(3) %tile, i64 %nb
  br label %cond
cond:
  %i = phi i32 [ 0, %entry ], [ %i1, %step ]
  %acc = phi float [ 0.0, %entry ], [ %acc1, %step ]
  %go = icmp slt i32 %i, %n
  br i1 %go, label %body, label %end
body:
  %f = sitofp i32 %i to float
  %xv = load float, ptr %px
  %w = fmul float %f, %xv
  store float %w, ptr addrspace(3) %pt
  call void @_Z22__spirv_ControlBarrierjjj(i32 2, i32 2, i32 272)
  %tv = load float, ptr addrspace(3) %pn
  %acc1 = fadd float %acc, %tv
  call void @_Z22__spirv_ControlBarrierjjj(i32 2, i32 2, i32 272)
  br label %step
step:
  %i1 = add i32 %i, 1
  br label %cond
end:
  %py = getelementptr float, ptr %y, i64 %gid
  store float %acc, ptr %py
  ret void
}

; y[gid] = x[gid] * (2^n - 1): %a is read after %b (the value flowing into it) is
; defined, across a barrier, so the two must not share a slot
define spir_kernel void @apart(%"class.sycl::_V1::nd_item.1" %it, ptr %x, ptr %y, i32 %n) #3 {
entry:
  %gid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 0, 0
  %px = getelementptr float, ptr %x, i64 %gid
  %x0 = load float, ptr %px
  br label %cond
cond:
  %i = phi i32 [ 0, %entry ], [ %i1, %step ]
  %a = phi float [ %x0, %entry ], [ %b, %step ]
  %s = phi float [ 0.0, %entry ], [ %s1, %step ]
  %go = icmp slt i32 %i, %n
  br i1 %go, label %body, label %end
body:
  call void @_Z22__spirv_ControlBarrierjjj(i32 2, i32 2, i32 272)
  %b = fmul float %a, 2.0
  call void @_Z22__spirv_ControlBarrierjjj(i32 2, i32 2, i32 272)
  %s1 = fadd float %s, %a
  br label %step
step:
  %i1 = add i32 %i, 1
  br label %cond
end:
  %py = getelementptr float, ptr %y, i64 %gid
  store float %s, ptr %py
  ret void
}

declare float @llvm.fmuladd.f32(float, float, float)
declare void @_Z22__spirv_ControlBarrierjjj(i32, i32, i32)

attributes #0 = { "minisycl-kernel-signature"="nd_item<1>,float*,float*" }
attributes #1 = { "minisycl-kernel-signature"="nd_item<1>,float*,float*,long" }
attributes #2 = { "minisycl-kernel-signature"="nd_item<1>,float*,float*,local float*,int" }
attributes #3 = { "minisycl-kernel-signature"="nd_item<1>,float*,float*,int" }
