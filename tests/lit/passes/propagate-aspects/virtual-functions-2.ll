; RUN: minisycl opt -passes=propagate-aspects %s -o - | filecheck %s
; Each set is separate: kernelA calls setFoo {cpu}, kernelB calls setBar {gpu}
; (upstream virtual-functions-2.ll).

target triple = "spir64-unknown-unknown"

; CHECK: define spir_func void @foo(){{.*}} !sycl_used_aspects ![[ONE:[0-9]+]]
define spir_func void @foo() #0 !sycl_used_aspects !1 {
  ret void
}

; CHECK: define spir_func void @bar(){{.*}} !sycl_used_aspects ![[TWO:[0-9]+]]
define spir_func void @bar() #1 !sycl_used_aspects !2 {
  ret void
}

; CHECK: define spir_kernel void @kernelA(){{.*}} !sycl_used_aspects ![[ONE]]
define spir_kernel void @kernelA() #2 {
  ret void
}

; CHECK: define spir_kernel void @kernelB(){{.*}} !sycl_used_aspects ![[TWO]]
define spir_kernel void @kernelB() #3 {
  ret void
}

; CHECK-DAG: ![[ONE]] = !{i32 1}
; CHECK-DAG: ![[TWO]] = !{i32 2}

attributes #0 = { "indirectly-callable"="setFoo" }
attributes #1 = { "indirectly-callable"="setBar" }
attributes #2 = { "calls-indirectly"="setFoo" }
attributes #3 = { "calls-indirectly"="setBar" }

!sycl_aspects = !{!10, !11}
!10 = !{!"cpu", i32 1}
!11 = !{!"gpu", i32 2}
!1 = !{i32 1}
!2 = !{i32 2}
