; RUN: minisycl post-link -split=auto -properties -S < %s -o %t.table
; RUN: filecheck %s --input-file=%t.table --check-prefix=CHECK-TABLE
; RUN: filecheck %s --input-file=%t_0.ll --check-prefix=CHECK-SET
; RUN: filecheck %s --input-file=%t_1.ll --check-prefix=CHECK-DUMMY
; RUN: filecheck %s --input-file=%t_1.prop --check-prefix=CHECK-DUMMY-PROPS
; RUN: minisycl post-link -split=kernel -properties -S < %s -o %t.k.table
; RUN: filecheck %s --input-file=%t.k.table --check-prefix=CHECK-TABLE
; RUN: minisycl post-link -split=none -properties -S < %s -o %t.n.table
; RUN: filecheck %s --input-file=%t.n.table --check-prefix=CHECK-TABLE
; RUN: filecheck %s --input-file=%t.n_0.ll --check-prefix=CHECK-SET
; Upstream's virtual-functions/dummy.ll: @foo and @bar share the set "setA"
; but not aspects.  The design bundles all functions of one set into one
; dedicated image, whatever aspects each uses and whatever the split mode
; (upstream's code splits them by aspects, or per function with
; -split=kernel): one image for setA, using fp64 through @bar, then its dummy
; with every body of the set emptied.

; CHECK-TABLE: _0.prop
; CHECK-TABLE-NEXT: _1.prop
; CHECK-TABLE-EMPTY:

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

; CHECK-SET-DAG: define spir_func void @foo()
; CHECK-SET-DAG: define spir_func void @bar()
; CHECK-DUMMY: define spir_func void @foo()
; CHECK-DUMMY-NEXT: entry:
; CHECK-DUMMY-NEXT: ret void
; CHECK-DUMMY: define spir_func void @bar()
; CHECK-DUMMY-NEXT: entry:
; CHECK-DUMMY-NEXT: ret void
; Same properties as the real image, plus the dummy flag.
; CHECK-DUMMY-PROPS: [SYCL/device requirements]
; CHECK-DUMMY-PROPS-NEXT: aspects=2|gAAAAAAAAAgBAAAA
; CHECK-DUMMY-PROPS: [SYCL/virtual functions]
; CHECK-DUMMY-PROPS-NEXT: virtual-functions-set=2|gAAAAAAAAAwclRXQ
; CHECK-DUMMY-PROPS-NEXT: dummy-image=1|1

attributes #1 = { "sycl-module-id"="v.cpp" "indirectly-callable"="setA" }

!sycl_aspects = !{!1}
!0 = !{i32 6}
!1 = !{!"fp64", i32 6}
