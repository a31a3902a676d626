; RUN: minisycl post-link -S < %s -o %t.table
; RUN: filecheck %s --input-file=%t.table --check-prefix=TABLE
; RUN: filecheck %s --input-file=%t_0.ll
; RUN: minisycl post-link -split=none -S < %s -o %t.none.table
; RUN: filecheck %s --input-file=%t.none_0.ll
; Without -split (or with -split=none) the one image is the whole module as
; upstream's ModuleCopier keeps it after Internalize and GlobalDCE, not the
; closure of the entry points.  This module has no entry point at all, and
; still gives an image with what upstream keeps.

; TABLE: [Code]
; TABLE-NEXT: {{.*}}_0.ll
; TABLE-EMPTY:

; A global that is not discardable stays, even unused.
; CHECK: @kept = global i32 1
; A discardable global nothing uses goes.
; CHECK-NOT: @unused_internal
; A function-pointer table keeps what it points to (internal now: no entry point).
; CHECK: @table = global [1 x ptr] [ptr @via_table]
; CHECK-DAG: define internal spir_func void @via_table()
; "referenced-indirectly" functions are never internalized.
; CHECK-DAG: define spir_func void @fp_target(i32 %x)
; A plain external function that is not an entry point is internalized, then dropped.
; CHECK-NOT: @helper

@kept = global i32 1
@unused_internal = internal global i32 2
@table = global [1 x ptr] [ptr @via_table]

define spir_func void @helper() {
  ret void
}

define spir_func void @via_table() {
  ret void
}

define spir_func void @fp_target(i32 %x) #0 {
  ret void
}

attributes #0 = { "referenced-indirectly" }
