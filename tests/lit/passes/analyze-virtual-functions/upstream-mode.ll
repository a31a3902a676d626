; RUN: minisycl opt '-passes=analyze-virtual-functions{mode=upstream}' %s -o - | filecheck %s
; RUN: minisycl opt --print-pipeline '-passes=analyze-virtual-functions{mode=upstream}' %s | filecheck %s --check-prefix=PIPE
; Upstream mode folds "creates" into "calls": a kernel whose call tree names a
; vtable gets the set of the virtual functions in it appended to "calls-indirectly".

target triple = "spir64-unknown-unknown"

@vt_a = linkonce_odr unnamed_addr constant { [3 x ptr] } { [3 x ptr] [ptr null, ptr null, ptr @fa] }, align 8
@vt_b = linkonce_odr unnamed_addr constant { [3 x ptr] } { [3 x ptr] [ptr null, ptr null, ptr @fb] }, align 8

define linkonce_odr spir_func void @fb(ptr %this) #1 {
  ret void
}
define linkonce_odr spir_func void @fa(ptr %this) #0 {
  ret void
}

; New sets follow the order the virtual functions appear in (fb's set-b before fa's set-a),
; and the vtable counts when a callee two calls deep stores it.
; CHECK: define spir_kernel void @k_new(ptr %p) #[[NEW:[0-9]+]]
define spir_kernel void @k_new(ptr %p) #2 {
  call spir_func void @outer(ptr %p)
  store ptr @vt_b, ptr %p, align 8
  ret void
}
define internal spir_func void @outer(ptr %p) {
  call spir_func void @ctor_a(ptr %p)
  ret void
}
define internal spir_func void @ctor_a(ptr %p) {
  store ptr @vt_a, ptr %p, align 8
  ret void
}

; Existing sets stay first; a set already listed is not repeated.
; CHECK: define spir_kernel void @k_old(ptr %p) #[[OLD:[0-9]+]]
define spir_kernel void @k_old(ptr %p) #3 {
  store ptr @vt_a, ptr %p, align 8
  store ptr @vt_b, ptr %p, align 8
  ret void
}

; Calling a virtual function directly is not a use of its vtable.
; CHECK: define spir_kernel void @k_direct(ptr %p) #[[DIRECT:[0-9]+]]
define spir_kernel void @k_direct(ptr %p) #2 {
  call spir_func void @fa(ptr %p)
  ret void
}

; CHECK-DAG: attributes #[[NEW]] = { "calls-indirectly"="set-b,set-a" "sycl-module-id"="v.cpp" }
; CHECK-DAG: attributes #[[OLD]] = { "calls-indirectly"="set-x,set-a,set-b" "sycl-module-id"="v.cpp" }
; CHECK-DAG: attributes #[[DIRECT]] = { "sycl-module-id"="v.cpp" }
; CHECK-NOT: minisycl-creates-virtual-functions

; PIPE: analyze-virtual-functions{mode=upstream}

attributes #0 = { "indirectly-callable"="set-a" }
attributes #1 = { "indirectly-callable"="set-b" }
attributes #2 = { "sycl-module-id"="v.cpp" }
attributes #3 = { "calls-indirectly"="set-x,set-a" "sycl-module-id"="v.cpp" }
