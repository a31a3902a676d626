; RUN: minisycl opt -passes=lower-work-groups %s -o - | filecheck %s
; A kernel with one work-group barrier becomes a group function: region 0
; (entry to the barrier) and region 1 (after it) each loop over the work-items;
; %v lives across the barrier, so it is kept per work-item (stored in region 0,
; loaded in region 1); %pt does not (used before the barrier only); the static
; work-group variable @tile becomes an offset into the buffer at rec[9].

target triple = "spir64-unknown-unknown"

%"class.sycl::_V1::nd_item.1" = type { [1 x i64], [1 x i64], [1 x i64], [1 x i64], [1 x i64] }

@tile = internal addrspace(3) global [64 x float] undef, align 4

; CHECK-NOT: define spir_kernel void @box
; CHECK: define i64 @__minisycl_wg.box(ptr noalias %wg.g.rec, ptr %x, ptr %y) #[[ATTRS:[0-9]+]]
; CHECK: %wg.g.loc0 = getelementptr i8, ptr addrspace(3) %wg.g.lb, i64 0
; CHECK: %[[VSLOT:wg.g.s[0-9]+]] = alloca float, i64 %wg.g.n
; CHECK: switch i32 %wg.g.state, label %wg.r0.pre [
; CHECK-NEXT: i32 1, label %wg.r1.pre
; CHECK: %v.r0 = load float, ptr %px.r0
; CHECK-NEXT: store float %v.r0, ptr %[[VPTR:wg.sp[0-9]+]].r0
; CHECK: store float %v.r0, ptr addrspace(3) %pt.r0
; CHECK-NEXT: br label %wg.r0.x1
; CHECK: wg.r0.x1:
; CHECK-NEXT: store i32 1, ptr %wg.id.r0
; CHECK: wg.p1.r1:
; CHECK: load float, ptr addrspace(3) %pr.r1
; CHECK: %[[LD:wg.ld[0-9]+]].r1 = load float, ptr %[[VPTR]].r1
; CHECK: fadd float %[[LD]].r1, %w.r1
; CHECK: wg.r1.x0:
; CHECK-NEXT: store i32 0, ptr %wg.id.r1
; the work-items must all have stopped at the same point
; CHECK: wg.fail:
; CHECK: ret i64 %wg.g.code
; CHECK: attributes #[[ATTRS]] = { "minisycl-wg-points"="work-group barrier #1 (__spirv_ControlBarrier)" "minisycl-wg-static-local"="256" "minisycl-wg-sub-group-size"="0" "minisycl-work-group-kernel"="box" }

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
