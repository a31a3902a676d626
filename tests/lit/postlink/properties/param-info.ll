; RUN: minisycl post-link -properties -emit-param-info -S %s -o %t.table
; RUN: filecheck %s -input-file=%t_0.prop --match-full-lines
; [SYCL/kernel param opt]: a bit array per kernel, bit i set when argument i was
; removed; the size prefix counts arguments, not bytes.

; CHECK: [SYCL/device requirements]
; CHECK-NEXT: aspects=2|AAAAAAAAAAA
; CHECK-NEXT: [SYCL/kernel param opt]
; We remove no argument: 3 arguments, every bit clear (size 3 bits, one byte 0x00).
; CHECK-NEXT: three=2|DAAAAAAAAAAA
; A pass left !sycl_kernel_omit_args: arguments 1 and 9 of 10 removed
; (size 10 bits, bytes 0x02 0x02).
; CHECK-NEXT: omitted=2|KAAAAAAAAAgACA
; A kernel without arguments has no entry.
; CHECK-NOT: none=
; CHECK-EMPTY:

target triple = "spir64-unknown-unknown"

define spir_kernel void @three(ptr %a, i32 %b, float %c) {
  ret void
}
define spir_kernel void @omitted(i32 %a0) !sycl_kernel_omit_args !0 {
  ret void
}
define spir_kernel void @none() {
  ret void
}

!0 = !{i1 false, i1 true, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 true}
