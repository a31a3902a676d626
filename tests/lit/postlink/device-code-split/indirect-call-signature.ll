; RUN: minisycl post-link -split=kernel -symbols -S < %s -o %t.table
; RUN: filecheck %s --input-file=%t_0.sym --check-prefix=SYM0
; RUN: filecheck %s --input-file=%t_0.ll --check-prefix=PLAIN
; RUN: filecheck %s --input-file=%t_1.sym --check-prefix=SYM1
; RUN: filecheck %s --input-file=%t_1.ll --check-prefix=CALLER
; An indirect call reaches every "referenced-indirectly" function whose type
; is the call's type (return type plus argument types), as upstream's
; dependency graph says; other functions of that attribute stay out.

; SYM0: plain
; PLAIN-NOT: @target_
; SYM1: caller
; The call's type is void (i32): this one, and what it calls, come in.
; CALLER-DAG: define spir_func void @target_i32(i32 %x)
; CALLER-DAG: define internal spir_func void @helper()
; Another type: not a candidate.
; CALLER-NOT: @target_float

define spir_kernel void @caller(ptr %fp) #0 {
  call spir_func void %fp(i32 1)
  ret void
}

define spir_kernel void @plain() #0 {
  ret void
}

define spir_func void @target_i32(i32 %x) #1 {
  call spir_func void @helper()
  ret void
}

define spir_func void @target_float(float %x) #1 {
  ret void
}

define spir_func void @helper() {
  ret void
}

attributes #0 = { "sycl-module-id"="a.cpp" }
attributes #1 = { "referenced-indirectly" }
