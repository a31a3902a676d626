; A read whose symbolic-id operand is not a constant string is a clean error
; (exit status 1), as is a read of a global that is not a specialization_id.
; RUN: not minisycl post-link -spec-const=rt -S -o %t.table %s 2>&1 | filecheck %s
; CHECK: error: @k: the symbolic id operand 'ptr noundef %name' is not a constant string
; RUN: sed 's/%name, ptr noundef @c2/@str, ptr noundef @plain/' %s > %t.ll
; RUN: not minisycl post-link -spec-const=default -S -o %t.table %t.ll 2>&1 | filecheck %s --check-prefix=CHECK-ID
; CHECK-ID: error: @k: @plain is not a specialization_id

@str = private unnamed_addr constant [3 x i8] c"id\00", align 1
@c2 = internal constant { i32 } { i32 123 }, align 4
@plain = internal constant i32 5, align 4

declare i32 @_Z37__sycl_getScalar2020SpecConstantValueIiET_PKcPKvS4_(ptr noundef, ptr noundef, ptr noundef)

define spir_kernel void @k(ptr %out, ptr %name) {
entry:
  %v = call i32 @_Z37__sycl_getScalar2020SpecConstantValueIiET_PKcPKvS4_(ptr noundef %name, ptr noundef @c2, ptr noundef null)
  store i32 %v, ptr %out, align 4
  ret void
}
