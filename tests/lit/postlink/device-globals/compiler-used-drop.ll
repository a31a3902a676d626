; RUN: minisycl post-link -S < %s -o %t.table
; RUN: filecheck %s --input-file=%t_0.ll
; When @llvm.compiler.used holds only device globals it disappears, and a
; device global only it used goes with it (removeDeviceGlobalFromCompilerUsed).

; CHECK-NOT: @llvm.compiler.used
; CHECK: @dg_used = internal global { i32 } zeroinitializer
; CHECK-NOT: @dg_unused

@dg_used = internal global { i32 } zeroinitializer, align 4 #0
@dg_unused = internal global { i32 } zeroinitializer, align 4 #0
@llvm.compiler.used = appending global [2 x ptr] [ptr @dg_used, ptr @dg_unused], section "llvm.metadata"

define spir_kernel void @k() #1 {
  %v = load i32, ptr @dg_used
  ret void
}

attributes #0 = { "sycl-device-global-size"="4" "sycl-unique-id"="uid" }
attributes #1 = { "sycl-module-id"="a.cpp" }
