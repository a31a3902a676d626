; RUN: minisycl post-link -split=source -S < %s -o %t.table
; RUN: filecheck %s --input-file=%t_0.ll --check-prefix=B
; RUN: filecheck %s --input-file=%t_1.ll --check-prefix=A
; After the split every image internalizes the functions that are not its
; entry points (upstream's ModuleDesc::cleanup): a SYCL_EXTERNAL function
; stays external only in the image where it is an entry point (a.cpp's);
; kernels keep their linkage.

; A-DAG: define weak_odr spir_kernel void @kernel_a(
; A-DAG: define spir_func void @sycl_external()
; A-DAG: define internal spir_func void @plain_helper()
; B-DAG: define weak_odr spir_kernel void @kernel_b(
; B-DAG: define internal spir_func void @sycl_external()
; B-DAG: define internal spir_func void @plain_helper()
; linkonce_odr is internalized too; a hidden function loses its visibility.
; B-DAG: define internal spir_func void @odr_helper()
; B-DAG: define internal spir_func void @hidden_helper()

define spir_func void @plain_helper() {
  ret void
}

define linkonce_odr spir_func void @odr_helper() {
  ret void
}

define hidden spir_func void @hidden_helper() {
  ret void
}

define spir_func void @sycl_external() #0 {
  ret void
}

define weak_odr spir_kernel void @kernel_a() #0 {
  call spir_func void @plain_helper()
  call spir_func void @sycl_external()
  ret void
}

define weak_odr spir_kernel void @kernel_b() #1 {
  call spir_func void @plain_helper()
  call spir_func void @sycl_external()
  call spir_func void @odr_helper()
  call spir_func void @hidden_helper()
  ret void
}

attributes #0 = { "sycl-module-id"="a.cpp" }
attributes #1 = { "sycl-module-id"="b.cpp" }
