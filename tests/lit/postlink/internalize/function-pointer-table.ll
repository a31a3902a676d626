; RUN: minisycl post-link -split=kernel -symbols -S < %s -o %t.table
; RUN: filecheck %s --input-file=%t_0.sym --check-prefix=SYM
; RUN: filecheck %s --input-file=%t_0.ll
; A kernel that uses a table of function pointers in a global gets the table
; and every function it points to (internal: they are not entry points), even
; though nothing calls them directly.

; SYM: user
; CHECK: @ops = internal constant [2 x ptr] [ptr @add, ptr @mul]
; CHECK-DAG: define internal spir_func i32 @add(i32 %a, i32 %b)
; CHECK-DAG: define internal spir_func i32 @mul(i32 %a, i32 %b)

@ops = internal constant [2 x ptr] [ptr @add, ptr @mul]

define spir_func i32 @add(i32 %a, i32 %b) {
  %r = add i32 %a, %b
  ret i32 %r
}

define spir_func i32 @mul(i32 %a, i32 %b) {
  %r = mul i32 %a, %b
  ret i32 %r
}

define spir_kernel void @user(i64 %i, ptr %out) #0 {
  %slot = getelementptr [2 x ptr], ptr @ops, i64 0, i64 %i
  %fp = load ptr, ptr %slot
  %r = call spir_func i32 %fp(i32 2, i32 3)
  store i32 %r, ptr %out
  ret void
}

attributes #0 = { "sycl-module-id"="a.cpp" }
