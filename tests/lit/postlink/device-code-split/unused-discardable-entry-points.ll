; RUN: minisycl post-link -properties -S < %s -o %t.files.table
; RUN: filecheck %s -input-file=%t.files_0.ll
; RUN: not grep -w foo %t.files_0.ll
; RUN: minisycl post-link -split=none -symbols -S < %s -o %t.none.table
; RUN: filecheck %s -input-file=%t.none_0.ll
; RUN: filecheck %s -input-file=%t.none_0.sym --check-prefix=SYM
; RUN: not grep -w foo %t.none_0.ll %t.none_0.sym
; RUN: minisycl post-link -split=kernel -symbols -S < %s -o %t.kernel.table
; RUN: filecheck %s -input-file=%t.kernel_2.ll --check-prefix=KERNEL
; RUN: not grep -w foo %t.kernel_0.ll %t.kernel_0.sym %t.kernel_1.ll %t.kernel_1.sym %t.kernel_2.ll %t.kernel_2.sym
; RUN: not grep -w called %t.kernel_0.ll %t.kernel_0.sym %t.kernel_1.ll %t.kernel_1.sym
; Upstream's no-split-unused-func.ll: post-link deletes unused functions that
; are safe to remove even without a split.  Upstream's ModuleCopier cleans the
; -split=none image with GlobalDCE (older versions returned the module as it
; was, and tests written then expect such functions kept; the newer behaviour
; wins), and so does every split image: a linkonce_odr SYCL_EXTERNAL function
; that nothing references is deleted although it is an entry point, and it
; leaves the image's symbols.  One that a kernel calls stays, but not in an
; image of its own (-split=kernel, images in descending order of their keys:
; foo's and called's come first, and are empty), where nothing calls it.

; CHECK: target triple
target triple = "spir64-unknown-unknown"

define linkonce_odr dso_local spir_func void @foo() local_unnamed_addr #0 {
entry:
  ret void
}

; CHECK: define linkonce_odr dso_local spir_func void @called()
; KERNEL-DAG: define internal dso_local spir_func void @called()
define linkonce_odr dso_local spir_func void @called() local_unnamed_addr #0 {
entry:
  ret void
}

; CHECK: define weak_odr dso_local spir_kernel void @_ZTSZ4mainEUlT_E0_()
; KERNEL-DAG: define weak_odr dso_local spir_kernel void @_ZTSZ4mainEUlT_E0_()
define weak_odr dso_local spir_kernel void @_ZTSZ4mainEUlT_E0_() local_unnamed_addr #0 {
entry:
  call spir_func void @called()
  ret void
}

; SYM: called
; SYM-NEXT: _ZTSZ4mainEUlT_E0_
; SYM-EMPTY:

; CHECK: attributes #0
attributes #0 = { norecurse "sycl-module-id"="file.cpp" }
