; The tiled matrix product of docs/language.md, as DPC++ would emit it (-O1 style):
; two static work-group tiles, two barriers inside the loop over tiles.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64"
target triple = "spir64-unknown-unknown"

%"class.sycl::_V1::nd_item.2" = type { [2 x i64], [2 x i64], [2 x i64], [2 x i64], [2 x i64] }

@ta = internal addrspace(3) global [16 x [16 x float]] undef, align 4
@tb = internal addrspace(3) global [16 x [16 x float]] undef, align 4

define spir_kernel void @tiled_matmul(%"class.sycl::_V1::nd_item.2" %it, ptr %a, ptr %b, ptr %c, i32 %n) #0 !reqd_work_group_size !0 {
entry:
  %r = extractvalue %"class.sycl::_V1::nd_item.2" %it, 0, 0
  %col = extractvalue %"class.sycl::_V1::nd_item.2" %it, 0, 1
  %lr = extractvalue %"class.sycl::_V1::nd_item.2" %it, 1, 0
  %lc = extractvalue %"class.sycl::_V1::nd_item.2" %it, 1, 1
  %n64 = sext i32 %n to i64
  %tiles = sdiv i32 %n, 16
  %any = icmp sgt i32 %tiles, 0
  br i1 %any, label %tile, label %done

tile:
  %t = phi i32 [ 0, %entry ], [ %t1, %next ]
  %acc = phi float [ 0.0, %entry ], [ %acc2, %next ]
  %t64 = sext i32 %t to i64
  %t16 = mul i64 %t64, 16
  %rn = mul i64 %r, %n64
  %ai0 = add i64 %rn, %t16
  %ai = add i64 %ai0, %lc
  %pa = getelementptr float, ptr %a, i64 %ai
  %va = load float, ptr %pa
  %sa = getelementptr [16 x [16 x float]], ptr addrspace(3) @ta, i64 0, i64 %lr, i64 %lc
  store float %va, ptr addrspace(3) %sa
  %br0 = add i64 %t16, %lr
  %br1 = mul i64 %br0, %n64
  %bi = add i64 %br1, %col
  %pb = getelementptr float, ptr %b, i64 %bi
  %vb = load float, ptr %pb
  %sb = getelementptr [16 x [16 x float]], ptr addrspace(3) @tb, i64 0, i64 %lr, i64 %lc
  store float %vb, ptr addrspace(3) %sb
  call void @_Z22__spirv_ControlBarrierjjj(i32 2, i32 2, i32 272)
  br label %inner

inner:
  %k = phi i64 [ 0, %tile ], [ %k1, %inner ]
  %acc1 = phi float [ %acc, %tile ], [ %acc2, %inner ]
  %pta = getelementptr [16 x [16 x float]], ptr addrspace(3) @ta, i64 0, i64 %lr, i64 %k
  %xa = load float, ptr addrspace(3) %pta
  %ptb = getelementptr [16 x [16 x float]], ptr addrspace(3) @tb, i64 0, i64 %k, i64 %lc
  %xb = load float, ptr addrspace(3) %ptb
  %m = fmul float %xa, %xb
  %acc2 = fadd float %acc1, %m
  %k1 = add i64 %k, 1
  %more = icmp ult i64 %k1, 16
  br i1 %more, label %inner, label %next

next:
  call void @_Z22__spirv_ControlBarrierjjj(i32 2, i32 2, i32 272)
  %t1 = add i32 %t, 1
  %again = icmp slt i32 %t1, %tiles
  br i1 %again, label %tile, label %done

done:
  %res = phi float [ 0.0, %entry ], [ %acc2, %next ]
  %cn = mul i64 %r, %n64
  %ci = add i64 %cn, %col
  %pc = getelementptr float, ptr %c, i64 %ci
  store float %res, ptr %pc
  ret void
}

define spir_kernel void @naive_matmul(%"class.sycl::_V1::nd_item.2" %it, ptr %a, ptr %b, ptr %c, i32 %n) #1 {
entry:
  %r = extractvalue %"class.sycl::_V1::nd_item.2" %it, 0, 0
  %col = extractvalue %"class.sycl::_V1::nd_item.2" %it, 0, 1
  %n64 = sext i32 %n to i64
  %any = icmp sgt i64 %n64, 0
  br i1 %any, label %loop, label %done

loop:
  %k = phi i64 [ 0, %entry ], [ %k1, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %acc1, %loop ]
  %rn = mul i64 %r, %n64
  %ai = add i64 %rn, %k
  %pa = getelementptr float, ptr %a, i64 %ai
  %xa = load float, ptr %pa
  %kn = mul i64 %k, %n64
  %bi = add i64 %kn, %col
  %pb = getelementptr float, ptr %b, i64 %bi
  %xb = load float, ptr %pb
  %m = fmul float %xa, %xb
  %acc1 = fadd float %acc, %m
  %k1 = add i64 %k, 1
  %more = icmp slt i64 %k1, %n64
  br i1 %more, label %loop, label %done

done:
  %res = phi float [ 0.0, %entry ], [ %acc1, %loop ]
  %cn = mul i64 %r, %n64
  %ci = add i64 %cn, %col
  %pc = getelementptr float, ptr %c, i64 %ci
  store float %res, ptr %pc
  ret void
}

declare void @_Z22__spirv_ControlBarrierjjj(i32, i32, i32)

attributes #0 = { "minisycl-kernel-signature"="nd_item<2>,float*,float*,float*,int" "sycl-module-id"="tiled_matmul.ll" }
attributes #1 = { "minisycl-kernel-signature"="nd_item<2>,float*,float*,float*,int" "sycl-module-id"="tiled_matmul.ll" }

!0 = !{i32 16, i32 16}
