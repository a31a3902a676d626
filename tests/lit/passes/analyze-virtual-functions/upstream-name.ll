; RUN: minisycl opt -passes=sycl-virtual-functions-analysis %s -o - | filecheck %s
; RUN: minisycl opt --print-pipeline -passes=sycl-virtual-functions-analysis %s | filecheck %s --check-prefix=PIPE
; Upstream's pass name runs the upstream mode (upstream's
; calls-indirectly-propagation-1.ll and -2.ll): a kernel that stores a
; vtable gets the sets of the virtual functions in it appended to its
; "calls-indirectly", in the order the virtual functions appear; a kernel
; that already lists a set keeps it first.  Kernels that end with the same
; attributes share one attribute group, as LLVM prints them.  DPC++'s -G1
; datalayout, as upstream's tests have it.

; CHECK: define weak_odr dso_local spir_kernel void @both({{.*}} #[[#ATTRS:]]
; CHECK: define weak_odr dso_local spir_kernel void @had_one({{.*}} #[[#ATTRS]]
; CHECK: define weak_odr dso_local spir_kernel void @direct_use() #[[#PLAIN:]]
; CHECK-DAG: attributes #[[#ATTRS]] = { "calls-indirectly"="set-one,set-two" "sycl-module-id"="v.cpp" }
; CHECK-DAG: attributes #[[#PLAIN]] = { "sycl-module-id"="v.cpp" }
; PIPE: analyze-virtual-functions{mode=upstream}

target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spir64-unknown-unknown"

@vt_one = linkonce_odr dso_local unnamed_addr addrspace(1) constant { [3 x ptr addrspace(4)] } { [3 x ptr addrspace(4)] [ptr addrspace(4) null, ptr addrspace(4) null, ptr addrspace(4) addrspacecast (ptr @one to ptr addrspace(4))] }, align 8
@vt_two = linkonce_odr dso_local unnamed_addr addrspace(1) constant { [3 x ptr addrspace(4)] } { [3 x ptr addrspace(4)] [ptr addrspace(4) null, ptr addrspace(4) null, ptr addrspace(4) addrspacecast (ptr @two to ptr addrspace(4))] }, align 8

define linkonce_odr spir_func void @one() #0 {
  ret void
}

define linkonce_odr spir_func void @two() #1 {
  ret void
}

define weak_odr dso_local spir_kernel void @both(ptr addrspace(1) %p) #2 {
  store ptr addrspace(1) getelementptr inbounds inrange(-16, 8) (i8, ptr addrspace(1) @vt_two, i64 16), ptr addrspace(1) %p, align 8
  store ptr addrspace(1) getelementptr inbounds inrange(-16, 8) (i8, ptr addrspace(1) @vt_one, i64 16), ptr addrspace(1) %p, align 8
  ret void
}

define weak_odr dso_local spir_kernel void @had_one(ptr addrspace(1) %p) #3 {
  store ptr addrspace(1) getelementptr inbounds inrange(-16, 8) (i8, ptr addrspace(1) @vt_two, i64 16), ptr addrspace(1) %p, align 8
  ret void
}

; Naming a virtual function outside a vtable (a cast, a direct call) adds nothing.
define weak_odr dso_local spir_kernel void @direct_use() #2 {
  %q = addrspacecast ptr @one to ptr addrspace(4)
  call spir_func void @one()
  ret void
}

attributes #0 = { "indirectly-callable"="set-one" "sycl-module-id"="v.cpp" }
attributes #1 = { "indirectly-callable"="set-two" "sycl-module-id"="v.cpp" }
attributes #2 = { "sycl-module-id"="v.cpp" }
attributes #3 = { "calls-indirectly"="set-one" "sycl-module-id"="v.cpp" }
