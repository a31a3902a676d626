; Mirrors upstream's sycl-post-link/spec-constants/spec_const_and_split.ll
; (input rewritten): with -split=kernel (images in upstream's order: k2 first) each image numbers and lists only the
; constants its own kernel reads; a constant two kernels read is in both.
; RUN: minisycl post-link -split=kernel -spec-const=rt -properties -S %s -o %t.table
; RUN: filecheck %s --check-prefix=CHECK-IR1 < %t_1.ll
; RUN: filecheck %s --check-prefix=CHECK-IR0 < %t_0.ll
; RUN: filecheck %s --check-prefix=CHECK-PROP1 < %t_1.prop
; RUN: filecheck %s --check-prefix=CHECK-PROP0 < %t_0.prop

@s_a = private unnamed_addr constant [2 x i8] c"A\00"
@s_b = private unnamed_addr constant [2 x i8] c"B\00"
@s_c = private unnamed_addr constant [2 x i8] c"C\00"
@a = constant { i32 } { i32 1 }
@b = constant { i64 } { i64 2 }
@c = constant { float } { float 3.000000e+00 }

declare i32 @_Z37__sycl_getScalar2020SpecConstantValueIiET_PKcPvS3_(ptr, ptr, ptr)
declare i64 @_Z37__sycl_getScalar2020SpecConstantValueIlET_PKcPvS3_(ptr, ptr, ptr)
declare float @_Z37__sycl_getScalar2020SpecConstantValueIfET_PKcPvS3_(ptr, ptr, ptr)

; CHECK-IR1-LABEL: define spir_kernel void @k1(
; CHECK-IR1: call i32 @_Z20__spirv_SpecConstantii(i32 0, i32 1)
; CHECK-IR1: call float @_Z20__spirv_SpecConstantif(i32 1, float 3.000000e+00)
; CHECK-IR1-NOT: __spirv_SpecConstantix
define spir_kernel void @k1(ptr %out) #0 {
  %x = call i32 @_Z37__sycl_getScalar2020SpecConstantValueIiET_PKcPvS3_(ptr @s_a, ptr @a, ptr null)
  %z = call float @_Z37__sycl_getScalar2020SpecConstantValueIfET_PKcPvS3_(ptr @s_c, ptr @c, ptr null)
  %zi = fptosi float %z to i32
  %s = add i32 %x, %zi
  store i32 %s, ptr %out
  ret void
}

; CHECK-IR0-LABEL: define spir_kernel void @k2(
; CHECK-IR0: call i64 @_Z20__spirv_SpecConstantix(i32 0, i64 2)
; CHECK-IR0: call float @_Z20__spirv_SpecConstantif(i32 1, float 3.000000e+00)
define spir_kernel void @k2(ptr %out) #0 {
  %y = call i64 @_Z37__sycl_getScalar2020SpecConstantValueIlET_PKcPvS3_(ptr @s_b, ptr @b, ptr null)
  %z = call float @_Z37__sycl_getScalar2020SpecConstantValueIfET_PKcPvS3_(ptr @s_c, ptr @c, ptr null)
  %zi = fptosi float %z to i64
  %s = add i64 %y, %zi
  store i64 %s, ptr %out
  ret void
}

attributes #0 = { "sycl-module-id"="a.cpp" }

; CHECK-PROP1: [SYCL/specialization constants]
; CHECK-PROP1-NEXT: A=2|
; CHECK-PROP1-NEXT: C=2|
; CHECK-PROP1-NEXT: [SYCL/specialization constants default values]
; CHECK-PROP0: [SYCL/specialization constants]
; CHECK-PROP0-NEXT: B=2|
; CHECK-PROP0-NEXT: C=2|
