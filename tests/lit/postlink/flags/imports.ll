; RUN: minisycl post-link -symbols -imports -split=kernel -S < %s -o %t.table
; RUN: filecheck %s -input-file=%t.table --check-prefix=TABLE
; RUN: filecheck %s -input-file=%t_0.imported_sym --check-prefix=IMP0
; RUN: filecheck %s -input-file=%t_1.imported_sym --check-prefix=IMP1
; RUN: filecheck %s -input-file=%t_2.imported_sym --check-prefix=IMP2
; Upstream's older -imports option (its imported.ll): per image the functions
; it declares, in module order, except demangled names starting with __ or
; _spirv; an "Imported Symbols" column before "Symbols". A declaration needs
; no "sycl-module-id" here.

; TABLE: [Code|Imported Symbols|Symbols]
; TABLE-NEXT: {{.*}}_0.ll|{{.*}}_0.imported_sym|{{.*}}_0.sym

; Images in upstream's order (names descending): k_two, k_one, then helper
; (an entry point: it has a module id), which imports only what it calls.
; IMP0: ext_b
; IMP0-NEXT: ext_c
; IMP0-NEXT: ext_d
; IMP0-NEXT: _Z5otherv
; IMP0-EMPTY:
; IMP1: ext_a
; IMP1-NEXT: ext_c
; IMP1-NEXT: ext_d
; IMP1-EMPTY:
; IMP2: ext_d
; IMP2-EMPTY:
; IMP0-NOT: reserved
; IMP0-NOT: spirv

target triple = "spir64-unknown-unknown"

define weak_odr spir_kernel void @k_one() #0 {
  call void @ext_a()
  call void @ext_c()
  call void @helper()
  ret void
}

define weak_odr spir_kernel void @k_two() #0 {
  call void @ext_b()
  call void @ext_c()
  call void @helper()
  call void @_Z10__reservedv()
  call void @_Z5otherv()
  call void @_Z12_spirv_thingv()
  ret void
}

define void @helper() #0 {
  call void @ext_d()
  ret void
}

declare void @ext_a()
declare void @ext_b()
declare void @ext_c()
declare void @ext_d()
declare void @_Z10__reservedv()
declare void @_Z5otherv()
declare void @_Z12_spirv_thingv()

attributes #0 = { "sycl-module-id"="m.cpp" }
