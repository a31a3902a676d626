; RUN: minisycl post-link -properties -split=auto < %s -o %t.table
; RUN: filecheck %s -input-file=%t_0.prop --check-prefix=WG64
; RUN: filecheck %s -input-file=%t_1.prop --check-prefix=WG32
; Required work-group sizes split images (they are in the key) and are written
; as uint64 arrays; sub-group sizes as uint32; keys in alphabetical order
; (upstream reqd-work-group-size.ll, reqd-sub-group-size.ll).

; WG64: [SYCL/device requirements]
; WG64-NEXT: aspects=2|AAAAAAAAAAA
; WG64-NEXT: reqd_sub_group_size=1|16
; WG64-NEXT: reqd_work_group_size_uint64_t=2|ABAAAAAAAAAQAAAAAAAAAA
; WG32: [SYCL/device requirements]
; WG32-NEXT: aspects=2|AAAAAAAAAAA
; WG32-NEXT: reqd_work_group_size_uint64_t=2|ABAAAAAAAAAIAAAAAAAAAA

define weak_odr spir_kernel void @k32() #0 !reqd_work_group_size !1 {
  ret void
}

define weak_odr spir_kernel void @k64() #0 !reqd_work_group_size !0 !intel_reqd_sub_group_size !2 {
  ret void
}

attributes #0 = { "sycl-module-id"="a.cpp" }

!0 = !{i32 64}
!1 = !{i32 32}
!2 = !{i32 16}
