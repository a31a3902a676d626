; RUN: not minisycl post-link --device-globals -split=source %s -o %t.files.table 2>&1 | filecheck %s
; RUN: not test -e %t.files.table
; RUN: minisycl post-link --device-globals -properties %s -o %t.ok.table
; RUN: minisycl post-link -split=source Inputs/two-modules-ok.ll -o %t.two.table --device-globals
; A device_image_scope variable used by kernels that end up in two images is
; upstream's error (test_global_variable_many_modules_one_var_error.ll); a
; variable without the property may be shared (..._no_dev_img_scope.ll).

; CHECK: minisycl: error: device_global variable 'dg_int2' with property "device_image_scope" is used in more than one device image.

@dg_int2 = global { i32 } zeroinitializer, align 4 #0

define weak_odr spir_kernel void @k1() #1 {
  %a = load i32, ptr @dg_int2
  ret void
}

define weak_odr spir_kernel void @k2() #2 {
  %a = load i32, ptr @dg_int2
  ret void
}

attributes #0 = { "sycl-unique-id"="uid2" "sycl-device-global-size"="4" "sycl-device-image-scope" }
attributes #1 = { "sycl-module-id"="a.cpp" }
attributes #2 = { "sycl-module-id"="b.cpp" }
