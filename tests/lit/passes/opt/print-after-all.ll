; RUN: minisycl opt -passes=split-if-device,propagate-aspects --print-after-all %s -o %t.ll 2>&1 | filecheck %s
; RUN: minisycl opt -passes=split-if-device,propagate-aspects --print-before=propagate-aspects %s -o %t.ll 2>&1 | filecheck %s --check-prefix=BEFORE
; RUN: minisycl opt -passes=split-if-device,propagate-aspects --time-passes %s -o %t.ll 2>&1 | filecheck %s --check-prefix=TIME
; The IR between passes, for debugging pipelines.

; CHECK: ; *** IR Dump After split-if-device ***
; CHECK: define spir_kernel void @k()
; CHECK-NOT: !sycl_used_aspects
; CHECK: ; *** IR Dump After propagate-aspects ***
; CHECK: define spir_kernel void @k() {{.*}}!sycl_used_aspects
; BEFORE: ; *** IR Dump Before propagate-aspects ***
; BEFORE-NOT: IR Dump
; TIME: split-if-device={{[0-9.]+}}ms {{.*}}propagate-aspects={{[0-9.]+}}ms

define spir_kernel void @k() {
  %d = alloca double
  ret void
}
