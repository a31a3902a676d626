; RUN: minisycl opt -passes=lower-work-groups %s -o - | filecheck %s
; A work-group reduce is combined into one accumulator during the sweep that
; reaches it (Point.fused): no per-work-item copy of the operand and no second
; loop over the work-items; the accumulator starts at the identity and the
; step reads it, then resets it for the next sweep.  A sub-group reduce keeps
; its per-work-item operand (it reduces segments).
;
; @row_sum: the sweep after the reduce stores only for local id 0; its loop is
; not vectorised (llvm.loop.vectorize.enable false, and no unroll.disable), so
; LLVM peels work-item 0 and the rest of the loop folds away.  The sweep that
; combines into the accumulator has two copies, chosen by the local range: the
; usual one (llvm.loop.unroll.disable, kept whole for the vectoriser) below 128
; work-items, and a wide one (wg.r0w, interleaved 4 times: four accumulators,
; not one chain of dependent adds) from 128 on.
;
; @row_sum_256 and @row_sum_64: with a required work-group size the choice is
; made at compile time, so there is one copy, wide or not.
;
; @row_sum_front_end: the front end's spelling of the test, the int 0 widened
; to long by an instruction and compared first: the same peeled sweep.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64"
target triple = "spir64-unknown-unknown"
%"class.sycl::_V1::nd_item.1" = type { [1 x i64], [1 x i64], [1 x i64], [1 x i64], [1 x i64] }

