; RUN: minisycl post-link -split=auto -properties -S < %s -o %t.table
; RUN: filecheck %s --input-file=%t.table --check-prefix=CHECK-TABLE
; RUN: filecheck %s --input-file=%t_0.ll --check-prefix=CHECK-FP64-SPLIT
; RUN: filecheck %s --input-file=%t_1.ll --check-prefix=CHECK-FP64-DUMMY
; RUN: filecheck %s --input-file=%t_1.prop --check-prefix=CHECK-FP64-DUMMY-PROPS
; RUN: filecheck %s --input-file=%t_2.ll --check-prefix=CHECK-FP32-SPLIT
; Upstream's virtual-functions/dummy.ll: @foo and @bar share a set but not
; aspects, so they go to two images; the fp64 one is followed by its dummy.

; CHECK-TABLE: _0.prop
; CHECK-TABLE-NEXT: _1.prop
; CHECK-TABLE-NEXT: _2.prop

define spir_func void @foo() #1 {
  %x = alloca float
  ret void
}

define spir_func void @bar() #1 !sycl_used_aspects !0 {
  %x = alloca double
  %d = load double, ptr %x
  %s = fadd double %d, 1.000000e+00
  store double %s, ptr %x
  ret void
}

; CHECK-FP64-SPLIT: define spir_func void @bar()
; CHECK-FP32-SPLIT: define spir_func void @foo()
; CHECK-FP64-DUMMY: define spir_func void @bar()
; CHECK-FP64-DUMMY-NEXT: entry:
; CHECK-FP64-DUMMY-NEXT: ret void
; Same properties as the real image, plus the dummy flag.
; CHECK-FP64-DUMMY-PROPS: [SYCL/device requirements]
; CHECK-FP64-DUMMY-PROPS-NEXT: aspects=2|gAAAAAAAAAgBAAAA
; CHECK-FP64-DUMMY-PROPS: [SYCL/virtual functions]
; CHECK-FP64-DUMMY-PROPS-NEXT: virtual-functions-set=2|gAAAAAAAAAwclRXQ
; CHECK-FP64-DUMMY-PROPS-NEXT: dummy-image=1|1

attributes #1 = { "sycl-module-id"="v.cpp" "indirectly-callable"="setA" }

!sycl_aspects = !{!1}
!0 = !{i32 6}
!1 = !{!"fp64", i32 6}
