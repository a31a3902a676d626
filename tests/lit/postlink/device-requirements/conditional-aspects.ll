; RUN: minisycl post-link -properties -split=auto -symbols -S < %s -o %t.table
; RUN: filecheck %s -input-file=%t.table --check-prefix=TABLE
; RUN: filecheck %s -input-file=%t_0.prop --check-prefix=PROP
; RUN: filecheck %s -input-file=%t_0.sym --check-prefix=SYM
; RUN: filecheck %s -input-file=%t_0.ll
; !sycl_conditionally_used_aspects (what propagate-aspects writes for DPC++'s
; if_device_has / if_architecture_is) is no device requirement: upstream's
; computeDeviceRequirements reads !sycl_used_aspects only, and its device_if
; design says the conditional aspects are not in [SYCL/device requirements]
; (the runtime would refuse a kernel on a device that lacks an aspect the
; kernel needs only where the device has it).  Upstream's splitter does not
; group by them either: kernels that differ only in them share an image.
; The metadata stays on the image's functions.

; TABLE: [Code|Properties|Symbols]
; TABLE-NEXT: {{.*}}_0.ll|{{.*}}_0.prop|{{.*}}_0.sym
; TABLE-EMPTY:

; Aspects 2 only (3, 5 and 6 are conditional).
; PROP: [SYCL/device requirements]
; PROP-NEXT: aspects=2|gAAAAAAAAAgAAAAA
; PROP-EMPTY:

; SYM: kernel1
; SYM-NEXT: kernel2
; SYM-EMPTY:

; CHECK: define weak_odr spir_kernel void @kernel1() #0 !sycl_used_aspects !0 !sycl_conditionally_used_aspects !1
define weak_odr spir_kernel void @kernel1() #0 !sycl_used_aspects !0 !sycl_conditionally_used_aspects !1 {
  ret void
}

; CHECK: define weak_odr spir_kernel void @kernel2() #0 !sycl_used_aspects !0 !sycl_conditionally_used_aspects !5
define weak_odr spir_kernel void @kernel2() #0 !sycl_used_aspects !0 !sycl_conditionally_used_aspects !5 {
  ret void
}

attributes #0 = { "sycl-module-id"="a.cpp" }

!0 = !{i32 2}
!1 = !{!2}
!2 = !{!3, !4}
!3 = !{i32 -1, i32 3}
!4 = !{i32 3, i32 6}
!5 = !{!6}
!6 = !{!3, !7}
!7 = !{i32 5}
