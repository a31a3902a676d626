; RUN: minisycl opt -passes=propagate-aspects %s -o - | filecheck %s
; A function reached both directly and as an action: what it uses is used,
; and also conditionally used (upstream's
; PropogateConditionalAspects/conditional-aspects-3.ll).
;
;       K
;    /     \
;  F1 (B)  CF1
;    \     /
;     F2 (A)

%Optional.A = type { i32 }
%Optional.B = type { i32 }
%class.anon = type { ptr addrspace(4) }

; CHECK: define spir_kernel void @kernel() !sycl_used_aspects ![[#ID1:]] !sycl_conditionally_used_aspects ![[#ID2:]]
define spir_kernel void @kernel() {
  call spir_func void @func1()
  %agg.tmp = alloca %class.anon, align 8
  call spir_func void @cond_func1(ptr @func2, ptr %agg.tmp, i32 0, i32 0)
  ret void
}

; CHECK: define spir_func void @func1() !sycl_used_aspects ![[#ID1]]
define spir_func void @func1() {
  %tmp = alloca %Optional.B
  call spir_func void @func2()
  ret void
}

; CHECK: define spir_func void @func2() !sycl_used_aspects ![[#ID5:]] !sycl_conditionally_used_aspects ![[#ID2]]
define spir_func void @func2() {
  %tmp = alloca %Optional.A
  ret void
}

; CHECK: declare !sycl_conditionally_used_aspects ![[#ID2]] spir_func void @cond_func1
declare spir_func void @cond_func1(ptr noundef byval(%fn) align 8, ptr noundef, i32 noundef, i32) #1

%fn = type { ptr addrspace(4) }

attributes #1 = { "sycl-call-if-on-device-conditionally"="true" }

!sycl_types_that_use_aspects = !{!0, !1}
!0 = !{!"Optional.A", i32 1}
!1 = !{!"Optional.B", i32 2}

!sycl_aspects = !{!2}
!2 = !{!"fp64", i32 6}

; CHECK: ![[#ID1]] = !{i32 2, i32 1}
; CHECK: ![[#ID2]] = !{![[#ID3:]]}
; CHECK: ![[#ID3]] = !{![[#ID4:]], ![[#ID5]]}
; CHECK: ![[#ID4]] = !{i32 0}
; CHECK: ![[#ID5]] = !{i32 1}
