; RUN: minisycl opt -passes=lower-work-groups %s -o - | filecheck %s
; A kernel with one work-group barrier becomes a group function: region 0
; (entry to the barrier) and region 1 (after it) each loop over the work-items;
; %v lives across the barrier, so it is kept per work-item (stored in region 0,
; loaded in region 1); %pt does not (used before the barrier only); %lid and %n,
; used after the barrier too, are recomputed from the nd_item there, not kept;
; the static work-group variable @tile becomes an offset into the group's work-group
; memory, the group function's second parameter (noalias: no kernel argument reaches it).
; Each sweep reduces the points its work-items stopped at to a smallest and a
; largest; the innermost loop over work-items carries the no-unroll loop hint.

target triple = "spir64-unknown-unknown"

%"class.sycl::_V1::nd_item.1" = type { [1 x i64], [1 x i64], [1 x i64], [1 x i64], [1 x i64] }

@tile = internal addrspace(3) global [64 x float] undef, align 4

; CHECK-NOT: define spir_kernel void @box
; CHECK: define i64 @__minisycl_wg.box(ptr noalias %wg.g.rec, ptr noalias %wg.g.local, ptr %x, ptr %y) #[[ATTRS:[0-9]+]]
; CHECK: %wg.g.lb = addrspacecast ptr %wg.g.local to ptr addrspace(3)
; CHECK: %wg.g.loc0 = getelementptr i8, ptr addrspace(3) %wg.g.lb, i64 0
; CHECK: %[[VSLOT:wg.g.s[0-9]+]] = alloca float, i64 %wg.g.n
; CHECK: switch i32 %wg.g.state, label %wg.r0.pre [
; CHECK-NEXT: i32 1, label %wg.r1.pre
; CHECK: %v.r0 = load float, ptr %px.r0
; CHECK-NEXT: store float %v.r0, ptr %[[VPTR:wg.sp[0-9]+]].r0
; CHECK: store float %v.r0, ptr addrspace(3) %pt.r0
; CHECK-NEXT: br label %wg.r0.x1
; CHECK: wg.r0.t0:
; CHECK-NEXT: %wg.xid.r0 = phi i32 [ 1, %wg.r0.x1 ]
; CHECK-NEXT: %wg.mn.r0 = call i32 @llvm.umin.i32(i32 %wg.mn0.r0, i32 %wg.xid.r0)
; CHECK-NEXT: %wg.mx.r0 = call i32 @llvm.umax.i32(i32 %wg.mx0.r0, i32 %wg.xid.r0)
; CHECK: br i1 %wg.lc0.r0, label %wg.r0.h0, label %wg.after, !llvm.loop ![[LOOP:[0-9]+]]
; CHECK: wg.p1.r1:
; CHECK-NEXT: %[[LID:wg.cp[0-9]+]].r1 = extractvalue %"class.sycl::_V1::nd_item.1" %it.r1, 1, 0
; CHECK-NEXT: %l1.r1 = add i64 %[[LID]].r1, 1
; CHECK-NEXT: %[[N:wg.cp[0-9]+]].r1 = extractvalue %"class.sycl::_V1::nd_item.1" %it.r1, 4, 0
; CHECK-NEXT: %r.r1 = urem i64 %l1.r1, %[[N]].r1
; CHECK: load float, ptr addrspace(3) %pr.r1
; CHECK: %[[LD:wg.ld[0-9]+]].r1 = load float, ptr %[[VPTR]].r1
; CHECK: fadd float %[[LD]].r1, %w.r1
; CHECK: wg.r1.t0:
; CHECK-NEXT: %wg.xid.r1 = phi i32 [ 0, %wg.r1.x0 ]
; the work-items must all have stopped at the same point
; CHECK: wg.after:
; CHECK-NEXT: %wg.g.mn = phi i32 [ %wg.mn.r0, %wg.r0.t0 ], [ %wg.mn.r1, %wg.r1.t0 ]
; CHECK-NEXT: %wg.g.mx = phi i32 [ %wg.mx.r0, %wg.r0.t0 ], [ %wg.mx.r1, %wg.r1.t0 ]
; CHECK-NEXT: %wg.g.bad = icmp ne i32 %wg.g.mn, %wg.g.mx
; CHECK: wg.fail:
; CHECK: ret i64 %wg.g.code
; CHECK: attributes #[[ATTRS]] = { "minisycl-wg-points"="work-group barrier #1 (__spirv_ControlBarrier)" "minisycl-wg-static-local"="256" "minisycl-wg-sub-group-size"="0" "minisycl-work-group-kernel"="box" }
; CHECK: ![[LOOP]] = distinct !{![[LOOP]], ![[NOUNROLL:[0-9]+]]}
; CHECK: ![[NOUNROLL]] = !{!"llvm.loop.unroll.disable"}

define spir_kernel void @box(%"class.sycl::_V1::nd_item.1" %it, ptr %x, ptr %y) {
entry:
  %gid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 0, 0
  %lid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 1, 0
  %n = extractvalue %"class.sycl::_V1::nd_item.1" %it, 4, 0
  %px = getelementptr float, ptr %x, i64 %gid
  %v = load float, ptr %px
  %pt = getelementptr [64 x float], ptr addrspace(3) @tile, i64 0, i64 %lid
  store float %v, ptr addrspace(3) %pt
  call void @_Z22__spirv_ControlBarrierjjj(i32 2, i32 2, i32 272)
  %l1 = add i64 %lid, 1
  %r = urem i64 %l1, %n
  %pr = getelementptr [64 x float], ptr addrspace(3) @tile, i64 0, i64 %r
  %w = load float, ptr addrspace(3) %pr
  %s = fadd float %v, %w
  %py = getelementptr float, ptr %y, i64 %gid
  store float %s, ptr %py
  ret void
}

declare void @_Z22__spirv_ControlBarrierjjj(i32, i32, i32)
