; RUN: minisycl post-link -split=kernel -S < %s -o %t.table
; RUN: filecheck %s --input-file=%t_0.ll
; RUN: filecheck %s --input-file=%t_1.ll
; @llvm.used (the kernels the host refers to) has done its job before the
; split: upstream erases it (removeSYCLKernelsConstRefArray), so no image has it.

; CHECK-NOT: @llvm.used

@llvm.used = appending global [2 x ptr] [ptr @a, ptr @b], section "llvm.metadata"

define spir_kernel void @a() #0 {
  ret void
}

define spir_kernel void @b() #0 {
  ret void
}

attributes #0 = { "sycl-module-id"="a.cpp" }
