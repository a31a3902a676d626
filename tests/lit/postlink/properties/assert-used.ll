; RUN: minisycl post-link -properties -split=auto -symbols -S < %s -o %t.auto.table
; RUN: filecheck %s -input-file=%t.auto_0.prop --check-prefix=ALL
; RUN: minisycl post-link -properties -split=none -S < %s -o %t.none.table
; RUN: filecheck %s -input-file=%t.none_0.prop --check-prefix=ALL
; RUN: minisycl post-link -properties -split=kernel -S < %s -o %t.kernel.table
; RUN: filecheck %s -input-file=%t.kernel_0.prop --check-prefix=K0
; RUN: filecheck %s -input-file=%t.kernel_1.prop --check-prefix=K1
; RUN: filecheck %s -input-file=%t.kernel_2.prop --check-prefix=K2
; Upstream's assert/property-1.ll: [SYCL/assert used] lists the kernels from
; which __devicelib_assert_fail is reached through calls (here through
; __assert_fail and a lambda's operator()), after [SYCL/misc properties];
; an image without such a kernel has no such set.

; ALL: [SYCL/misc properties]
; ALL: [SYCL/assert used]
; ALL-DAG: k_direct=1|1
; ALL-DAG: k_deep=1|1
; ALL-NOT: k_clean

; Images by name, descending: k_direct, k_deep, k_clean.
; K0: [SYCL/assert used]
; K0-NEXT: k_direct=1|1
; K1: [SYCL/assert used]
; K1-NEXT: k_deep=1|1
; K2-NOT: [SYCL/assert used]

target triple = "spir64-unknown-unknown"

@msg = private unnamed_addr addrspace(1) constant [2 x i8] c"0\00", align 1

define dso_local spir_func void @fails() {
  call spir_func void @__assert_fail(ptr addrspace(4) addrspacecast (ptr addrspace(1) @msg to ptr addrspace(4)), i32 3)
  ret void
}

define dso_local spir_func void @quiet() {
  ret void
}

define internal spir_func void @lambda() {
  call spir_func void @middle()
  call spir_func void @quiet()
  ret void
}

define dso_local spir_func void @middle() {
  call spir_func void @fails()
  ret void
}

define weak_odr spir_kernel void @k_direct() #0 {
  call spir_func void @fails()
  ret void
}

define weak_odr spir_kernel void @k_clean() #0 {
  call spir_func void @quiet()
  ret void
}

define weak_odr spir_kernel void @k_deep() #0 {
  call spir_func void @lambda()
  ret void
}

define weak dso_local spir_func void @__assert_fail(ptr addrspace(4) %expr, i32 %line) {
  call spir_func void @__devicelib_assert_fail(ptr addrspace(4) %expr, i32 %line)
  ret void
}

declare spir_func void @__devicelib_assert_fail(ptr addrspace(4), i32)

attributes #0 = { "sycl-module-id"="assert.cpp" "sycl-optlevel"="2" }
