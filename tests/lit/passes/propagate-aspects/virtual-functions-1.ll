; RUN: minisycl opt -passes=propagate-aspects %s -o - | filecheck %s
; A kernel with "calls-indirectly"="S" gets the aspects of every function of
; set S, with or without an actual virtual-call instruction
; (upstream PropagateAspectsUsage/VirtualFunctions/virtual-functions-1.ll).

target triple = "spir64-unknown-unknown"

@vtable = linkonce_odr dso_local unnamed_addr constant { [3 x ptr] } { [3 x ptr] [ptr null, ptr null, ptr @vfn] }, align 8

; CHECK: define spir_func void @vfn(){{.*}} !sycl_used_aspects ![[FP64:[0-9]+]]
define spir_func void @vfn() #0 {
  %tmp = alloca double, align 8
  ret void
}

; CHECK: define spir_kernel void @kernel_calls(ptr %obj){{.*}} !sycl_used_aspects ![[FP64]]
define spir_kernel void @kernel_calls(ptr %obj) #1 {
  %vt = load ptr, ptr %obj, align 8
  %fn = load ptr, ptr %vt, align 8
  call spir_func void %fn() #2
  ret void
}

; CHECK: define spir_kernel void @kernel_no_call(){{.*}} !sycl_used_aspects ![[FP64]]
define spir_kernel void @kernel_no_call() #1 {
  ret void
}

; CHECK: ![[FP64]] = !{i32 6}

attributes #0 = { "indirectly-callable"="set-foo" "sycl-module-id"="v.cpp" }
attributes #1 = { "calls-indirectly"="set-foo" "sycl-module-id"="v.cpp" }
attributes #2 = { "virtual-call" }

!sycl_aspects = !{!0}
!0 = !{!"fp64", i32 6}
