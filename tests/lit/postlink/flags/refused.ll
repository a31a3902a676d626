; RUN: not minisycl post-link -device-lib-dir %t.libs -split=auto %s -o %t.table 2>&1 | filecheck %s
; RUN: not test -e %t.table
; RUN: minisycl post-link --help | filecheck %s --check-prefix=HELP
; An option of upstream's sycl-post-link that minisycl does not implement is
; an error naming it (exit 1, nothing written); --help marks it.

; CHECK: minisycl: error: -device-lib-dir: minisycl does not implement this option of sycl-post-link
; HELP: -device-lib-dir
; HELP-NEXT: [not implemented by minisycl: refused]
; HELP: -lower-esimd, --lower-esimd [ESIMD only

define spir_kernel void @k() #0 {
  ret void
}

attributes #0 = { "sycl-module-id"="a.cpp" }
