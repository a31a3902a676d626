; RUN: minisycl post-link -properties --device-globals -S < %s -o %t.files.table
; RUN: filecheck %s -input-file=%t.files_0.prop --check-prefix=PROPS
; RUN: filecheck %s -input-file=%t.files_0.ll --check-prefix=IR
; Upstream's test_global_variable.ll values; a global without
; "sycl-device-global-size" is not a device global; unused ones are dropped and
; device globals leave @llvm.compiler.used (test_global_variable_trim_used.ll).

; PROPS: [SYCL/device globals]
; PROPS-NEXT: 6da74a122db9f35d____ZL7dg_int1=2|ABAAAAAAAAABAAAAAAAAAA
; PROPS-NEXT: 7da74a1187b9f35d____ZL7dg_int2=2|ABAAAAAAAAABAAAAAAAAAA
; PROPS-NEXT: 9d329ad59055e972____ZL8dg_bool3=2|ABAAAAAAAAQAAAAABAAAAA
; PROPS-NEXT: dda2bad52c45c432____ZL8dg_bool4=2|ABAAAAAAAAQAAAAABAAAAA
; PROPS-NOT: not_dg
; PROPS-NOT: unused

; IR: @llvm.compiler.used = appending global [2 x ptr] [ptr @not_dg, ptr @keep_me]
; IR-NOT: @unused_dg

@_ZL7dg_int1 = internal global { ptr, i32 } zeroinitializer, align 8 #0
@_ZL7dg_int2 = internal global { ptr, i32 } zeroinitializer, align 8 #1
@_ZL8dg_bool3 = internal global { i8 } zeroinitializer, align 1 #2
@_ZL8dg_bool4 = internal global { i8 } zeroinitializer, align 1 #3
@not_dg = internal global i32 0, align 4 #4
@unused_dg = global { ptr, i32 } zeroinitializer, align 8 #5
@keep_me = global i32 0
@llvm.compiler.used = appending global [7 x ptr] [ptr @_ZL7dg_int1, ptr @_ZL7dg_int2, ptr @_ZL8dg_bool3, ptr @_ZL8dg_bool4, ptr @not_dg, ptr @unused_dg, ptr @keep_me], section "llvm.metadata"

define weak_odr spir_kernel void @kernel() #6 {
  %a = load i32, ptr getelementptr inbounds ({ ptr, i32 }, ptr @_ZL7dg_int1, i32 0, i32 1)
  %b = load i32, ptr getelementptr inbounds ({ ptr, i32 }, ptr @_ZL7dg_int2, i32 0, i32 1)
  %c = load i8, ptr @_ZL8dg_bool3
  %d = load i8, ptr @_ZL8dg_bool4
  %e = load i32, ptr @not_dg
  %f = load i32, ptr @keep_me
  ret void
}

attributes #0 = { "sycl-unique-id"="6da74a122db9f35d____ZL7dg_int1" "sycl-device-global-size"="4" "sycl-device-image-scope"="false" }
attributes #1 = { "sycl-unique-id"="7da74a1187b9f35d____ZL7dg_int2" "sycl-device-global-size"="4" }
attributes #2 = { "sycl-unique-id"="9d329ad59055e972____ZL8dg_bool3" "sycl-device-global-size"="1" "sycl-device-image-scope"="true" }
attributes #3 = { "sycl-unique-id"="dda2bad52c45c432____ZL8dg_bool4" "sycl-device-global-size"="1" "sycl-device-image-scope" }
attributes #4 = { "sycl-unique-id"="not_dg" "sycl-device-image-scope" }
attributes #5 = { "sycl-unique-id"="unused" "sycl-device-global-size"="4" }
attributes #6 = { "sycl-module-id"="a.cpp" }
