; RUN: minisycl post-link -properties -split=auto < %s -o %t.files.table
; RUN: filecheck %s -input-file=%t.files_0.prop --check-prefix=AUTO
; RUN: minisycl post-link -properties -split=kernel < %s -o %t.kernel.table
; RUN: filecheck %s -input-file=%t.kernel_0.prop --check-prefix=KERNEL0
; RUN: filecheck %s -input-file=%t.kernel_1.prop --check-prefix=KERNEL1
; Upstream's device-requirements/aspects.ll: the aspects of an image are the
; union over all its functions, ascending, always written (even when empty).

; AUTO: [SYCL/device requirements]
; AUTO-NEXT: aspects=2|gCAAAAAAAAAAAAAABAAAAYAAAAQCAAAAMAAAAA
; KERNEL0: [SYCL/device requirements]
; KERNEL0-NEXT: aspects=2|ABAAAAAAAAQAAAAAGAAAAA
; KERNEL1: [SYCL/device requirements]
; KERNEL1-NEXT: aspects=2|gBAAAAAAAAAAAAAAJAAAAwAAAAA

define spir_func void @foo() !sycl_used_aspects !0 {
  ret void
}

define spir_func void @bar() !sycl_used_aspects !1 {
  ret void
}

define weak_odr spir_kernel void @kernel2() #0 {
  call spir_func void @foo()
  ret void
}

define weak_odr spir_kernel void @kernel1() #0 {
  call spir_func void @bar()
  ret void
}

attributes #0 = { "sycl-module-id"="a.cpp" }

!0 = !{i32 1, i32 6}
!1 = !{i32 0, i32 9, i32 12}
