; RUN: minisycl post-link -split=kernel -symbols -S < %s -o %t.table
; RUN: filecheck %s --input-file=%t_0.sym --check-prefix=SYM
; RUN: filecheck %s --input-file=%t_0.ll
; Upstream's clean-up of an image: Internalize leaves a "referenced-indirectly"
; function as it is, and GlobalDCE then deletes one of discardable linkage
; (internal, linkonce_odr, ...) that nothing uses, even when an indirect call
; of its type brought it into the image.  What only such a function brought in
; goes with it, unless that is itself a "referenced-indirectly" function of
; external linkage: it stays.

; SYM: caller
; SYM-EMPTY:
; CHECK-NOT: define {{.*}}@odr_target
; CHECK-NOT: define {{.*}}@local_target
; CHECK-NOT: define {{.*}}@helper
; CHECK-DAG: define spir_func void @float_target(float %x)
; A discardable candidate something does use stays.
; CHECK-DAG: @table = internal global ptr @used_target
; CHECK-DAG: define internal spir_func void @used_target(i32 %x)

@table = internal global ptr @used_target

define spir_kernel void @caller(ptr %fp) #0 {
  call spir_func void %fp(i32 1)
  %t = load ptr, ptr @table
  ret void
}

define linkonce_odr spir_func void @odr_target(i32 %x) #1 {
  call spir_func void @helper()
  %slot = alloca ptr
  %fp = load ptr, ptr %slot
  call spir_func void %fp(float 1.0)
  ret void
}

define internal spir_func void @local_target(i32 %x) #1 {
  ret void
}

define internal spir_func void @used_target(i32 %x) #1 {
  ret void
}

define spir_func void @float_target(float %x) #1 {
  ret void
}

define spir_func void @helper() {
  ret void
}

attributes #0 = { "sycl-module-id"="a.cpp" }
attributes #1 = { "referenced-indirectly" }
