; RUN: minisycl post-link -emit-param-info -S %s -o %t.files.table
; RUN: filecheck %s -input-file=%t.files.table --check-prefix=TABLE
; RUN: filecheck %s -input-file=%t.files_0.prop --match-full-lines --check-prefix=PROP
; Upstream's older SPIRKernelParamOptInfo read !spir_kernel_omit_args (the
; newer name is !sycl_kernel_omit_args): both spellings give
; [SYCL/kernel param opt]. -emit-param-info asks for a property set, so the
; .prop file is written without -properties.

; TABLE: [Code|Properties]
; TABLE-NEXT: {{.*}}files_0.prop
; TABLE-EMPTY:

; PROP: [SYCL/kernel param opt]
; 2 arguments, the first removed: bits 01 -> byte 0x01, size 2 bits.
; PROP-DAG: first=2|CAAAAAAAAAQA
; 11 arguments, bits 1-6, 9 and 10 removed: bytes 0x7E 0x06, size 11 bits.
; PROP-DAG: second=2|LAAAAAAAAAgfGA
; The newer spelling, on the same kernel shape as 'first'.
; PROP-DAG: newer=2|CAAAAAAAAAQA

target triple = "spir64-unknown-unknown"

define weak_odr spir_kernel void @first(float %a, i32 %b) !spir_kernel_omit_args !0 {
  ret void
}

define weak_odr spir_kernel void @second(i8 %a0, i8 %a1, i8 %a2, i8 %a3, i8 %a4, i8 %a5, i8 %a6, i8 %a7, i8 %a8, i8 %a9, i8 %a10) !spir_kernel_omit_args !1 {
  ret void
}

define weak_odr spir_kernel void @newer(float %a, i32 %b) !sycl_kernel_omit_args !0 {
  ret void
}

!0 = !{i1 true, i1 false}
!1 = !{i1 false, i1 true, i1 true, i1 true, i1 true, i1 true, i1 true, i1 false, i1 false, i1 true, i1 true}
