; RUN: minisycl opt -passes=aggregate-atomics %s -o - | filecheck %s
; Kernels whose updates someone could observe keep their atomics: no copy is made.
; CHECK-NOT: __minisycl_private

target triple = "spir64-unknown-unknown"

; Another atomic operation in the kernel could read the target.
define spir_kernel void @with_load(ptr %s, ptr %out) {
entry:
  %a = atomicrmw add ptr %s, i32 1 seq_cst, align 4
  %l = load atomic i32, ptr %s seq_cst, align 4
  store i32 %l, ptr %out, align 4
  ret void
}

; A function the kernel calls, even indirectly, orders memory.
define spir_kernel void @with_fence_below(ptr %s) {
entry:
  %a = atomicrmw or ptr %s, i32 4 seq_cst, align 4
  call spir_func void @middle()
  ret void
}

define spir_func void @middle() {
entry:
  call spir_func void @orders()
  ret void
}

define spir_func void @orders() {
entry:
  fence acquire
  ret void
}

; add and max do not combine; float updates depend on their order.
define spir_kernel void @mixed(ptr %s, ptr %f, float %x) {
entry:
  %a = atomicrmw add ptr %s, i32 1 seq_cst, align 4
  %b = atomicrmw max ptr %s, i32 7 seq_cst, align 4
  %c = atomicrmw fadd ptr %f, float %x seq_cst, align 4
  ret void
}

; The target is also written without an atomic.
define spir_kernel void @written(ptr %s) {
entry:
  %a = atomicrmw xor ptr %s, i64 3 seq_cst, align 8
  store i64 0, ptr %s, align 8
  ret void
}
