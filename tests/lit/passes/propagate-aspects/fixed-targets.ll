; RUN: minisycl opt '-passes=propagate-aspects{fixed-targets=gpu,cpu,nosuch}' %s -o %t.ll
; RUN: filecheck %s -input-file=%t.ll
; RUN: minisycl post-link -properties -split=auto -S %t.ll -o %t.table
; RUN: filecheck %s -input-file=%t_0.prop --check-prefix=PROP
; RUN: minisycl opt --print-pipeline '-passes=propagate-aspects{fixed-targets=gpu,cpu}' %s | filecheck %s --check-prefix=PIPE
; fixed-targets (upstream's -sycl-propagate-aspects-usage-fixed-targets) puts
; !sycl_fixed_targets with the named aspects' numbers, in the order given, on
; every entry point (unknown names are skipped, as upstream does); the post-link
; step writes it as fixed_target in [SYCL/device requirements].

target triple = "spir64-unknown-unknown"

; CHECK: define spir_kernel void @k(){{.*}} !sycl_fixed_targets ![[T:[0-9]+]]
define spir_kernel void @k() #0 {
  call spir_func void @helper()
  ret void
}
; Not an entry point: no metadata.
; CHECK: define internal spir_func void @helper() {
define internal spir_func void @helper() {
  ret void
}
; CHECK: ![[T]] = !{i32 2, i32 1}

; PROP: [SYCL/device requirements]
; PROP-NEXT: aspects=2|AAAAAAAAAAA
; fixed_target {1, 2} (sorted as the post-link step writes it)
; PROP-NEXT: fixed_target=2|ABAAAAAAAAQAAAAACAAAAA

; PIPE: propagate-aspects{fixed-targets=gpu,cpu}

attributes #0 = { "sycl-module-id"="a.cpp" }

!sycl_aspects = !{!0, !1, !2}
!0 = !{!"cpu", i32 1}
!1 = !{!"gpu", i32 2}
!2 = !{!"fp64", i32 6}
