; RUN: minisycl opt -passes=lower-to-nvptx %s -o - | filecheck %s --check-prefix=OWN
; RUN: minisycl opt -passes=lower-to-nvptx{libdevice=true} %s -o - | filecheck %s --check-prefix=LIB
; Math NVPTX cannot select: through libdevice when the runtime links it, else
; through our own single-precision implementations (passes/nvptx_math.py);
; what NVPTX selects itself (sqrt, exp2 on float) stays.

target triple = "spir64-unknown-unknown"

define spir_kernel void @k(ptr %f, ptr %d, ptr %h) {
  %x = load float, ptr %f
  %s = call float @llvm.sin.f32(float %x)
  %p = call float @llvm.pow.f32(float %s, float %x)
  %q = call float @llvm.sqrt.f32(float %p)
  %e = call float @llvm.exp2.f32(float %q)
  store float %e, ptr %f
  %y = load double, ptr %d
  %l = call double @llvm.log.f64(double %y)
  store double %l, ptr %d
  %z = load half, ptr %h
  %c = call half @llvm.cos.f16(half %z)
  store half %c, ptr %h
  ret void
}

declare float @llvm.sin.f32(float)
declare float @llvm.pow.f32(float, float)
declare float @llvm.sqrt.f32(float)
declare float @llvm.exp2.f32(float)
declare double @llvm.log.f64(double)
declare half @llvm.cos.f16(half)

; OWN-DAG: define internal float @__minisycl_nv.sin(float %x)
; OWN-DAG: call float @__minisycl_nv.sin_poly(float %r)
; OWN-DAG: define internal float @__minisycl_nv.pow(float %x, float %y)
; pow in double, rounded once:
; OWN-DAG: call double @__minisycl_nv.exp_d(double %t)
; Double through single precision without libdevice:
; OWN-DAG: define internal double @__minisycl_math.log.f64(double %x0)
; OWN-DAG: %y0 = fptrunc double %x0 to float
; OWN-DAG: %rr = fpext float %r to double
; OWN-DAG: define internal half @__minisycl_math.cos.f16(half %x0)
; OWN-DAG: call float @llvm.sqrt.f32(
; OWN-DAG: call float @llvm.exp2.f32(
; OWN-NOT: __nv_
; OWN-NOT: @llvm.sin.f32

; LIB-DAG: call float @__nv_sinf(float %x0)
; LIB-DAG: call float @__nv_powf(float %x0, float %x1)
; LIB-DAG: call double @__nv_log(double %x0)
; LIB-DAG: call float @__nv_cosf(float %y0)
; LIB-DAG: declare float @__nv_sinf(float)
; LIB-DAG: declare double @__nv_log(double)
; LIB-NOT: __minisycl_nv.
