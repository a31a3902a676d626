; RUN: minisycl post-link -split=auto -properties -S < %s -o %t.table
; RUN: filecheck %s --input-file=%t_0.ll --check-prefix CHECK-IR0
; RUN: filecheck %s --input-file=%t_1.ll --check-prefix CHECK-IR1
; RUN: filecheck %s --input-file=%t_0.prop --check-prefix CHECK-PROPS0
; RUN: filecheck %s --input-file=%t_1.prop --check-prefix CHECK-PROPS1
; RUN: minisycl post-link -split=auto -properties -S --vf-keys=upstream < %s -o %t.up.table
; RUN: filecheck %s --input-file=%t.up_1.prop --check-prefix CHECK-UPSTREAM
; Upstream's virtual-functions/properties.ll: the set image has
; virtual-functions-set, the kernel image the sets it uses, never both.

@vtable = linkonce_odr dso_local unnamed_addr addrspace(1) constant { [3 x ptr addrspace(4)] } { [3 x ptr addrspace(4)] [ptr addrspace(4) null, ptr addrspace(4) null, ptr addrspace(4) addrspacecast (ptr @foo to ptr addrspace(4))] }, align 8

define linkonce_odr spir_func void @foo() #0 {
entry:
  ret void
}

define weak_odr dso_local spir_kernel void @kernel(ptr addrspace(1) %obj) #1 {
entry:
  store ptr addrspace(1) getelementptr inbounds inrange(-16, 8) ({ [3 x ptr addrspace(4)] }, ptr addrspace(1) @vtable, i32 0, i32 0, i32 2), ptr addrspace(1) %obj, align 8
  ret void
}

; CHECK-IR0: define spir_func void @foo
; CHECK-IR1-DAG: define weak_odr dso_local spir_kernel void @kernel
; CHECK-IR1-DAG: declare spir_func void @foo
; CHECK-PROPS0: [SYCL/virtual functions]
; CHECK-PROPS0-NEXT: virtual-functions-set=2|4AAAAAAAAAwclRXLm92b
; CHECK-PROPS0-NOT: uses-virtual-functions-set
; The kernel calls the set (calls-indirectly) and stores its vtable (creates).
; CHECK-PROPS1: [SYCL/virtual functions]
; CHECK-PROPS1-NEXT: calls-virtual-functions-set=2|4AAAAAAAAAwclRXLm92b
; CHECK-PROPS1-NEXT: creates-virtual-functions-set=2|4AAAAAAAAAwclRXLm92b
; CHECK-PROPS1-NOT: virtual-functions-set=
; CHECK-UPSTREAM: [SYCL/virtual functions]
; CHECK-UPSTREAM-NEXT: uses-virtual-functions-set=2|4AAAAAAAAAwclRXLm92b
; CHECK-UPSTREAM-NOT: virtual-functions-set=

attributes #0 = { "indirectly-callable"="set-foo" "sycl-module-id"="v.cpp" }
attributes #1 = { "calls-indirectly"="set-foo" "sycl-module-id"="v.cpp" }
