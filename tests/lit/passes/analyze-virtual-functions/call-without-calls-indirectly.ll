; RUN: not minisycl opt -passes=analyze-virtual-functions %s -o %t.ll 2>&1 | filecheck %s
; A virtual call in the static call tree of a kernel that has no
; "calls-indirectly" is an error, reported at the call with the chain.

target triple = "spir64-unknown-unknown"

; CHECK: shapes.ksl:14:10: error: kernel 'area' makes a virtual call (through 'helper') but has no calls_indirectly property
; CHECK-NEXT: shapes.ksl:12:3: note: 'area' calls 'helper'
; CHECK-NOT: error:
define spir_kernel void @area(ptr %s) {
  call spir_func void @helper(ptr %s), !minisycl.loc !2
  ret void
}

define spir_func void @helper(ptr %s) {
  %vt = load ptr, ptr %s, align 8
  %fn = load ptr, ptr %vt, align 8
  call spir_func void %fn(ptr %s) #0, !minisycl.loc !1
  ret void
}

; With the property, the same call is fine.
define spir_kernel void @area_ok(ptr %s) #1 {
  call spir_func void @helper(ptr %s)
  ret void
}

; A plain function-pointer call (no "virtual-call") is not a virtual call.
define spir_kernel void @fnptr(ptr %f) {
  call spir_func void %f(ptr null)
  ret void
}

attributes #0 = { "virtual-call" }
attributes #1 = { "calls-indirectly"="_ZTSv" }

!1 = !{!"shapes.ksl", i32 14, i32 10}
!2 = !{!"shapes.ksl", i32 12, i32 3}
