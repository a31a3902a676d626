; RUN: minisycl opt '-passes=propagate-aspects{exclude-aspects=a1;validate=false}' %s -o - | filecheck %s
; exclude-aspects removes excluded aspects the pass derives, after merging;
; declared aspects (and those propagated from declarations) and a function's
; own existing !sycl_used_aspects stay, as upstream's pass keeps them.

target triple = "spir64-unknown-unknown"

%A = type { i32 }
%B = type { i32 }

; Derived a1 goes; nothing else: no metadata.
; CHECK: define spir_func void @only_excluded() {
define spir_func void @only_excluded() {
  %a = alloca %A, align 4
  ret void
}

; Declared a1 stays, though excluded.
; CHECK: define spir_func void @declares(){{.*}} !sycl_used_aspects ![[ONE:[0-9]+]]
define spir_func void @declares() !sycl_declared_aspects !10 {
  ret void
}
; ... and so does its caller, which gets it from the declaration.
; CHECK: define spir_func void @calls_declares(){{.*}} !sycl_used_aspects ![[ONE]]
define spir_func void @calls_declares() {
  call spir_func void @declares()
  ret void
}

; Kept aspects first, then the function's own existing ones (its excluded a1 last).
; CHECK: define spir_func void @existing(){{.*}} !sycl_used_aspects ![[EXIST:[0-9]+]]
define spir_func void @existing() !sycl_used_aspects !11 {
  %b = alloca %B, align 4
  ret void
}

; CHECK-DAG: ![[ONE]] = !{i32 1}
; CHECK-DAG: ![[EXIST]] = !{i32 2, i32 1}

!sycl_aspects = !{!0, !1, !2}
!sycl_types_that_use_aspects = !{!5, !6}
!0 = !{!"a1", i32 1}
!1 = !{!"a2", i32 2}
!2 = !{!"fp64", i32 6}
!5 = !{!"A", i32 1}
!6 = !{!"B", i32 2}
!10 = !{i32 1}
!11 = !{i32 1, i32 2}
