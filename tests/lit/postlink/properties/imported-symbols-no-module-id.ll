; RUN: minisycl post-link -properties -symbols -emit-imported-symbols -split=kernel -S < %s -o %t.table
; RUN: filecheck %s -input-file=%t_1.prop --check-prefix=K1
; RUN: filecheck %s -input-file=%t_0.prop --check-prefix=K2
; Upstream's newest emit_imported_symbols.ll: a declaration is imported
; whether or not it has "sycl-module-id"; intrinsics, names starting with __
; (the devicelib functions among them) and demangled names starting with __
; are not; each image lists what it declares, in module order.

; K1: [SYCL/imported symbols]
; K1-NEXT: ext_a=1|1
; K1-NEXT: ext_c=1|1
; K1-NOT: hidden
; K2: [SYCL/imported symbols]
; K2-NEXT: ext_b=1|1
; K2-NEXT: ext_c=1|1
; K2-NEXT: _Z7visiblev=1|1
; K2-NOT: hidden

target triple = "spir64-unknown-unknown"

define weak_odr spir_kernel void @k1(ptr %p) #0 {
  call void @ext_a()
  call void @ext_c()
  call void @llvm.memset.p0.i64(ptr %p, i8 0, i64 4, i1 false)
  ret void
}

define weak_odr spir_kernel void @k2() #0 {
  call void @ext_b()
  call void @ext_c()
  call void @_Z9__hiddenv()
  call void @_Z7visiblev()
  call float @__devicelib_hiddenf(float 1.0)
  ret void
}

define void @another() #0 {
  ret void
}

declare void @ext_a()
declare void @ext_b()
declare void @ext_c() #0
declare void @_Z9__hiddenv()
declare void @_Z7visiblev()
declare float @__devicelib_hiddenf(float)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

attributes #0 = { "sycl-module-id"="a.cpp" }
