; RUN: minisycl post-link -ir-output-only -split=auto -S %s -o %t.ll
; RUN: filecheck %s -input-file=%t.ll
; RUN: not test -e %t.table
; RUN: not minisycl post-link -ir-output-only -split=kernel -S %s -o %t2.ll 2>&1 | filecheck %s --check-prefix=SPLIT
; RUN: not minisycl post-link -ir-output-only -properties -S %s -o %t3.ll 2>&1 | filecheck %s --check-prefix=PROPS
; -ir-output-only writes the one processed module to the -o file itself (no
; table, no split); what no entry point reaches is gone.

; CHECK: define spir_kernel void @k()
; CHECK: define internal spir_func void @used()
; CHECK-NOT: @unused

; Only -split=auto or none go with it, and nothing that writes more files.
; SPLIT: error: -split=kernel can't be used with -ir-output-only
; PROPS: error: -properties can't be used with -ir-output-only

target triple = "spir64-unknown-unknown"

define spir_kernel void @k() #0 {
  call spir_func void @used()
  ret void
}
define internal spir_func void @used() {
  ret void
}
define internal spir_func void @unused() {
  ret void
}

attributes #0 = { "sycl-module-id"="a.cpp" }
