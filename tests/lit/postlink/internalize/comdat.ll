; RUN: minisycl post-link -split=kernel -S < %s -o %t.table
; RUN: filecheck %s --input-file=%t_0.ll
; Internalizing a function drops a comdat that only it uses, as LLVM's
; Internalize pass does (the comdat line goes with it).

; CHECK-NOT: $odr = comdat
; CHECK: define internal spir_func void @odr() {

$odr = comdat any

define linkonce_odr spir_func void @odr() comdat {
  ret void
}

define spir_kernel void @k() #0 {
  call spir_func void @odr()
  ret void
}

attributes #0 = { "sycl-module-id"="a.cpp" }
