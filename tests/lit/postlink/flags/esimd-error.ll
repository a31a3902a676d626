; RUN: not minisycl post-link -split-esimd -lower-esimd -split=auto %s -o %t.table 2>&1 | filecheck %s
; RUN: not minisycl post-link -split=auto %s -o %t.table 2>&1 | filecheck %s
; minisycl has no ESIMD: a module with an ESIMD kernel (!sycl_explicit_simd) is
; one error line, with or without the ESIMD flags, and no table is written.
; CHECK: minisycl: error: 'esimd_kernel' is an ESIMD function (!sycl_explicit_simd): minisycl has no ESIMD support
; CHECK-NOT: Traceback
; RUN: not test -e %t.table

target triple = "spir64-unknown-unknown"

define spir_kernel void @esimd_kernel() #0 !sycl_explicit_simd !0 {
  ret void
}

attributes #0 = { "sycl-module-id"="a.cpp" }
!0 = !{}
