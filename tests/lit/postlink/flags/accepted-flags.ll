; RUN: minisycl post-link -properties -split=auto -S %s -o %t.plain.table
; RUN: minisycl post-link -properties -split=auto -spec-const=rt -O0 -S %s -o %t.rt.table
; RUN: minisycl post-link -properties -split=auto -spec-const=native -O3 -lower-esimd -split-esimd -S %s -o %t.native.table
; RUN: minisycl post-link -properties -split=auto -spec-const=default -Os -S %s -o %t.default.table
; RUN: cmp %t.plain_0.prop %t.rt_0.prop
; RUN: cmp %t.plain_0.prop %t.native_0.prop
; RUN: cmp %t.plain_0.prop %t.default_0.prop
; RUN: filecheck %s -input-file=%t.rt_0.prop --match-full-lines
; Upstream's -spec-const, -O* and ESIMD flags are accepted and change nothing
; here (no spec constants, no ESIMD); optLevel comes from "sycl-optlevel" even
; with -O0.
; CHECK: [SYCL/misc properties]
; CHECK-NEXT: optLevel=1|3

target triple = "spir64-unknown-unknown"

define spir_kernel void @k() #0 {
  ret void
}

attributes #0 = { "sycl-module-id"="a.cpp" "sycl-optlevel"="3" }
