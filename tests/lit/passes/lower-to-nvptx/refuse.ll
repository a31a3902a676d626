; RUN: not minisycl opt -passes=lower-to-nvptx %s -o - 2>&1 | filecheck %s
; Calls the NVPTX back end cannot compile are refused by name (LLVM would abort
; the process): an external function (print's printf), and an LLVM intrinsic it
; cannot select.

; CHECK: minisycl: error: cannot compile for NVPTX: calls 'llvm.sin.f80' (an LLVM intrinsic the NVPTX back end cannot compile); 'printf' (print is refused in device code on every device)

target triple = "spir64-unknown-unknown"

@fmt = private constant [3 x i8] c"%d\00"

define spir_kernel void @k(ptr %p) {
  %x = load x86_fp80, ptr %p
  %s = call x86_fp80 @llvm.sin.f80(x86_fp80 %x)
  store x86_fp80 %s, ptr %p
  %r = call i32 (ptr, ...) @printf(ptr @fmt, i32 1)
  ret void
}

declare x86_fp80 @llvm.sin.f80(x86_fp80)
declare i32 @printf(ptr, ...)
