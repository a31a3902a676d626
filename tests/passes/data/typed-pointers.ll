; Typed-pointer IR as LLVM 14 (DPC++ before opaque pointers) wrote it: pointer
; types name what they point to (i32 addrspace(1)*, i8*), and intrinsics carry
; those types in their names (llvm.memset.p1i8.i64).  typed-pointers-llvm14.bc
; is this file written as bitcode by LLVM 14.0.6 (llvmlite 0.40.1).
source_filename = "typed.cpp"
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64"
target triple = "spir64-unknown-unknown"

@counter = internal addrspace(1) global i64 0, align 8

define weak_odr spir_kernel void @_ZTS5scale(float addrspace(1)* %out, i32 %n) #0 {
entry:
  %p = getelementptr inbounds float, float addrspace(1)* %out, i64 1
  %d = call spir_func double @_Z5twiced(double 1.500000e+00)
  %f = fptrunc double %d to float
  store float %f, float addrspace(1)* %p, align 4
  %c = bitcast i64 addrspace(1)* @counter to i8 addrspace(1)*
  call void @llvm.memset.p1i8.i64(i8 addrspace(1)* align 8 %c, i8 0, i64 8, i1 false)
  ret void
}

define linkonce_odr spir_func double @_Z5twiced(double %x) {
entry:
  %r = fmul double %x, 2.000000e+00
  ret double %r
}

declare void @llvm.memset.p1i8.i64(i8 addrspace(1)* nocapture writeonly, i8, i64, i1 immarg)

attributes #0 = { "sycl-module-id"="typed.cpp" }

!sycl_aspects = !{!0}
!0 = !{!"fp64", i32 6}
