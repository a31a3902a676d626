; RUN: minisycl post-link -properties -split=auto -symbols -S < %s -o %t.table
; RUN: filecheck %s -input-file=%t_0.prop --check-prefix=TU2
; RUN: filecheck %s -input-file=%t_1.prop --check-prefix=TU1
; Upstream's assert/indirect-with-split.ll: when a "referenced-indirectly"
; function is on a path to __devicelib_assert_fail, any kernel of the image
; might get there, so every kernel of that image is listed; an image whose
; kernels reach the assertion only directly lists just those (the indirect
; call in @helper has another type, so @indirect is not in TU1's image).

; TU2: [SYCL/assert used]
; TU2-DAG: tu2_a=1|1
; TU2-DAG: tu2_b=1|1
; TU1: [SYCL/assert used]
; TU1-NEXT: tu1_a=1|1
; TU1-NOT: tu1_b
; TU1-NOT: tu2_

target triple = "spir64-unknown-unknown"

define dso_local spir_kernel void @tu1_a() #0 {
  call spir_func void @helper(ptr null)
  ret void
}

define dso_local spir_kernel void @tu1_b() #0 {
  ret void
}

define dso_local spir_func void @helper(ptr %fp) {
  %r = call spir_func i32 %fp(i32 1)
  call spir_func void @__devicelib_assert_fail(i32 %r)
  ret void
}

define dso_local spir_kernel void @tu2_a() #2 {
  call spir_func void @helper(ptr null)
  ret void
}

define dso_local spir_kernel void @tu2_b() #2 {
  call spir_func void @indirect()
  ret void
}

define dso_local spir_func void @indirect() #1 {
  call spir_func void @__devicelib_assert_fail(i32 0)
  ret void
}

declare spir_func void @__devicelib_assert_fail(i32)

attributes #0 = { "sycl-module-id"="TU1.cpp" }
attributes #1 = { "referenced-indirectly" "sycl-module-id"="TU2.cpp" }
attributes #2 = { "sycl-module-id"="TU2.cpp" }
