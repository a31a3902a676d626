; RUN: minisycl opt -passes=lower-to-nvptx %s -o - | filecheck %s
; A SPIR device module becomes NVPTX IR: target, address spaces, calling
; conventions, comdats, and a ptx_kernel entry point per kernel that builds the
; id / nd_item from the PTX special registers and calls the kernel's body.

target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64"
target triple = "spir64-unknown-unknown"

%"class.sycl::_V1::id.1" = type { [1 x i64] }
%"class.sycl::_V1::id.2" = type { [2 x i64] }
%"class.sycl::_V1::nd_item.1" = type { [1 x i64], [1 x i64], [1 x i64], [1 x i64], [1 x i64] }

$helper = comdat any

; CHECK: target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
; CHECK: target triple = "nvptx64-nvidia-cuda"
; CHECK-NOT: comdat
; Local memory stays addrspace(3) (.shared); constant and global become 1; generic 4 becomes 0.
; CHECK: @tile = internal addrspace(3) global [4 x float] poison
@tile = internal addrspace(3) global [4 x float] poison
; CHECK: @table = internal addrspace(1) constant [2 x i32] [i32 1, i32 2]
@table = internal addrspace(2) constant [2 x i32] [i32 1, i32 2]

; CHECK-LABEL: define linkonce_odr float @helper(ptr %p)
define linkonce_odr spir_func float @helper(ptr addrspace(4) %p) comdat {
  %v = load float, ptr addrspace(4) %p, align 4
  ret float %v
}

; The kernel's own code becomes an internal function ...
; CHECK-LABEL: define internal void @__minisycl_body.fill(%"class.sycl::_V1::id.2" %i, ptr %out)
; CHECK: %g = addrspacecast ptr addrspace(1) %o1 to ptr
; CHECK: %c = bitcast ptr addrspace(1) @table to ptr addrspace(1)
; CHECK: %same = addrspacecast ptr addrspace(1) %c to ptr
; CHECK: call float @helper(ptr %same)
define spir_kernel void @fill(%"class.sycl::_V1::id.2" %i, ptr addrspace(4) %out) #0 {
entry:
  %o1 = addrspacecast ptr addrspace(4) %out to ptr addrspace(1)
  %g = addrspacecast ptr addrspace(1) %o1 to ptr addrspace(4)
  %c = addrspacecast ptr addrspace(2) @table to ptr addrspace(1)
  %same = addrspacecast ptr addrspace(1) %c to ptr addrspace(4)
  %r = extractvalue %"class.sycl::_V1::id.2" %i, 0, 1
  %x = call spir_func float @helper(ptr addrspace(4) %same)
  %slot = getelementptr float, ptr addrspace(4) %g, i64 %r
  store float %x, ptr addrspace(4) %slot, align 4
  ret void
}

define spir_kernel void @group(%"class.sycl::_V1::nd_item.1" %it, ptr addrspace(4) %out) #0 {
entry:
  %l = extractvalue %"class.sycl::_V1::nd_item.1" %it, 1, 0
  %p = getelementptr float, ptr addrspace(3) @tile, i64 %l
  store float 1.0, ptr addrspace(3) %p, align 4
  call spir_func void @_Z22__spirv_ControlBarrierjjj(i32 2, i32 2, i32 272)
  ret void
}

define spir_kernel void @once(ptr addrspace(4) %out, i32 %n) #0 {
entry:
  %old = atomicrmw add ptr addrspace(4) %out, i32 %n seq_cst, align 4
  ret void
}

declare spir_func void @_Z22__spirv_ControlBarrierjjj(i32, i32, i32)

attributes #0 = { "minisycl-kernel-signature"="x" }

; ... and the entry point keeps the kernel's name: the range first, then the
; kernel's other parameters.  Dimension 0 of 2 is CUDA's y axis, dimension 1 its x.
; CHECK-LABEL: define ptx_kernel void @fill(i64 %r0, i64 %r1, i64 %r2, ptr %a0)
; CHECK: call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
; CHECK: call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
; Work-items past the range (the grid is rounded up to whole blocks) return at once.
; CHECK: %in0 = icmp ult i64 %gid0, %r0
; CHECK: %in1 = icmp ult i64 %gid1, %r1
; CHECK: %inall1 = and i1 %in0, %in1
; CHECK: br i1 %inall1, label %run, label %done
; CHECK: call void @__minisycl_body.fill(%"class.sycl::_V1::id.2" %item, ptr %a0)

; An nd_item: local id = tid, group = ctaid, local range = ntid, global range = r.
; CHECK-LABEL: define ptx_kernel void @group(i64 %r0, i64 %r1, i64 %r2, ptr %a0)
; CHECK: %it.f1.0 = insertvalue [1 x i64] undef, i64 %tid0, 0
; CHECK: %it.f2.0 = insertvalue [1 x i64] undef, i64 %ctaid0, 0
; CHECK: %it.f3.0 = insertvalue [1 x i64] undef, i64 %r0, 0
; CHECK: %it.f4.0 = insertvalue [1 x i64] undef, i64 %ntid0, 0

; A single task takes only its own parameters.
; CHECK-LABEL: define ptx_kernel void @once(ptr %a0, i32 %a1)
; CHECK-NEXT: entry:
; CHECK-NEXT: br label %run

; The barrier built-in becomes a definition (inlined by emit_ptx's -O3): the
; work-group barrier is bar.sync 0, the sub-group barrier bar.warp.sync with the
; sub-group's member mask (nvptx_groups.py).
; CHECK-LABEL: define internal void @_Z22__spirv_ControlBarrierjjj(i32 %a0, i32 %a1, i32 %a2) alwaysinline convergent
; CHECK: %sub = icmp eq i32 %a0, 3
; CHECK: call void @llvm.nvvm.bar.warp.sync(i32 %m)
; CHECK: call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
; CHECK-NOT: declare {{.*}}__spirv_ControlBarrier
; CHECK: declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
