; RUN: minisycl post-link -properties -device-globals -emit-program-metadata -split=kernel -S %s -o %t.table
; RUN: filecheck %s -input-file=%t_0.prop --match-full-lines
; [SYCL/program metadata] comes after [SYCL/device requirements] and before
; [SYCL/misc properties] and [SYCL/device globals] (upstream's set order); per
; function: the work-group size as a uint32 array, the sub-group size and the
; number of dimensions as uint32 (here [32, 16] and 16); then each device
; global's IR name by unique id (the value in upstream's name-mapping test).

; CHECK: [SYCL/device requirements]
; CHECK-NEXT: aspects=2|AAAAAAAAAAA
; CHECK-NEXT: reqd_sub_group_size=1|16
; CHECK-NEXT: reqd_work_group_size_uint64_t=2|ACAAAAAAAAAIAAAAAAAAAABAAAAAAAAA
; CHECK-NEXT: [SYCL/program metadata]
; CHECK-NEXT: k@reqd_work_group_size=2|ABAAAAAAAAAIAAAAQAAAAA
; CHECK-NEXT: k@reqd_sub_group_size=1|16
; CHECK-NEXT: 6da74a122db9f35d____ZL7dg_int1@global_id_mapping=2|YBAAAAAAAAwXax0Nkd2Xp5GdxA
; CHECK-NEXT: [SYCL/misc properties]
; CHECK-NEXT: optLevel=1|2
; CHECK-NEXT: [SYCL/device globals]
; CHECK-NEXT: 6da74a122db9f35d____ZL7dg_int1=2|ABAAAAAAAAABAAAAAAAAAA
; CHECK-EMPTY:

target triple = "spir64-unknown-unknown"

@_ZL7dg_int1 = internal addrspace(1) global i32 0, align 4 #1

define spir_kernel void @k() #0 !reqd_work_group_size !0 !intel_reqd_sub_group_size !1 {
  %v = load i32, ptr addrspace(1) @_ZL7dg_int1, align 4
  ret void
}

attributes #0 = { "sycl-module-id"="a.cpp" "sycl-optlevel"="2" }
attributes #1 = { "sycl-device-global-size"="4" "sycl-device-image-scope"="false" "sycl-unique-id"="6da74a122db9f35d____ZL7dg_int1" }

!0 = !{i32 32, i32 16}
!1 = !{i32 16}
