; RUN: minisycl post-link -properties -symbols -split=auto %s -o %t.table -o intel_gpu_pvc,%t-pvc.table -o intel_gpu_tgllp,%t-tgllp.table -o intel_gpu_cfl,%t-cfl.table -o no_such_gpu,%t-unknown.table
; RUN: filecheck %s --input-file=%t_0.sym --check-prefix=SYM0
; RUN: filecheck %s --input-file=%t_1.sym --check-prefix=SYM1
; RUN: filecheck %s --input-file=%t_2.sym --check-prefix=SYM2
; RUN: filecheck %s --input-file=%t_3.sym --check-prefix=SYM3
; RUN: filecheck %s --input-file=%t.table --check-prefix=ALL
; RUN: filecheck %s --input-file=%t-unknown.table --check-prefix=UNKNOWN
; RUN: filecheck %s --input-file=%t-pvc.table --check-prefix=PVC
; RUN: filecheck %s --input-file=%t-tgllp.table --check-prefix=TGLLP
; RUN: filecheck %s --input-file=%t-cfl.table --check-prefix=CFL
; RUN: filecheck %s --input-file=%t_intel_gpu_tgllp_3.prop --check-prefix=PROP
; Several -o in one run: the module is split once, the images are numbered
; once and named after the first table, and each table lists the images its
; target can run (upstream's saveModule loop).  No target, or a target with no
; device config, keeps every image.

; Images in descending order of the per-source key: fp64, sg8, sg64, plain.
; SYM0: fp64_kernel
; SYM1: sg8_kernel
; SYM2: sg64_kernel
; SYM3: plain_kernel

; ALL: [Code|Properties|Symbols]
; ALL-NEXT: {{.*}}_0.bc|{{.*}}_0.prop|{{.*}}_0.sym
; ALL-NEXT: {{.*}}_1.bc|{{.*}}_1.prop|{{.*}}_1.sym
; ALL-NEXT: {{.*}}_2.bc|{{.*}}_2.prop|{{.*}}_2.sym
; ALL-NEXT: {{.*}}_3.bc|{{.*}}_3.prop|{{.*}}_3.sym
; ALL-EMPTY:
; UNKNOWN: [Code|Properties|Symbols]
; UNKNOWN-NEXT: {{.*}}_0.bc|{{.*}}_no_such_gpu_0.prop|{{.*}}_0.sym
; UNKNOWN-NEXT: {{.*}}_1.bc
; UNKNOWN-NEXT: {{.*}}_2.bc
; UNKNOWN-NEXT: {{.*}}_3.bc
; UNKNOWN-EMPTY:
; pvc: sub-groups 16 and 32 only.
; PVC: [Code|Properties|Symbols]
; PVC-NEXT: {{.*}}_0.bc|{{.*}}_intel_gpu_pvc_0.prop|{{.*}}_0.sym
; PVC-NEXT: {{.*}}_3.bc|{{.*}}_intel_gpu_pvc_3.prop|{{.*}}_3.sym
; PVC-EMPTY:
; tgllp: no fp64, no sub-group 64.
; TGLLP: [Code|Properties|Symbols]
; TGLLP-NEXT: {{.*}}_1.bc|{{.*}}_intel_gpu_tgllp_1.prop|{{.*}}_1.sym
; TGLLP-NEXT: {{.*}}_3.bc|{{.*}}_intel_gpu_tgllp_3.prop|{{.*}}_3.sym
; TGLLP-EMPTY:
; cfl (Coffee Lake): fp64, but no sub-group 64.
; CFL: [Code|Properties|Symbols]
; CFL-NEXT: {{.*}}_0.bc
; CFL-NEXT: {{.*}}_1.bc
; CFL-NEXT: {{.*}}_3.bc
; CFL-EMPTY:
; A target's .prop files name it ("intel_gpu_tgllp").
; PROP: [SYCL/device requirements]
; PROP-NEXT: aspects=2|AAAAAAAAAAA
; PROP-NEXT: compile_target=2|4BAAAAAAAAQauRXZs91ZwV3X0dGbsBH

define spir_kernel void @fp64_kernel(ptr %out) #0 !sycl_used_aspects !1 {
  store double 1.0, ptr %out
  ret void
}

define spir_kernel void @plain_kernel(ptr %out) #0 {
  store float 1.0, ptr %out
  ret void
}

define spir_kernel void @sg8_kernel() #0 !intel_reqd_sub_group_size !2 {
  ret void
}

define spir_kernel void @sg64_kernel() #0 !intel_reqd_sub_group_size !3 {
  ret void
}

attributes #0 = { "sycl-module-id"="a.cpp" }

!sycl_aspects = !{!0}
!0 = !{!"fp64", i32 6}
!1 = !{i32 6}
!2 = !{i32 8}
!3 = !{i32 64}
