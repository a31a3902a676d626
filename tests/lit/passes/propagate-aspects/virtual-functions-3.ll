; RUN: minisycl opt -passes=propagate-aspects %s -o - | filecheck %s
; Declared aspects are kept: a virtual function with device_has(fp16) that
; also uses double reports both, and so does a kernel calling its set
; (upstream virtual-functions-3.ll).

target triple = "spir64-unknown-unknown"

; CHECK: define spir_func void @vfn(){{.*}} !sycl_declared_aspects ![[DECL:[0-9]+]] !sycl_used_aspects ![[BOTH:[0-9]+]]
define spir_func void @vfn() #0 !sycl_declared_aspects !1 {
  %d = alloca double, align 8
  ret void
}

; CHECK: define spir_kernel void @kernel(){{.*}} !sycl_used_aspects ![[BOTH]]
define spir_kernel void @kernel() #1 {
  ret void
}

; CHECK-DAG: ![[DECL]] = !{i32 5}
; Used aspects first, then declared ones (upstream writes them in that order).
; CHECK-DAG: ![[BOTH]] = !{i32 6, i32 5}

attributes #0 = { "indirectly-callable"="set-foo" }
attributes #1 = { "calls-indirectly"="set-foo" }

!sycl_aspects = !{!10, !11}
!10 = !{!"fp16", i32 5}
!11 = !{!"fp64", i32 6}
!1 = !{i32 5}
