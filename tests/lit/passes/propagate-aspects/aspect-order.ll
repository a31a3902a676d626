; RUN: minisycl opt -passes=propagate-aspects %s -o - | filecheck %s
; !sycl_used_aspects lists aspects in upstream's order (a SmallSet<int, 4>):
; a function's own aspects by first use, then its callees' in call order; with
; five or more, ascending.

target triple = "spir64-unknown-unknown"

%A = type { i32 }
%B = type { i32 }
%C = type { i32 }

; First use decides: %C's aspect 3 before %A's aspect 1.
; CHECK: define spir_func void @own(){{.*}} !sycl_used_aspects ![[OWN:[0-9]+]]
define spir_func void @own() {
  %c = alloca %C, align 4
  %a = alloca %A, align 4
  ret void
}
; CHECK: define spir_func void @uses_b(){{.*}} !sycl_used_aspects ![[B:[0-9]+]]
define spir_func void @uses_b() {
  %b = alloca %B, align 4
  ret void
}

; Own (fp64) first, then the callees in call order: uses_b's 2, then own's 3, 1.
; CHECK: define spir_kernel void @k4(){{.*}} !sycl_used_aspects ![[K4:[0-9]+]]
define spir_kernel void @k4() {
  %d = alloca double, align 8
  call spir_func void @uses_b()
  call spir_func void @own()
  ret void
}

; Five aspects: ascending.
; CHECK: define spir_kernel void @k5(){{.*}} !sycl_used_aspects ![[K5:[0-9]+]]
define spir_kernel void @k5() !sycl_used_aspects !20 {
  call spir_func void @uses_b()
  call spir_func void @own()
  ret void
}

; CHECK-DAG: ![[OWN]] = !{i32 3, i32 1}
; CHECK-DAG: ![[B]] = !{i32 2}
; CHECK-DAG: ![[K4]] = !{i32 6, i32 2, i32 3, i32 1}
; CHECK-DAG: ![[K5]] = !{i32 1, i32 2, i32 3, i32 6, i32 9}

!sycl_aspects = !{!0, !1, !2, !3, !4}
!sycl_types_that_use_aspects = !{!5, !6, !7}
!0 = !{!"a1", i32 1}
!1 = !{!"a2", i32 2}
!2 = !{!"a3", i32 3}
!3 = !{!"fp64", i32 6}
!4 = !{!"a9", i32 9}
!5 = !{!"A", i32 1}
!6 = !{!"B", i32 2}
!7 = !{!"C", i32 3}
!20 = !{i32 9, i32 6}
