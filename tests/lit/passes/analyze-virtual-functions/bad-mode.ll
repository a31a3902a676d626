; RUN: not minisycl opt '-passes=analyze-virtual-functions{mode=fast}' %s -o - 2>&1 | filecheck %s
; An unknown mode is one error line naming the choices.
; CHECK: error: pass 'analyze-virtual-functions': option 'mode' expects one of design, upstream, got 'fast'
; CHECK-NOT: Traceback

define spir_kernel void @k() {
  ret void
}
