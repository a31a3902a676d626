; RUN: minisycl post-link -S < %s -o %t.table
; RUN: filecheck %s --input-file=%t_0.ll
; Before the split, device globals leave @llvm.compiler.used and the ones
; nothing else uses are dropped (upstream's removeDeviceGlobalFromCompilerUsed);
; other members stay in the list.  No --device-globals needed.

; A device global that a function uses stays (weak_odr: not discardable).
; CHECK-DAG: @dg_used = weak_odr global { i32 } zeroinitializer
; A device global outside the list stays too.
; CHECK-DAG: @dg_not_listed = weak_odr global { i32 } zeroinitializer
; One that only the list used is gone.
; CHECK-NOT: @dg_unused =
; Only the non-device-global member is left in the list.
; CHECK: @llvm.compiler.used = appending global [1 x ptr] [ptr @not_a_dg], section "llvm.metadata"
; CHECK-NOT: @dg_unused =

@dg_used = weak_odr global { i32 } zeroinitializer, align 4 #0
@dg_unused = weak_odr global { i32 } zeroinitializer, align 4 #0
@dg_not_listed = weak_odr global { i32 } zeroinitializer, align 4 #0
@not_a_dg = internal global i8 0
@llvm.compiler.used = appending global [3 x ptr] [ptr @dg_used, ptr @dg_unused, ptr @not_a_dg], section "llvm.metadata"

define spir_kernel void @k() #1 {
  %v = load i32, ptr @dg_used
  ret void
}

attributes #0 = { "sycl-device-global-size"="4" "sycl-unique-id"="uid" }
attributes #1 = { "sycl-module-id"="a.cpp" }