; CHECK: define i64 @__minisycl_wg.sums(
; CHECK: %wg.g.x1_0 = alloca float, i64 1, align 16
; CHECK: %wg.g.x2_0 = alloca i32, i64 %wg.g.n, align 16
; CHECK: store float 0.000000e+00, ptr %wg.g.x1_0
; CHECK-NOT: store float 0.000000e+00, ptr %wg.g.x2_0
; CHECK: %wg.fa1.o.r0 = load float, ptr %wg.x1_0.r0
; CHECK-NEXT: %wg.fa1.n.r0 = fadd reassoc float %wg.fa1.o.r0, %v.r0
; CHECK-NEXT: store float %wg.fa1.n.r0, ptr %wg.x1_0.r0
; CHECK: store i32 %i.r1, ptr %wg.x2_0.r1
; CHECK: wg.step1:
; CHECK: %wg.g.t1.acc1 = load float, ptr %wg.g.x1_0
; CHECK-NEXT: store float 0.000000e+00, ptr %wg.g.x1_0
; CHECK-NEXT: br label %wg.st1.f0
; CHECK: wg.st1.f0:
; CHECK-NEXT: store float %wg.g.t1.acc1, ptr %wg.g.y1
define spir_kernel void @sums(%"class.sycl::_V1::nd_item.1" %it, ptr %x, ptr %out, ptr %iout) "minisycl-kernel-signature"="nd_item<1>,float*,float*,int*" {
entry:
  %gid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 0, 0
  %grp = extractvalue %"class.sycl::_V1::nd_item.1" %it, 2, 0
  %px = getelementptr float, ptr %x, i64 %gid
  %v = load float, ptr %px
  %s = call float @_Z17__spirv_GroupFAddiif(i32 2, i32 0, float %v)
  %i = fptosi float %v to i32
  %t = call i32 @_Z17__spirv_GroupIAddiij(i32 3, i32 0, i32 %i)
  %po = getelementptr float, ptr %out, i64 %gid
  store float %s, ptr %po
  %pi = getelementptr i32, ptr %iout, i64 %gid
  store i32 %t, ptr %pi
  ret void
}
declare float @_Z17__spirv_GroupFAddiif(i32, i32, float)
declare i32 @_Z17__spirv_GroupIAddiij(i32, i32, i32)

; CHECK: define i64 @__minisycl_wg.row_sum(
; CHECK: switch i32 %wg.g.state, label %wg.r0.v [
; CHECK: wg.r0.v:
; CHECK-NEXT: %wg.wide.r0 = icmp uge i64 %wg.g.r6, 128
; CHECK-NEXT: br i1 %wg.wide.r0, label %wg.r0w.pre, label %wg.r0.pre
; CHECK: br i1 %wg.lc0.r0, label %wg.r0.h0, label %wg.after, !llvm.loop ![[WHOLE:[0-9]+]]
; CHECK: wg.r0w.pre:
; CHECK: %wg.fa1.n.r0w = fadd reassoc float %wg.fa1.o.r0w, %v.r0w
; CHECK: br i1 %wg.lc0.r0w, label %wg.r0w.h0, label %wg.after, !llvm.loop ![[WIDE:[0-9]+]]
; CHECK: %first.r1 = icmp eq i64 %wg.cp{{[0-9]+}}.r1, 0
; CHECK: br i1 %wg.lc0.r1, label %wg.r1.h0, label %wg.after, !llvm.loop ![[PEEL:[0-9]+]]
; CHECK: wg.after:
; CHECK-NEXT: %wg.g.mn = phi i32 [ %wg.mn.r0, %wg.r0.t0 ], [ %wg.mn.r1, %wg.r1.t0 ], [ %wg.mn.r0w, %wg.r0w.t0 ]

; CHECK: define i64 @__minisycl_wg.row_sum_256(
; CHECK: %wg.g.r6 = add i64 256, 0
; CHECK-NOT: wg.r0w
; CHECK: br i1 %wg.lc0.r0, label %wg.r0.h0, label %wg.after, !llvm.loop ![[WIDE256:[0-9]+]]
; CHECK-NOT: wg.r0w
; CHECK: define i64 @__minisycl_wg.row_sum_64(
; CHECK-NOT: wg.r0w
; CHECK: br i1 %wg.lc0.r0, label %wg.r0.h0, label %wg.after, !llvm.loop ![[WHOLE64:[0-9]+]]
; CHECK-NOT: wg.r0w

; CHECK: define i64 @__minisycl_wg.row_sum_front_end(
; CHECK: %.10.r1 = icmp eq i64 %.9.r1, %lid.r1
; CHECK: br i1 %wg.lc0.r1, label %wg.r1.h0, label %wg.after, !llvm.loop ![[PEEL2:[0-9]+]]

; CHECK-DAG: ![[NOUNROLL:[0-9]+]] = !{!"llvm.loop.unroll.disable"}
; CHECK-DAG: ![[NOVEC:[0-9]+]] = !{!"llvm.loop.vectorize.enable", i1 false}
; CHECK-DAG: ![[IC4:[0-9]+]] = !{!"llvm.loop.interleave.count", i32 4}
; CHECK-DAG: ![[WHOLE]] = distinct !{![[WHOLE]], ![[NOUNROLL]]}
; CHECK-DAG: ![[WIDE]] = distinct !{![[WIDE]], ![[NOUNROLL]], ![[IC4]]}
; CHECK-DAG: ![[PEEL]] = distinct !{![[PEEL]], ![[NOVEC]]}
; CHECK-DAG: ![[PEEL2]] = distinct !{![[PEEL2]], ![[NOVEC]]}
; CHECK-DAG: ![[WIDE256]] = distinct !{![[WIDE256]], ![[NOUNROLL]], ![[IC4]]}
; CHECK-DAG: ![[WHOLE64]] = distinct !{![[WHOLE64]], ![[NOUNROLL]]}
define spir_kernel void @row_sum(%"class.sycl::_V1::nd_item.1" %it, ptr %x, ptr %out) "minisycl-kernel-signature"="nd_item<1>,float*,float*" {
entry:
  %gid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 0, 0
  %lid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 1, 0
  %grp = extractvalue %"class.sycl::_V1::nd_item.1" %it, 2, 0
  %px = getelementptr float, ptr %x, i64 %gid
  %v = load float, ptr %px
  %s = call float @_Z17__spirv_GroupFAddiif(i32 2, i32 0, float %v)
  %first = icmp eq i64 %lid, 0
  br i1 %first, label %put, label %done
put:
  %po = getelementptr float, ptr %out, i64 %grp
  store float %s, ptr %po
  br label %done
done:
  ret void
}

define spir_kernel void @row_sum_256(%"class.sycl::_V1::nd_item.1" %it, ptr %x, ptr %out) "minisycl-kernel-signature"="nd_item<1>,float*,float*" !reqd_work_group_size !0 {
entry:
  %gid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 0, 0
  %grp = extractvalue %"class.sycl::_V1::nd_item.1" %it, 2, 0
  %px = getelementptr float, ptr %x, i64 %gid
  %v = load float, ptr %px
  %s = call float @_Z17__spirv_GroupFAddiif(i32 2, i32 0, float %v)
  %po = getelementptr float, ptr %out, i64 %gid
  store float %s, ptr %po
  ret void
}

define spir_kernel void @row_sum_64(%"class.sycl::_V1::nd_item.1" %it, ptr %x, ptr %out) "minisycl-kernel-signature"="nd_item<1>,float*,float*" !reqd_work_group_size !1 {
entry:
  %gid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 0, 0
  %px = getelementptr float, ptr %x, i64 %gid
  %v = load float, ptr %px
  %s = call float @_Z17__spirv_GroupFAddiif(i32 2, i32 0, float %v)
  %po = getelementptr float, ptr %out, i64 %gid
  store float %s, ptr %po
  ret void
}

define spir_kernel void @row_sum_front_end(%"class.sycl::_V1::nd_item.1" %it, ptr %x, ptr %out) "minisycl-kernel-signature"="nd_item<1>,float*,float*" {
entry:
  %gid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 0, 0
  %px = getelementptr float, ptr %x, i64 %gid
  %v = load float, ptr %px
  %s = call float @_Z17__spirv_GroupFAddiif(i32 2, i32 0, float %v)
  %.9 = sext i32 0 to i64
  %lid = extractvalue %"class.sycl::_V1::nd_item.1" %it, 1, 0
  %.10 = icmp eq i64 %.9, %lid
  br i1 %.10, label %put, label %done
put:
  %grp = extractvalue %"class.sycl::_V1::nd_item.1" %it, 2, 0
  %po = getelementptr float, ptr %out, i64 %grp
  store float %s, ptr %po
  br label %done
done:
  ret void
}

!0 = !{i32 256}
!1 = !{i32 64}
