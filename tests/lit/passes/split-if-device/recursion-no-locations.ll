; RUN: not minisycl opt -passes=split-if-device %s -o %t.ll 2>&1 | filecheck %s
; Without front-end locations the diagnostic names the functions and the module.

target triple = "spir64-unknown-unknown"

; CHECK: minisycl: error: recursion is not allowed in device code: walk -> walk (in recursion-no-locations.ll)
define spir_kernel void @kernel(i32 %n) {
entry:
  call spir_func void @walk(i32 %n)
  ret void
}

define spir_func void @walk(i32 %n) {
entry:
  %m = sub i32 %n, 1
  call spir_func void @walk(i32 %m)
  ret void
}
