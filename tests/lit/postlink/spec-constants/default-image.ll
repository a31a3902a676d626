; Mirrors upstream's sycl-post-link/spec-constants/default-value/device-image.ll
; (input rewritten): -generate-device-image-default-spec-consts writes, after
; the image, a copy with the default values folded in and its misc property.
; RUN: minisycl post-link -split=auto -spec-const=rt -properties -symbols -S -o %t.table %s -generate-device-image-default-spec-consts
; RUN: filecheck %s --check-prefix=CHECK-TABLE -DPATH=%t < %t.table
; RUN: filecheck %s --check-prefix=CHECK-PROP0 < %t_0.prop
; RUN: filecheck %s --check-prefix=CHECK-PROP1 < %t_1.prop
; RUN: filecheck %s --check-prefix=CHECK-IR0 < %t_0.ll
; RUN: filecheck %s --check-prefix=CHECK-IR1 < %t_1.ll
; RUN: not grep -q SpecConstant %t_1.ll

; CHECK-TABLE: [[PATH]]_0.ll|[[PATH]]_0.prop|[[PATH]]_0.sym
; CHECK-TABLE: [[PATH]]_1.ll|[[PATH]]_1.prop|[[PATH]]_1.sym

; CHECK-PROP0: [SYCL/specialization constants]
; CHECK-PROP0-NOT: specConstsReplacedWithDefault
; CHECK-PROP1-NOT: [SYCL/specialization constants]
; CHECK-PROP1: [SYCL/misc properties]
; CHECK-PROP1-NEXT: specConstsReplacedWithDefault=1|1

; CHECK-IR0: call i32 @_Z20__spirv_SpecConstantii
; CHECK-IR0: call %struct.B @_Z29__spirv_SpecConstantCompositeiii_Rstruct.B
; CHECK-IR0: call %struct.A @_Z29__spirv_SpecConstantCompositeistruct.B_Rstruct.A

; CHECK-IR1: store %struct.A { i32 3, %struct.B { i32 3, i32 2, i32 1 } }, ptr %a, align 4
; CHECK-IR1-NOT: %scalar = call
; CHECK-IR1: %scalar2 = add i32 123, 1
; CHECK-IR1-NOT: %by_value = call
; CHECK-IR1: %e = extractvalue %struct.C { i32 7 }, 0
; CHECK-IR1: %flag2 = zext i1 true to i32

%struct.A = type { i32, %struct.B }
%struct.B = type { i32, i32, i32 }
%struct.C = type { i32 }

@str_a = private unnamed_addr constant [11 x i8] c"uid_a___c1\00", align 1
@str_v = private unnamed_addr constant [11 x i8] c"uid_v___c2\00", align 1
@str_c = private unnamed_addr constant [11 x i8] c"uid_c___c3\00", align 1
@str_b = private unnamed_addr constant [11 x i8] c"uid_b___c4\00", align 1
@c1 = internal constant { %struct.A } { %struct.A { i32 3, %struct.B { i32 3, i32 2, i32 1 } } }, align 4
@c2 = internal constant { i32 } { i32 123 }, align 4
@c3 = internal constant { %struct.C } { %struct.C { i32 7 } }, align 4
@c4 = internal constant { i8 } { i8 1 }, align 1

declare void @_Z40__sycl_getComposite2020SpecConstantValueI1AET_PKcPKvS5_(ptr sret(%struct.A) align 4, ptr noundef, ptr noundef, ptr noundef)
declare %struct.C @_Z40__sycl_getComposite2020SpecConstantValueI1CET_PKcPKvS5_(ptr noundef, ptr noundef, ptr noundef)
declare i32 @_Z37__sycl_getScalar2020SpecConstantValueIiET_PKcPKvS4_(ptr noundef, ptr noundef, ptr noundef)
declare zeroext i1 @_Z37__sycl_getScalar2020SpecConstantValueIbET_PKcPKvS4_(ptr noundef, ptr noundef, ptr noundef)

define spir_kernel void @func1(ptr %out) {
entry:
  %a = alloca %struct.A, align 4
  call void @_Z40__sycl_getComposite2020SpecConstantValueI1AET_PKcPKvS5_(ptr sret(%struct.A) align 4 %a, ptr noundef @str_a, ptr noundef @c1, ptr noundef null)
  %scalar = call i32 @_Z37__sycl_getScalar2020SpecConstantValueIiET_PKcPKvS4_(ptr noundef @str_v, ptr noundef @c2, ptr noundef null)
  %scalar2 = add i32 %scalar, 1
  %by_value = call %struct.C @_Z40__sycl_getComposite2020SpecConstantValueI1CET_PKcPKvS5_(ptr noundef @str_c, ptr noundef @c3, ptr noundef null)
  %e = extractvalue %struct.C %by_value, 0
  %flag = call zeroext i1 @_Z37__sycl_getScalar2020SpecConstantValueIbET_PKcPKvS4_(ptr noundef @str_b, ptr noundef @c4, ptr noundef null)
  %flag2 = zext i1 %flag to i32
  %s = add i32 %scalar2, %e
  %t = add i32 %s, %flag2
  store i32 %t, ptr %out, align 4
  ret void
}
