; RUN: minisycl post-link -split=kernel -symbols -S < %s -o %t.k.table
; RUN: filecheck %s --input-file=%t.k.table --check-prefix=KTABLE
; RUN: filecheck %s --input-file=%t.k_0.sym --check-prefix=K0SYM
; RUN: filecheck %s --input-file=%t.k_0.ll --check-prefix=K0IR
; RUN: minisycl post-link -split=source -symbols -S < %s -o %t.s.table
; RUN: filecheck %s --input-file=%t.s_0.sym --check-prefix=S0SYM
; RUN: filecheck %s --input-file=%t.s_1.sym --check-prefix=S1SYM
; RUN: filecheck %s --input-file=%t.s_1.ll --check-prefix=S1IR
; RUN: minisycl post-link -S < %s -o %t.n.table
; RUN: filecheck %s --input-file=%t.n.table --check-prefix=NTABLE
; Per-kernel: one image per entry point, descending names.  Per-source: one
; image per "sycl-module-id" (TU2 before TU1).  Shared functions are copied
; and internal in each copy (upstream internalizes non-entry functions).

; KTABLE: [Code|Symbols]
; KTABLE-NEXT: {{.*}}.k_0.ll|{{.*}}.k_0.sym
; KTABLE-NEXT: {{.*}}.k_1.ll|{{.*}}.k_1.sym
; KTABLE-NEXT: {{.*}}.k_2.ll|{{.*}}.k_2.sym
; KTABLE-NEXT: {{.*}}.k_3.ll|{{.*}}.k_3.sym
; KTABLE-EMPTY:
; K0SYM: tu2_kernel
; K0SYM-EMPTY:
; K0IR: define internal spir_func i32 @shared(
; K0IR-NOT: define {{.*}}@tu1_
; S0SYM: tu2_kernel
; S0SYM-NEXT: tu2_external
; S1SYM: tu1_kernel_a
; S1SYM-NEXT: tu1_kernel_b
; S1IR: define internal spir_func i32 @shared(
; S1IR-NOT: @tu2_kernel
; NTABLE: [Code]
; NTABLE-NEXT: {{.*}}.n_0.ll
; NTABLE-EMPTY:

define spir_func i32 @shared(i32 %x) {
  ret i32 %x
}

define weak_odr spir_kernel void @tu1_kernel_a() #0 {
  %r = call spir_func i32 @shared(i32 1)
  ret void
}

define weak_odr spir_kernel void @tu1_kernel_b() #0 {
  ret void
}

define weak_odr spir_kernel void @tu2_kernel() #1 {
  %r = call spir_func i32 @shared(i32 2)
  ret void
}

; SYCL_EXTERNAL: an entry point of its own.
define spir_func void @tu2_external() #1 {
  ret void
}

; Not an entry point and not used by one: in no image.
define spir_func void @unused() {
  ret void
}

attributes #0 = { "sycl-module-id"="TU1.cpp" }
attributes #1 = { "sycl-module-id"="TU2.cpp" }
