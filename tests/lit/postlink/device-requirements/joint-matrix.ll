; RUN: minisycl post-link -properties -split=kernel %s -o %t.table
; RUN: filecheck %s -input-file=%t_0.prop --check-prefix=K0 --match-full-lines
; RUN: filecheck %s -input-file=%t_1.prop --check-prefix=K1 --match-full-lines
; RUN: minisycl post-link -properties -split=none %s -o %t.none.table
; RUN: filecheck %s -input-file=%t.none_0.prop --check-prefix=NONE0 --match-full-lines
; RUN: filecheck %s -input-file=%t.none_1.prop --check-prefix=NONE1 --match-full-lines
; Upstream's device-requirements/joint-matrix.ll: !sycl_joint_matrix and
; !sycl_joint_matrix_mad become joint_matrix / joint_matrix_mad (strings) in
; [SYCL/device requirements], keys in alphabetical order; over an image's
; functions in module order the last non-empty string counts.

; K0: [SYCL/device requirements]
; K0-NEXT: aspects=2|AAAAAAAAAAA
; K0-NEXT: joint_matrix=2|wDAAAAAAAAQbhRncph3X0lHclpjOmBnN0wSdzVmO6EGLxYDLxYD
; K0-NOT: joint_matrix_mad
; K1: [SYCL/device requirements]
; K1-NEXT: aspects=2|AAAAAAAAAAA
; K1-NEXT: joint_matrix=2|gMAAAAAAAAQbhRncph3X0lHclpjOmB3MywSdzVmO6EGL4wSM2sTbhRncph3X0lHclpjOmB3MywSdzVmO6E2YjVXb1xWY09mcsgDLxYzOtFGdylGefRXewVmO6YGczIDL1NXZ6ojYsEjNsEjN
; K1-NEXT: joint_matrix_mad=2|4JAAAAAAAAQbhRncph3X0lHclpjOmB3MywSbhRncph3X0lHclpjOmB3MywSbhRncph3X0lHclpjOmB3MywSbhRncph3X0lHclpjOmB3MywCOsEjNsEjN
; K1-NEXT: reqd_sub_group_size=1|16
; -split=none keeps kernels that need different optional features apart (the
; optional-kernel-features design; README): mat_a requires sub-group size 16,
; so each kernel has an image of its own, with its own strings.
; NONE0: joint_matrix=2|gMAAAAAAAAQbhRncph3X0lHclpjOmB3MywSdzVmO6EGL4wSM2sTbhRncph3X0lHclpjOmB3MywSdzVmO6E2YjVXb1xWY09mcsgDLxYzOtFGdylGefRXewVmO6YGczIDL1NXZ6ojYsEjNsEjN
; NONE0-NEXT: joint_matrix_mad=2|4JAAAAAAAAQbhRncph3X0lHclpjOmB3MywSbhRncph3X0lHclpjOmB3MywSbhRncph3X0lHclpjOmB3MywSbhRncph3X0lHclpjOmB3MywCOsEjNsEjN
; NONE1: joint_matrix=2|wDAAAAAAAAQbhRncph3X0lHclpjOmBnN0wSdzVmO6EGLxYDLxYD
; NONE1-NOT: joint_matrix_mad

target triple = "spir64-unknown-unknown"

define weak_odr spir_kernel void @mat_a() #0 !sycl_joint_matrix !0 !sycl_joint_matrix_mad !1 !intel_reqd_sub_group_size !4 {
  ret void
}

define weak_odr spir_kernel void @mat_b() #0 !sycl_joint_matrix !2 !sycl_joint_matrix_mad !3 {
  ret void
}

attributes #0 = { "sycl-module-id"="m.cpp" }

!0 = !{!"matrix_type::fp32,use::a,8,16;matrix_type::fp32,use::accumulator,8,16;matrix_type::fp32,use::b,16,16"}
!1 = !{!"matrix_type::fp32,matrix_type::fp32,matrix_type::fp32,matrix_type::fp32,8,16,16"}
!2 = !{!"matrix_type::fp64,use::a,16,16"}
!3 = !{!""}
!4 = !{i32 16}
