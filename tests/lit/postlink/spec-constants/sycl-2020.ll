; Mirrors upstream's sycl-post-link/spec-constants/SYCL-2020.ll (input rewritten:
; opaque pointers, our own constants): scalar and composite reads lowered in
; emulation (-spec-const=default) and native (-spec-const=rt) modes.
; RUN: minisycl post-link -properties -spec-const=default %s -S -o %t.table
; RUN: filecheck %s --check-prefixes=CHECK,CHECK-DEF < %t_0.ll
; RUN: filecheck %s --check-prefixes=CHECK-PROPS,CHECK-PROPS-DEF < %t_0.prop
; RUN: minisycl post-link -properties -spec-const=rt %s -S -o %t.table
; RUN: filecheck %s --check-prefixes=CHECK,CHECK-RT < %t_0.ll
; RUN: filecheck %s --check-prefixes=CHECK-PROPS < %t_0.prop

%struct.Inner = type { i32, float }
%struct.Outer = type { i32, double, %struct.Inner }
%struct.Small = type { i8, %struct.Inner, double }

@sc_half = global { half } { half 0xH4000 }, align 8
@sc_int = global { i32 } { i32 42 }, align 4
@sc_outer = global { %struct.Outer } { %struct.Outer { i32 1, double 2.000000e+00, %struct.Inner { i32 13, float 2.500000e+00 } } }, align 8
@sc_small = global { %struct.Small } zeroinitializer, align 8

; the specialization_id globals stay
; CHECK: @sc_half
; CHECK: @sc_int

@name_half = private unnamed_addr constant [8 x i8] c"sc_half\00", align 1
@name_int = private unnamed_addr constant [7 x i8] c"sc_int\00", align 1
@name_outer = private unnamed_addr constant [9 x i8] c"sc_outer\00", align 1
@name_small = private unnamed_addr constant [9 x i8] c"sc_small\00", align 1

