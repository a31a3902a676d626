; RUN: minisycl opt -passes=propagate-aspects %s -o %t.ll 2>&1 | filecheck %s
; RUN: minisycl opt -passes='propagate-aspects{validate=false}' %s -o %t.ll 2>%t.err && test ! -s %t.err
; RUN: minisycl opt -passes='propagate-aspects{exclude-aspects=fp64}' %s -o - 2>/dev/null | filecheck %s --check-prefix=EXCLUDED
; A kernel whose used aspects exceed its device_has list gets a warning with
; the call chain to the function that uses the aspect.

target triple = "spir64-unknown-unknown"

; CHECK: k.ksl:4:1: warning: kernel 'kern' uses aspect 'fp64', which is not listed in its device_has property (through kern -> mid -> leaf)
; CHECK-NEXT: k.ksl:5:3: note: 'kern' calls 'mid'
; CHECK: note: 'mid' calls 'leaf'
; CHECK: k.ksl:9:1: note: 'leaf' uses aspect 'fp64'
; CHECK-NOT: warning
define spir_kernel void @kern() !sycl_declared_aspects !5 !minisycl.loc !1 {
  call spir_func void @mid(), !minisycl.loc !2
  ret void
}

define spir_func void @mid() {
  call spir_func void @leaf()
  ret void
}

define spir_func double @leaf() !minisycl.loc !3 {
  ret double 0.0
}

; EXCLUDED: define spir_kernel void @kern() !sycl_declared_aspects ![[D:[0-9]+]] !minisycl.loc ![[L:[0-9]+]] !sycl_used_aspects ![[U:[0-9]+]] {
; EXCLUDED: ![[U]] = !{i32 2}

!sycl_aspects = !{!10, !11}
!10 = !{!"gpu", i32 2}
!11 = !{!"fp64", i32 6}
!1 = !{!"k.ksl", i32 4, i32 1}
!2 = !{!"k.ksl", i32 5, i32 3}
!3 = !{!"k.ksl", i32 9, i32 1}
!5 = !{i32 2}
