; RUN: not minisycl opt -passes=split-if-device %s -o %t.ll 2>&1 | filecheck %s
; Device-only diagnostics come from the device call tree, at the source
; location the front end attached (!minisycl.loc), with the chain to a kernel.

target triple = "spir64-unknown-unknown"

; CHECK: app.ksl:12:7: error: host-only function 'log_host' cannot be called from device code (reached through step <- kernel); wrap the call in an if_host block
define spir_kernel void @kernel() #0 {
entry:
  call spir_func void @step()
  ret void
}

define spir_func void @step() {
entry:
  call spir_func void @log_host(), !minisycl.loc !1
  ret void
}

; Calls inside an if_host helper are not device code: no error for this one.
; CHECK-NOT: app.ksl:20
define internal spir_func void @helper() #2 {
entry:
  call spir_func void @log_host(), !minisycl.loc !2
  ret void
}

define spir_func void @both() #3 {
entry:
  call spir_func void @helper()
  ret void
}

declare spir_func void @log_host() #1

attributes #0 = { "sycl-module-id"="app.ksl" }
attributes #1 = { "minisycl-host-only" }
attributes #2 = { noinline "sycl-call-if-on-host"="true" }
attributes #3 = { "sycl-module-id"="app.ksl" }

!1 = !{!"app.ksl", i32 12, i32 7}
!2 = !{!"app.ksl", i32 20, i32 3}
