; RUN: minisycl opt -passes=analyze-virtual-functions %s -o - | filecheck %s
; A kernel that stores vtables records the sets of the virtual functions they
; hold, for the post-link's creates-virtual-functions-set (sorted, joined by ",").

target triple = "spir64-unknown-unknown"

@_ZTV4Base = linkonce_odr unnamed_addr constant { [4 x ptr] } { [4 x ptr] [ptr null, ptr null, ptr @_ZN4Base3fooEv, ptr @_ZN4Base3barEv] }, align 8
@_ZTV5Other = linkonce_odr unnamed_addr constant { [3 x ptr] } { [3 x ptr] [ptr null, ptr null, ptr @_ZN5Other3bazEv] }, align 8

define linkonce_odr spir_func void @_ZN4Base3fooEv(ptr %this) #0 {
  ret void
}
define linkonce_odr spir_func void @_ZN4Base3barEv(ptr %this) #1 {
  ret void
}
define linkonce_odr spir_func void @_ZN5Other3bazEv(ptr %this) #0 {
  ret void
}

; The vtable is stored by a callee: the whole static call tree counts.
; CHECK: define spir_kernel void @construct(ptr %p) #[[C:[0-9]+]]
define spir_kernel void @construct(ptr %p) #2 {
  call spir_func void @_ZN4BaseC2Ev(ptr %p)
  ret void
}
define linkonce_odr spir_func void @_ZN4BaseC2Ev(ptr %this) {
  store ptr getelementptr inbounds inrange(-16, 16) ({ [4 x ptr] }, ptr @_ZTV4Base, i32 0, i32 0, i32 2), ptr %this, align 8
  ret void
}

; A kernel that creates nothing gets no attribute.
; CHECK: define spir_kernel void @plain(ptr %p) #[[P:[0-9]+]]
define spir_kernel void @plain(ptr %p) #2 {
  ret void
}

; CHECK-DAG: attributes #[[C]] = { "minisycl-creates-virtual-functions"="_ZTSv,set-fp64" "sycl-module-id"="v.cpp" }
; CHECK-DAG: attributes #[[P]] = { "sycl-module-id"="v.cpp" }

attributes #0 = { "indirectly-callable"="_ZTSv" }
attributes #1 = { "indirectly-callable"="set-fp64" }
attributes #2 = { "sycl-module-id"="v.cpp" }
