; RUN: minisycl opt -passes=propagate-aspects %s -o - | filecheck %s
; Upstream's type rules and call-graph propagation (SYCLPropagateAspectsUsage).

target triple = "spir64-unknown-unknown"

%"class.sycl::_V1::detail::half_impl::half" = type { half }
%struct.HasHalf = type { i32, [2 x %"class.sycl::_V1::detail::half_impl::half"] }
%struct.Plain = type { i32, float }

@table = internal global [4 x double] zeroinitializer

; double anywhere in the body → fp64 (6).
; CHECK: define spir_func void @uses_double(){{.*}} !sycl_used_aspects ![[FP64:[0-9]+]]
define spir_func void @uses_double() {
  %d = alloca double, align 8
  ret void
}

; A struct that contains sycl::half, reached only as a GEP source type → fp16 (5).
; CHECK: define spir_func void @gep_half(ptr %p){{.*}} !sycl_used_aspects ![[FP16:[0-9]+]]
define spir_func void @gep_half(ptr %p) {
  %f = getelementptr inbounds %struct.HasHalf, ptr %p, i32 0, i32 1
  ret void
}

; A global's value type counts: @table is [4 x double].
; CHECK: define spir_func ptr @global_operand(){{.*}} !sycl_used_aspects ![[FP64]]
define spir_func ptr @global_operand() {
  ret ptr @table
}

; 64-bit atomics → atomic64 (28); 32-bit ones do not.
; CHECK: define spir_func void @atomics(ptr %p){{.*}} !sycl_used_aspects ![[A64:[0-9]+]]
define spir_func void @atomics(ptr %p) {
  %a = atomicrmw add ptr %p, i32 1 seq_cst, align 4
  %b = atomicrmw add ptr %p, i64 1 seq_cst, align 8
  ret void
}
; CHECK: define spir_func void @atomics32(ptr %p) {
define spir_func void @atomics32(ptr %p) {
  %a = atomicrmw add ptr %p, i32 1 seq_cst, align 4
  %c = cmpxchg ptr %p, i32 0, i32 1 seq_cst seq_cst, align 4
  ret void
}

; Pointers are opaque: passing a pointer to doubles uses nothing; a plain struct uses nothing.
; CHECK: define spir_func void @plain(ptr %p) {
define spir_func void @plain(ptr %p) {
  %s = alloca %struct.Plain, align 4
  ret void
}

; Aspects flow from callees to callers; existing metadata is merged and
; declared aspects (!sycl_declared_aspects, "sycl-device-has") are always added.
; CHECK: define spir_kernel void @kernel(){{.*}} !sycl_used_aspects ![[ALL:[0-9]+]]
define spir_kernel void @kernel() #0 !sycl_declared_aspects !10 !sycl_used_aspects !11 {
  call spir_func void @uses_double()
  call spir_func void @middle()
  ret void
}
; CHECK: define spir_func void @middle(){{.*}} !sycl_used_aspects ![[MID:[0-9]+]]
define spir_func void @middle() {
  call spir_func void @gep_half(ptr null)
  call spir_func void @atomics(ptr null)
  ret void
}

; Aspect numbers come from !sycl_aspects; results are sorted.
; CHECK-DAG: ![[FP64]] = !{i32 6}
; CHECK-DAG: ![[FP16]] = !{i32 5}
; CHECK-DAG: ![[A64]] = !{i32 28}
; CHECK-DAG: ![[MID]] = !{i32 5, i32 28}
; CHECK-DAG: ![[ALL]] = !{i32 1, i32 2, i32 5, i32 6, i32 28}

attributes #0 = { "sycl-device-has"="2" "sycl-module-id"="t.cpp" }

!sycl_aspects = !{!0, !1, !2, !3, !4}
!sycl_types_that_use_aspects = !{!5}
!0 = !{!"cpu", i32 1}
!1 = !{!"gpu", i32 2}
!2 = !{!"fp16", i32 5}
!3 = !{!"fp64", i32 6}
!4 = !{!"atomic64", i32 28}
!5 = !{!"class.sycl::_V1::detail::half_impl::half", i32 5}
!10 = !{i32 2}
!11 = !{i32 1}
