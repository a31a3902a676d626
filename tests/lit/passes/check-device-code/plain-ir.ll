; RUN: minisycl opt -passes=check-device-code %s -o %t.ll 2>&1 | filecheck %s
; RUN: minisycl opt -passes=check-device-code %s -o - 2>/dev/null | filecheck %s --check-prefix=SAME
; IR without the front end's attachments: the rules use the IR names, and
; only code the device call tree reaches counts (the if_host helper's call to
; printf and the unreached host function are not device code).  A device_has
; list that lacks a used aspect is a warning; the module is left as it was.

target triple = "spir64-unknown-unknown"

; CHECK: minisycl: warning: kernel 'k' uses aspect 'fp64', which is not listed in its device_has property (through k -> twice)
; CHECK-NEXT: minisycl: note: 'k' calls 'twice'
; CHECK-NEXT: minisycl: note: 'twice' uses aspect 'fp64'
; CHECK-NOT: error
; SAME: define spir_kernel void @k() #0 !sycl_declared_aspects !1 {
; SAME-NOT: sycl_used_aspects
define spir_kernel void @k() #0 !sycl_declared_aspects !1 {
  call spir_func void @twice()
  call spir_func void @on_host()
  ret void
}

define spir_func void @twice() {
  %y = fadd double 1.0, 1.0
  ret void
}

define internal spir_func void @on_host() #1 {
  %r = call i32 (ptr, ...) @printf(ptr null)
  ret void
}

define spir_func void @host_side() {
  %r = call i32 (ptr, ...) @printf(ptr null)
  ret void
}

declare i32 @printf(ptr, ...) #2

attributes #0 = { "sycl-module-id"="a.ksl" }
attributes #1 = { noinline "sycl-call-if-on-host"="true" }
attributes #2 = { "minisycl-host-only" }

!sycl_aspects = !{!10}
!1 = !{}
!10 = !{!"fp64", i32 6}
