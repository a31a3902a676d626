; Mirrors upstream's sycl-post-link/spec-constants/bool.ll (input rewritten:
; opaque pointers in SPIR's generic address space): a bool constant is an i8 in
; memory, read as i1 (native: an i8 __spirv_SpecConstant then trunc; emulation:
; an i8 load then trunc), with -ir-output-only; a struct with tail padding gets
; upstream's padding triple in native mode.
; RUN: minisycl post-link -spec-const=rt -S %s -ir-output-only -o %t.ll
; RUN: filecheck %s --check-prefixes=CHECK,CHECK-RT < %t.ll
; RUN: minisycl post-link -spec-const=default -S %s -ir-output-only -o %t.ll
; RUN: filecheck %s --check-prefixes=CHECK,CHECK-DEF < %t.ll

target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64"
target triple = "spir64-unknown-unknown"

%struct.spec_id_type = type { i8 }
%struct.spec_id_type2 = type { %struct.user_type }
%struct.user_type = type { float, i32, i8 }

@name_A = private unnamed_addr addrspace(1) constant [7 x i8] c"name_A\00", align 1
@name_B = private unnamed_addr addrspace(1) constant [7 x i8] c"name_B\00", align 1
@spec_const1 = linkonce_odr addrspace(1) constant %struct.spec_id_type { i8 1 }, align 1
@spec_const2 = linkonce_odr addrspace(1) constant %struct.spec_id_type2 { %struct.user_type { float 2.000000e+01, i32 20, i8 20 } }, align 4

declare spir_func zeroext i1 @_Z37__sycl_getScalar2020SpecConstantValueIbET_PKcPKvS4_(ptr addrspace(4), ptr addrspace(4), ptr addrspace(4))
declare spir_func void @_Z40__sycl_getComposite2020SpecConstantValueI9user_typeET_PKcPKvS7_(ptr addrspace(4) sret(%struct.user_type) align 4, ptr addrspace(4), ptr addrspace(4), ptr addrspace(4))

; CHECK-LABEL: void @kernel_A
; CHECK-RT: %[[CALL:spec.const.[0-9]+]] = call i8 @_Z20__spirv_SpecConstantia(i32 0, i8 1)
; CHECK-RT: %call = trunc i8 %[[CALL]] to i1
; CHECK-DEF: %[[GEP:spec.const.[0-9]+]] = getelementptr i8, ptr addrspace(4) %buf, i32 0
; CHECK-DEF: %[[LOAD:spec.const.[0-9]+]] = load i8, ptr addrspace(4) %[[GEP]], align 1
; CHECK-DEF: %call = trunc i8 %[[LOAD]] to i1
define spir_kernel void @kernel_A(ptr addrspace(1) %out, ptr addrspace(4) %buf) {
entry:
  %call = tail call spir_func zeroext i1 @_Z37__sycl_getScalar2020SpecConstantValueIbET_PKcPKvS4_(ptr addrspace(4) addrspacecast (ptr addrspace(1) @name_A to ptr addrspace(4)), ptr addrspace(4) addrspacecast (ptr addrspace(1) @spec_const1 to ptr addrspace(4)), ptr addrspace(4) %buf)
  %frombool = zext i1 %call to i8
  store i8 %frombool, ptr addrspace(1) %out, align 1
  ret void
}

; CHECK-LABEL: void @kernel_B
; CHECK-RT: call float @_Z20__spirv_SpecConstantif(i32 1, float 2.000000e+01)
; CHECK-RT: call i32 @_Z20__spirv_SpecConstantii(i32 2, i32 20)
; CHECK-RT: call i8 @_Z20__spirv_SpecConstantia(i32 3, i8 20)
; CHECK-RT: call %struct.user_type @_Z29__spirv_SpecConstantCompositefia_Rstruct.user_type(
; CHECK-DEF: %[[GEP:spec.const.[0-9]+]] = getelementptr i8, ptr addrspace(4) null, i32 4
; CHECK-DEF: %[[LOAD:spec.const.[0-9]+]] = load %struct.user_type, ptr addrspace(4) %[[GEP]], align 4
; CHECK-DEF: store %struct.user_type %[[LOAD]], ptr addrspace(4) %tmp.ascast, align 4
define spir_kernel void @kernel_B(ptr addrspace(1) %out) {
entry:
  %tmp = alloca %struct.user_type, align 4
  %tmp.ascast = addrspacecast ptr %tmp to ptr addrspace(4)
  call spir_func void @_Z40__sycl_getComposite2020SpecConstantValueI9user_typeET_PKcPKvS7_(ptr addrspace(4) sret(%struct.user_type) align 4 %tmp.ascast, ptr addrspace(4) addrspacecast (ptr addrspace(1) @name_B to ptr addrspace(4)), ptr addrspace(4) addrspacecast (ptr addrspace(1) @spec_const2 to ptr addrspace(4)), ptr addrspace(4) null)
  ret void
}

; native: the struct's 3 bytes of tail padding are a (-1, 9, 3) triple
; CHECK-RT: !{!"name_A", i32 0, i32 0, i32 1}
; CHECK-RT: !{!"name_B", i32 1, i32 0, i32 4, i32 2, i32 4, i32 4, i32 3, i32 8, i32 1, i32 -1, i32 9, i32 3}
; emulation: name_B aligned to 4, so 3 bytes of padding follow name_A
; CHECK-DEF: !{!"name_A", i32 0, i32 0, i32 1, i32 -1, i32 1, i32 3}
; CHECK-DEF: !{!"name_B", i32 1, i32 0, i32 12}
