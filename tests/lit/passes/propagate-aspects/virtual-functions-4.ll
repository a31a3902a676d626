; RUN: minisycl opt -passes=propagate-aspects %s -o - | filecheck %s
; A kernel that only constructs an object (stores a vtable that names a
; virtual function using fp64) does NOT use fp64: it may run on devices
; without it (upstream virtual-functions-4.ll; DPC++'s virtual-functions design).

target triple = "spir64-unknown-unknown"

@vtable = linkonce_odr dso_local unnamed_addr constant { [3 x ptr] } { [3 x ptr] [ptr null, ptr null, ptr @vfn] }, align 8

; CHECK: define spir_func void @vfn(){{.*}} !sycl_used_aspects
define spir_func void @vfn() #0 {
  %d = alloca double, align 8
  ret void
}

; CHECK: define spir_kernel void @construct(ptr %obj) {
; CHECK-NOT: !sycl_used_aspects
; CHECK: ret void
define spir_kernel void @construct(ptr %obj) {
  store ptr getelementptr inbounds inrange(-16, 8) ({ [3 x ptr] }, ptr @vtable, i32 0, i32 0, i32 2), ptr %obj, align 8
  ret void
}

attributes #0 = { "indirectly-callable"="set-foo" }

!sycl_aspects = !{!10}
!10 = !{!"fp64", i32 6}
