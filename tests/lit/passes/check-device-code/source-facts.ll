; RUN: not minisycl opt -passes=check-device-code %s -o %t.ll 2>&1 | filecheck %s
; The rules speak the source's language where the front end attached it:
; names (!minisycl.name), host functions ("minisycl-host-only"="declared",
; with a note where), undefined functions ("minisycl-undefined") and virtual
; calls' targets and sets (!minisycl.vcall).  The module is not changed.

target triple = "spir64-unknown-unknown"

; CHECK: app.ksl:3:5: error: host function 'log' cannot be called from device code (reached through Shape::step <- k)
; CHECK-NEXT: app.ksl:1:1: note: declared 'host' here
; CHECK: app.ksl:4:5: error: device code calls 'missing', which is not defined in this file and not declared SYCL_EXTERNAL
; CHECK: app.ksl:5:5: error: virtual call to 'Shape::plain' from device code, but it has no indirectly_callable property
; CHECK: app.ksl:6:5: error: kernel 'k' makes a virtual call to 'Shape::area' (through 'Shape::step'), which belongs to set 'other'; that set is not listed in its calls_indirectly property
; CHECK-NEXT: app.ksl:2:3: note: 'k' calls 'Shape::step' here
; CHECK-NEXT: app.ksl:7:1: note: kernel 'k' is defined here
; CHECK: 4 errors generated.
define spir_kernel void @k(ptr %s) #0 !minisycl.loc !7 {
  call spir_func void @_ZN5Shape4stepEv(ptr %s), !minisycl.loc !2
  ret void
}

define spir_func void @_ZN5Shape4stepEv(ptr %s) !minisycl.name !10 {
  call spir_func void @log(), !minisycl.loc !3
  call spir_func void @missing(), !minisycl.loc !4
  %fn = load ptr, ptr %s, align 8
  call spir_func void %fn(ptr %s) #3, !minisycl.loc !5, !minisycl.vcall !11
  call spir_func void %fn(ptr %s) #3, !minisycl.loc !6, !minisycl.vcall !12
  ret void
}

define spir_func void @log() #1 !minisycl.loc !1 {
  ret void
}

declare spir_func void @missing() #2

attributes #0 = { "sycl-module-id"="app.ksl" "calls-indirectly"="set" }
attributes #1 = { "minisycl-host-only"="declared" }
attributes #2 = { "minisycl-undefined" }
attributes #3 = { "virtual-call" }

!1 = !{!"app.ksl", i32 1, i32 1}
!2 = !{!"app.ksl", i32 2, i32 3}
!3 = !{!"app.ksl", i32 3, i32 5}
!4 = !{!"app.ksl", i32 4, i32 5}
!5 = !{!"app.ksl", i32 5, i32 5}
!6 = !{!"app.ksl", i32 6, i32 5}
!7 = !{!"app.ksl", i32 7, i32 1}
!10 = !{!"Shape::step"}
!11 = !{!"Shape::plain", !""}
!12 = !{!"Shape::area", !"other"}
