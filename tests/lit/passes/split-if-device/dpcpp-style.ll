; RUN: minisycl opt -passes=split-if-device %s --host-output %t.host.ll -o - | filecheck %s
; RUN: filecheck %s --check-prefix=HOST --input-file %t.host.ll
; IR in DPC++'s style (opaque pointers, comdats, weak_odr kernels, device
; globals in @llvm.compiler.used): the device half keeps exactly the device
; roots and what they reach.

target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64"
target triple = "spir64-unknown-unknown"

$_ZTSZ4mainE6Kernel = comdat any
$_Z6helperi = comdat any

; The unused device global is still a device root; compiler.used keeps both.
; CHECK: @dg = {{.*}}global { ptr, i32 }
; CHECK: @dg_unused =
; CHECK: @llvm.compiler.used = appending global [2 x ptr] [ptr @dg, ptr @dg_unused]
; HOST-NOT: @dg
@dg = linkonce_odr dso_local addrspace(0) global { ptr, i32 } zeroinitializer, align 8 #0
@dg_unused = dso_local global { ptr, i32 } zeroinitializer, align 8 #3
@llvm.compiler.used = appending global [2 x ptr] [ptr @dg, ptr @dg_unused], section "llvm.metadata"

; CHECK-LABEL: define weak_odr dso_local spir_kernel void @_ZTSZ4mainE6Kernel(
; CHECK-SAME: comdat
define weak_odr dso_local spir_kernel void @_ZTSZ4mainE6Kernel(ptr addrspace(1) noundef align 4 %out) #1 comdat !srcloc !5 {
entry:
  %v = call spir_func i32 @_Z6helperi(i32 3)
  %slot = getelementptr inbounds { ptr, i32 }, ptr @dg, i32 0, i32 1
  store i32 %v, ptr %slot, align 4
  ret void
}

; CHECK-LABEL: define linkonce_odr spir_func i32 @_Z6helperi(
define linkonce_odr spir_func i32 @_Z6helperi(i32 %x) comdat {
entry:
  %r = mul i32 %x, 2
  ret i32 %r
}

; SYCL_EXTERNAL: device root, and callable from the host too.
; CHECK-LABEL: define dso_local spir_func void @_Z8externalv(
; HOST-LABEL: define dso_local spir_func void @_Z8externalv(
define dso_local spir_func void @_Z8externalv() #2 {
entry:
  ret void
}

; Host code only.
; CHECK-NOT: @main
; HOST-LABEL: define dso_local i32 @main(
define dso_local i32 @main() {
entry:
  call spir_func void @_Z8externalv()
  ret i32 0
}

; An unreferenced internal function is neither device nor host code.
; CHECK-NOT: @unused
; HOST-NOT: @unused
define internal void @unused() {
entry:
  ret void
}

attributes #0 = { "sycl-device-global-size"="4" "sycl-unique-id"="uid_dg" }
attributes #1 = { "sycl-module-id"="main.cpp" }
attributes #2 = { "sycl-module-id"="main.cpp" }
attributes #3 = { "sycl-device-global-size"="4" "sycl-unique-id"="uid_dg_unused" }

!5 = !{i64 123}
