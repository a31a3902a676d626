; RUN: minisycl post-link -split=kernel -symbols -S %s -o %t.plain.table
; RUN: minisycl post-link -split=kernel -symbols -S -reduce-memory-usage=true %s -o %t.red.table
; RUN: minisycl post-link -split=kernel -symbols -S -reduce-memory-usage %s -o %t.flag.table
; RUN: cmp %t.plain_1.ll %t.red_1.ll
; RUN: cmp %t.plain_1.ll %t.flag_1.ll
; RUN: { minisycl post-link -split=kernel -reduce-memory-usage=maybe %s -o %t.bad.table 2>&1; test $? -eq 2; } | filecheck %s --check-prefix=BAD
; RUN: filecheck %s -input-file=%t.red_1.ll
; Upstream's older -reduce-memory-usage[=true|false] shares memory between the
; images; minisycl's images always share the input's entities, so the images
; are the same with it as without (upstream's cuda-split-per-kernel.ll runs
; both and checks the same lines).  A value other than true/false/1/0 is a
; usage error (exit 2).

; CHECK: define weak_odr spir_kernel void @k1(ptr addrspace(1) %p)
; BAD: Invalid value for '-reduce-memory-usage': 'maybe' is not one of true, false, 1, 0

target triple = "spir64-unknown-unknown"

define weak_odr spir_kernel void @k1(ptr addrspace(1) %p) #0 {
  ret void
}

define weak_odr spir_kernel void @k2(ptr addrspace(1) %p) #0 {
  ret void
}

attributes #0 = { "sycl-module-id"="r.cpp" }
