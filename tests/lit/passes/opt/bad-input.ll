; RUN: not minisycl opt -passes=propagate-aspects Inputs/unparsable.ll 2>&1 | filecheck %s --check-prefix=PARSE
; RUN: not minisycl opt -passes=propagate-aspects Inputs/invalid.ll 2>&1 | filecheck %s --check-prefix=VERIFY
; RUN: not minisycl opt -passes=propagate-aspects does-not-exist.ll 2>&1 | filecheck %s --check-prefix=MISSING
; Bad input is one clear error line and exit status 1, never a traceback; text
; errors point at file:line:col (the verifier's at the line of the instruction it prints).

; PARSE: {{^}}Inputs/unparsable.ll:2:3: error: expected instruction opcode{{$}}
; PARSE-NOT: Traceback
; VERIFY: {{^}}Inputs/invalid.ll:4:3: error: invalid module: Instruction does not dominate all uses! %b = add i32 1, 1{{$}}
; VERIFY-NOT: Traceback
; MISSING: minisycl: error: does-not-exist.ll: No such file or directory
