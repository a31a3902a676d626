; RUN: not minisycl opt -passes=split-if-device,frobnicate %s 2>&1 | filecheck %s --check-prefix=UNKNOWN
; RUN: not minisycl opt '-passes=propagate-aspects{colour=red}' %s 2>&1 | filecheck %s --check-prefix=OPTION
; RUN: not minisycl opt '-passes=propagate-aspects{validate=maybe}' %s 2>&1 | filecheck %s --check-prefix=VALUE
; RUN: minisycl opt --print-pipeline '-passes=propagate-aspects{validate=false;exclude-aspects=fp64},split-if-device' %s | filecheck %s --check-prefix=CANON
; RUN: minisycl opt --print-pipeline "-passes=$(minisycl opt --print-pipeline '-passes=propagate-aspects{validate=false;exclude-aspects=fp64}' %s)" %s | filecheck %s --check-prefix=CANON

; UNKNOWN: minisycl: error: unknown pass 'frobnicate'; known passes: analyze-virtual-functions, lower-work-groups, propagate-aspects, split-if-device
; OPTION: minisycl: error: pass 'propagate-aspects' has no option 'colour' (options: exclude-aspects, fixed-targets, validate)
; VALUE: minisycl: error: pass 'propagate-aspects': option 'validate' expects true/false, got 'maybe'
; CANON: propagate-aspects{exclude-aspects=fp64;validate=false}

define void @f() {
  ret void
}
