; RUN: minisycl post-link -properties -emit-exported-symbols -emit-imported-symbols -emit-kernel-names -split=source -S %s -o %t.table
; RUN: filecheck %s -input-file=%t_0.prop --match-full-lines --check-prefix=LIB
; RUN: filecheck %s -input-file=%t_1.prop --match-full-lines --check-prefix=APP
; Exported: spir_func entry points (SYCL_EXTERNAL), never kernels or virtual
; functions. Kernel names: the kernels. Imported: SYCL_EXTERNAL functions an
; image declares, except intrinsics and names that start with "__" (also once
; demangled). Sets in upstream's order: exported, kernel names, imported.

; b.cpp sorts after a.cpp, so its image comes first.
; LIB: [SYCL/device requirements]
; LIB-NEXT: aspects=2|AAAAAAAAAAA
; LIB-NEXT: [SYCL/exported symbols]
; LIB-NEXT: _Z7lib_addi=1|1
; LIB-NEXT: [SYCL/kernel names]
; LIB-NEXT: lib_kernel=1|1
; LIB-EMPTY:

; APP: [SYCL/device requirements]
; APP-NEXT: aspects=2|AAAAAAAAAAA
; APP-NEXT: [SYCL/kernel names]
; APP-NEXT: app_kernel=1|1
; APP-NEXT: [SYCL/imported symbols]
; APP-NEXT: _Z10ext_helperi=1|1
; APP-EMPTY:

target triple = "spir64-unknown-unknown"

define spir_kernel void @app_kernel() #0 {
  %a = call spir_func i32 @_Z10ext_helperi(i32 1)
  %b = call spir_func i32 @_Z9__privatei(i32 1)
  %c = call i32 @llvm.smax.i32(i32 1, i32 2)
  ret void
}
declare spir_func i32 @_Z10ext_helperi(i32) #0
declare spir_func i32 @_Z9__privatei(i32) #0
declare i32 @llvm.smax.i32(i32, i32)

define spir_kernel void @lib_kernel() #1 {
  ret void
}
define spir_func i32 @_Z7lib_addi(i32 %x) #1 {
  ret i32 %x
}

attributes #0 = { "sycl-module-id"="a.cpp" }
attributes #1 = { "sycl-module-id"="b.cpp" }