; CHECK-LABEL: define spir_kernel void @scalars(
define spir_kernel void @scalars(ptr %out, ptr %buf) {
entry:
  %h = call half @_Z37__sycl_getScalar2020SpecConstantValueIDhET_PKcPvS3_(ptr @name_half, ptr @sc_half, ptr %buf)
; CHECK-DEF: %[[G0:spec.const.[0-9]+]] = getelementptr i8, ptr %buf, i32 0
; CHECK-DEF: %h = load half, ptr %[[G0]], align 2
; CHECK-RT: %h = call half @_Z20__spirv_SpecConstantiDh(i32 [[#HID:]], half 0xH4000)
  %i = call i32 @_Z37__sycl_getScalar2020SpecConstantValueIiET_PKcPvS3_(ptr @name_int, ptr @sc_int, ptr %buf)
; CHECK-DEF: %[[G1:spec.const.[0-9]+]] = getelementptr i8, ptr %buf, i32 4
; CHECK-DEF: %i = load i32, ptr %[[G1]], align 4
; CHECK-RT: %i = call i32 @_Z20__spirv_SpecConstantii(i32 [[#IID:]], i32 42)
  %i2 = call i32 @_Z37__sycl_getScalar2020SpecConstantValueIiET_PKcPvS3_(ptr @name_int, ptr @sc_int, ptr %buf)
; CHECK-DEF: getelementptr i8, ptr %buf, i32 4
; CHECK-RT: %i2 = call i32 @_Z20__spirv_SpecConstantii(i32 [[#IID]], i32 42)
  %f = sitofp i32 %i2 to half
  %s = fadd half %h, %f
  store half %s, ptr %out, align 2
  ret void
}

; CHECK-LABEL: define spir_kernel void @composites(
define spir_kernel void @composites(ptr %buf) {
entry:
  %tmp = alloca %struct.Outer, align 8
  %tmp2 = alloca %struct.Small, align 8
  call void @_Z40__sycl_getComposite2020SpecConstantValueI5OuterET_PKcPvS4_(ptr sret(%struct.Outer) align 8 %tmp, ptr @name_outer, ptr @sc_outer, ptr %buf)
; CHECK-DEF: %[[G2:spec.const.[0-9]+]] = getelementptr i8, ptr %buf, i32 8
; CHECK-DEF: %[[V2:spec.const.[0-9]+]] = load %struct.Outer, ptr %[[G2]], align 8
; CHECK-DEF: store %struct.Outer %[[V2]], ptr %tmp, align 8
; CHECK-RT: %[[E1:spec.const.[0-9]+]] = call i32 @_Z20__spirv_SpecConstantii(i32 [[#OID0:]], i32 1)
; CHECK-RT: %[[E2:spec.const.[0-9]+]] = call double @_Z20__spirv_SpecConstantid(i32 [[#OID1:]], double 2.000000e+00)
; CHECK-RT: %[[E3:spec.const.[0-9]+]] = call i32 @_Z20__spirv_SpecConstantii(i32 [[#OID2:]], i32 13)
; CHECK-RT: %[[E4:spec.const.[0-9]+]] = call float @_Z20__spirv_SpecConstantif(i32 [[#OID3:]], float 2.500000e+00)
; CHECK-RT: %[[C1:spec.const.[0-9]+]] = call %struct.Inner @_Z29__spirv_SpecConstantCompositeif_Rstruct.Inner(i32 %[[E3]], float %[[E4]])
; CHECK-RT: %[[C2:spec.const.[0-9]+]] = call %struct.Outer @_Z29__spirv_SpecConstantCompositeidstruct.Inner_Rstruct.Outer(i32 %[[E1]], double %[[E2]], %struct.Inner %[[C1]])
; CHECK-RT: store %struct.Outer %[[C2]], ptr %tmp, align 8
  call void @_Z40__sycl_getComposite2020SpecConstantValueI5SmallET_PKcPvS4_(ptr sret(%struct.Small) align 8 %tmp2, ptr @name_small, ptr @sc_small, ptr %buf)
; CHECK-DEF: getelementptr i8, ptr %buf, i32 32
; CHECK-RT: call i8 @_Z20__spirv_SpecConstantia(i32 [[#]], i8 0)
; CHECK-RT: call %struct.Small @_Z29__spirv_SpecConstantCompositeastruct.Innerd_Rstruct.Small(
  ret void
}

declare half @_Z37__sycl_getScalar2020SpecConstantValueIDhET_PKcPvS3_(ptr, ptr, ptr)
declare i32 @_Z37__sycl_getScalar2020SpecConstantValueIiET_PKcPvS3_(ptr, ptr, ptr)
declare void @_Z40__sycl_getComposite2020SpecConstantValueI5OuterET_PKcPvS4_(ptr sret(%struct.Outer) align 8, ptr, ptr, ptr)
declare void @_Z40__sycl_getComposite2020SpecConstantValueI5SmallET_PKcPvS4_(ptr sret(%struct.Small) align 8, ptr, ptr, ptr)

; CHECK-NOT: __sycl_get
; CHECK: !sycl.specialization-constants = !{![[#M0:]], ![[#M1:]], ![[#M2:]], ![[#M3:]]}
; CHECK: !sycl.specialization-constants-default-values = !{
; emulation: one id per constant; the padding before sc_int (2 bytes) is
; appended to sc_half's descriptor, as upstream does
; CHECK-DEF: ![[#M0]] = !{!"sc_half", i32 0, i32 0, i32 2, i32 -1, i32 2, i32 2}
; CHECK-DEF: ![[#M1]] = !{!"sc_int", i32 1, i32 0, i32 4}
; CHECK-DEF: ![[#M2]] = !{!"sc_outer", i32 2, i32 0, i32 24}
; native: one id per scalar leaf, offsets inside the constant, struct tail padding as id -1
; CHECK-RT: ![[#M0]] = !{!"sc_half", i32 [[#HID]], i32 0, i32 2}
; CHECK-RT: ![[#M1]] = !{!"sc_int", i32 [[#IID]], i32 0, i32 4}
; CHECK-RT: ![[#M2]] = !{!"sc_outer", i32 [[#OID0]], i32 0, i32 4, i32 [[#OID1]], i32 8, i32 8, i32 [[#OID2]], i32 16, i32 4, i32 [[#OID3]], i32 20, i32 4}
; CHECK-RT: ![[#M3]] = !{!"sc_small", i32 {{[0-9]+}}, i32 0, i32 1, i32 {{[0-9]+}}, i32 4, i32 4, i32 {{[0-9]+}}, i32 8, i32 4, i32 {{[0-9]+}}, i32 16, i32 8}

; CHECK-PROPS: [SYCL/specialization constants]
; CHECK-PROPS-NEXT: sc_half=2|
; CHECK-PROPS-NEXT: sc_int=2|
; CHECK-PROPS-NEXT: sc_outer=2|
; CHECK-PROPS-NEXT: sc_small=2|
; CHECK-PROPS-NEXT: [SYCL/specialization constants default values]
; CHECK-PROPS-NEXT: all=2|
