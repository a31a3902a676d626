; RUN: minisycl post-link -properties -split=kernel -S %s -o %t.table
; RUN: filecheck %s -input-file=%t_2.prop --match-full-lines --check-prefix=IMF
; RUN: filecheck %s -input-file=%t_1.prop --match-full-lines --check-prefix=MIX
; RUN: filecheck %s -input-file=%t_0.prop --match-full-lines --check-prefix=NONE
; [SYCL/devicelib req mask] is the first set: one bit per fallback library whose
; __devicelib_* functions the image declares (upstream's mask.ll: imf → 64).
; Per-kernel images come out in descending name order: k_none, k_mix, k_imf.

; IMF: [SYCL/devicelib req mask]
; IMF-NEXT: DeviceLibReqMask=1|64
; IMF-NEXT: [SYCL/device requirements]

; assert 0x1 | math (sinf) 0x2 | math_fp64 (cos) 0x4 | complex_fp64 (cabs) 0x10 | cstring 0x20 = 55
; MIX: [SYCL/devicelib req mask]
; MIX-NEXT: DeviceLibReqMask=1|55
; MIX-NEXT: [SYCL/device requirements]

; An image that uses no device library gets no mask (the mask would be 0).
; NONE: [SYCL/device requirements]
; NONE-NOT: devicelib

target triple = "spir64-unknown-unknown"

define spir_kernel void @k_imf() {
  %r = call spir_func i32 @__devicelib_imf_umulhi(i32 1, i32 2)
  ret void
}
define spir_kernel void @k_mix(ptr %p) {
  call spir_func void @__devicelib_assert_fail(ptr %p)
  %a = call spir_func float @__devicelib_sinf(float 1.0)
  %b = call spir_func double @__devicelib_cos(double 1.0)
  %c = call spir_func double @__devicelib_cabs(ptr %p)
  %d = call spir_func ptr @__devicelib_memcpy(ptr %p, ptr %p, i64 4)
  ret void
}
define spir_kernel void @k_none() {
  ret void
}

declare spir_func i32 @__devicelib_imf_umulhi(i32, i32)
declare spir_func void @__devicelib_assert_fail(ptr)
declare spir_func float @__devicelib_sinf(float)
declare spir_func double @__devicelib_cos(double)
declare spir_func double @__devicelib_cabs(ptr)
declare spir_func ptr @__devicelib_memcpy(ptr, ptr, i64)
