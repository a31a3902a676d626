; RUN: minisycl opt -passes=aggregate-atomics %s -o - | filecheck %s
; A kernel's pointer parameters that only receive integer atomic updates whose
; results nobody uses get a private copy of the kernel that updates them with
; plain load/op/store; every other parameter is left atomic.

target triple = "spir64-unknown-unknown"

%"class.sycl::_V1::id.1" = type { [1 x i64] }

$reduce = comdat any

; The kernel itself is unchanged.
; CHECK-LABEL: define weak_odr hidden spir_kernel void @reduce(
; CHECK: %a = atomicrmw add ptr %sum, i64 %v seq_cst, align 8
; CHECK: %b = atomicrmw sub ptr %sum, i64 1 seq_cst, align 8
; CHECK: %c = atomicrmw min ptr %lo, i32 %w syncscope("device") monotonic, align 4
; CHECK: %d = atomicrmw add ptr %ticket, i32 1 seq_cst, align 4
define weak_odr hidden spir_kernel void @reduce(%"class.sycl::_V1::id.1" %item, ptr %x, ptr %sum, ptr %lo, ptr %ticket, ptr %out) comdat {
entry:
  %i = extractvalue %"class.sycl::_V1::id.1" %item, 0, 0
  %p = getelementptr i32, ptr %x, i64 %i
  %w = load i32, ptr %p, align 4
  %v = sext i32 %w to i64
  %a = atomicrmw add ptr %sum, i64 %v seq_cst, align 8
  %b = atomicrmw sub ptr %sum, i64 1 seq_cst, align 8
  %c = atomicrmw min ptr %lo, i32 %w syncscope("device") monotonic, align 4
  %d = atomicrmw add ptr %ticket, i32 1 seq_cst, align 4
  store i32 %d, ptr %out, align 4
  ret void
}

; The copy: internal, out of the comdat, default visibility, spir_func; %sum
; (add and sub) and %lo (min, with its syncscope) become plain updates, %ticket
; stays atomic (its old value is stored).
; CHECK-LABEL: define internal spir_func void @__minisycl_private.reduce(
; CHECK-NOT: comdat
; CHECK: %a.old = load i64, ptr %sum, align 8
; CHECK-NEXT: %a = add i64 %a.old, %v
; CHECK-NEXT: store i64 %a, ptr %sum, align 8
; CHECK: %b.old = load i64, ptr %sum, align 8
; CHECK-NEXT: %b = sub i64 %b.old, 1
; CHECK-NEXT: store i64 %b, ptr %sum, align 8
; CHECK: %c.old = load i32, ptr %lo, align 4
; CHECK-NEXT: %c = call i32 @llvm.smin.i32(i32 %c.old, i32 %w)
; CHECK-NEXT: store i32 %c, ptr %lo, align 4
; CHECK: %d = atomicrmw add ptr %ticket, i32 1 seq_cst, align 4
; CHECK: declare i32 @llvm.smin.i32(i32, i32)
