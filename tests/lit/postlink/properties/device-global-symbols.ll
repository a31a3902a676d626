; RUN: minisycl post-link -properties -emit-exported-symbols -emit-imported-symbols -S %s -o %t.table
; RUN: filecheck %s -input-file=%t_0.prop --match-full-lines
; RUN: minisycl post-link -properties -emit-exported-symbols -emit-imported-symbols -allow-device-image-dependencies -S %s -o %t.deps.table
; RUN: filecheck %s -input-file=%t.deps_0.prop --match-full-lines --check-prefix=DEPS
; Exported symbols include the external device globals an image defines, but
; not device_image_scope ones; with -allow-device-image-dependencies an external
; device_global the image only declares is an imported symbol.

; CHECK: [SYCL/exported symbols]
; CHECK-NEXT: shared_dg=1|1
; CHECK-EMPTY:

; DEPS: [SYCL/exported symbols]
; DEPS-NEXT: shared_dg=1|1
; DEPS-NEXT: [SYCL/imported symbols]
; DEPS-NEXT: other_dg=1|1
; DEPS-EMPTY:

target triple = "spir64-unknown-unknown"

%"class.sycl::ext::oneapi::experimental::device_global" = type { ptr addrspace(4) }

@shared_dg = addrspace(1) global %"class.sycl::ext::oneapi::experimental::device_global" zeroinitializer #1
@image_dg = addrspace(1) global %"class.sycl::ext::oneapi::experimental::device_global" zeroinitializer #2
@other_dg = external addrspace(1) global %"class.sycl::ext::oneapi::experimental::device_global"

define spir_kernel void @k() #0 {
  %a = load ptr addrspace(4), ptr addrspace(1) @shared_dg, align 8
  %b = load ptr addrspace(4), ptr addrspace(1) @image_dg, align 8
  %c = load ptr addrspace(4), ptr addrspace(1) @other_dg, align 8
  ret void
}

attributes #0 = { "sycl-module-id"="a.cpp" }
attributes #1 = { "sycl-device-global-size"="8" "sycl-unique-id"="uid_shared" }
attributes #2 = { "sycl-device-global-size"="8" "sycl-device-image-scope" "sycl-unique-id"="uid_image" }
