; RUN: minisycl post-link -split=kernel -symbols -S %s -o %t.table
; RUN: filecheck %s -input-file=%t_0.ll --check-prefix=IR0
; RUN: filecheck %s -input-file=%t_1.ll --check-prefix=IR1
; RUN: filecheck %s -input-file=%t_2.ll --check-prefix=IR2
; RUN: minisycl post-link -split=none -S %s -o %t.none.table
; RUN: filecheck %s -input-file=%t.none_0.ll --check-prefix=NONE
; Upstream's cuda-split-per-kernel.ll: each image of an NVPTX module keeps the
; !nvvm.annotations "kernel" entry of its kernel (LLVM reads those entries as
; the ptx_kernel calling convention; post-link writes them back per image).
; Images in upstream's order (names descending).

; IR0: define weak_odr dso_local ptx_kernel void @k3(
; IR0: !nvvm.annotations = !{![[#ANN:]]}
; IR0: ![[#ANN]] = !{ptr @k3, !"kernel", i32 1}
; IR1: !{ptr @k2, !"kernel", i32 1}
; IR1-NOT: @k1
; IR2: !{ptr @k1, !"kernel", i32 1}
; NONE: !nvvm.annotations = !{![[#ONE:]], ![[#TWO:]], ![[#THREE:]]}
; NONE: ![[#ONE]] = !{ptr @k1, !"kernel", i32 1}
; NONE: ![[#TWO]] = !{ptr @k2, !"kernel", i32 1}
; NONE: ![[#THREE]] = !{ptr @k3, !"kernel", i32 1}

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define weak_odr dso_local void @k1(ptr addrspace(1) %p) #0 {
  ret void
}

define weak_odr dso_local void @k2(ptr addrspace(1) %p) #0 {
  ret void
}

define weak_odr dso_local void @k3(ptr addrspace(1) %p) #0 {
  ret void
}

attributes #0 = { "sycl-module-id"="cuda.cpp" "target-cpu"="sm_50" }

!nvvm.annotations = !{!0, !1, !2}

!0 = !{ptr @k1, !"kernel", i32 1}
!1 = !{ptr @k2, !"kernel", i32 1}
!2 = !{ptr @k3, !"kernel", i32 1}
