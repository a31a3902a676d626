; The runtime's native support: worker threads and fault guards for kernels
; (runtime/native.py says what each entry point does, and why).
;
; A template, not IR yet: native.py fills in these names (string.Template,
; written dollar-brace-name in the text below) and JIT-compiles the result once
; per process:
;   max_threads            most worker threads (the length of @slots)
;   slots_bytes            the size of @slots in bytes (128 per slot)
;   futex_syscall          this architecture's futex system-call number
;   spin_hint_declaration  the declaration of the CPU's spin-wait hint intrinsic
;   spin_hint              a call of that intrinsic
;   spin_limit             spin-wait hints before a worker sleeps
;   max_parts              most participants of a launch (workers and the caller)
;   blocks_per_part        blocks each participant's share is cut into

; a launch: launcher, argument slots, end of the work-item range, geometry
; (native.py's PlanEntry has this layout)
%entry = type { ptr, ptr, i64, ptr }
; a worker's slot: ticket, claim, its launch, status, -, fault address, finished,
; padding to 128 bytes (one slot per cache line pair: no false sharing)
%slot = type { i64, i64, %entry, i32, i32, i64, i64, [56 x i8] }
; a participant's share of a launch: the next index to claim, the end of the
; share, padding to 128 bytes
%part = type { i64, i64, [112 x i8] }
%action = type { ptr, [128 x i8], i32, i32, ptr }

@key = internal global i32 0
@gen = internal global i32 0
@sleepers = internal global i32 0
@busy = internal global i32 0
@started = internal global i64 0
@nworkers = internal global i64 0
@slots = internal global [${max_threads} x %slot] zeroinitializer, align 128
@parts = internal global [${max_parts} x %part] zeroinitializer, align 128
@job_parts = internal global i64 0
@job_block = internal global i64 0
@halt = internal global i64 0
@old_actions = internal global [32 x %action] zeroinitializer
@ours = internal global %action { ptr @on_fault, [128 x i8] zeroinitializer, i32 134217732, i32 0, ptr null }
@default = internal global %action zeroinitializer
; Ctrl-C: SIGINT's handler (SA_ONSTACK | SA_SIGINFO, no SA_RESTART: as Python's)
@ours_int = internal global %action { ptr @on_interrupt, [128 x i8] zeroinitializer, i32 134217732, i32 0, ptr null }
; launches in progress; whether SIGINT arrived during one (cleared when the last ends)
@active = internal global i64 0
@cancel = internal global i64 0
; bumped when @cancel is cleared: a relayed SIGINT of an earlier launch that
; arrives late (its value holds the epoch it was sent in) is ignored
@epoch = internal global i64 0
; the thread that holds @busy (its workers' launch), and each worker's thread
@lead = internal global i64 0
@tids = internal global [${max_threads} x i64] zeroinitializer
; the alternate signal stack of each thread that has run guarded code
@alt_key = internal global i32 0

declare i32 @__sigsetjmp(ptr, i32) returns_twice
declare void @siglongjmp(ptr, i32) noreturn
declare i32 @sigaction(i32, ptr, ptr)
declare i32 @pthread_key_create(ptr, ptr)
declare ptr @pthread_getspecific(i32)
declare i32 @pthread_setspecific(i32, ptr)
declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare i64 @syscall(i64, ...)
declare i32 @sched_yield()
declare i32 @sigemptyset(ptr)
declare i32 @sigaddset(ptr, i32)
declare i32 @pthread_sigmask(i32, ptr, ptr)
declare i64 @llvm.umin.i64(i64, i64)
declare i32 @sigaltstack(ptr, ptr)
declare ptr @malloc(i64)
declare void @free(ptr)
declare i64 @pthread_self()
declare i32 @pthread_sigqueue(i64, i32, ptr)
declare i32 @getpid()
declare i64 @llvm.umax.i64(i64, i64)
${spin_hint_declaration}

; --- fault guard ---------------------------------------------------------------
; The jump buffer of the kernel running on this thread is the thread-specific
; value of @key; the handler stores the faulting address at offset 480 of it.

define internal i32 @guarded(ptr %fn, ptr %args, i64 %b, i64 %e, ptr %geom, ptr %faddr) noinline {
entry:
  %buf = alloca [512 x i8], align 16
  %altk = load i32, ptr @alt_key
  %alt = call ptr @pthread_getspecific(i32 %altk)
  %noalt = icmp eq ptr %alt, null
  br i1 %noalt, label %make_alt, label %armed
make_alt:
  call void @alt_stack()
  br label %armed
armed:
  %key = load i32, ptr @key
  %r = call i32 @__sigsetjmp(ptr %buf, i32 0) returns_twice
  %ok = icmp eq i32 %r, 0
  br i1 %ok, label %run, label %faulted
run:
  %s0 = call i32 @pthread_setspecific(i32 %key, ptr %buf)
  ; SIGINT that came before the buffer was in place
  %c = load atomic i64, ptr @cancel seq_cst, align 8
  %cut = icmp ne i64 %c, 0
  br i1 %cut, label %stopped, label %call
stopped:
  %s3 = call i32 @pthread_setspecific(i32 %key, ptr null)
  store i64 0, ptr %faddr
  ret i32 2
call:
  call void %fn(ptr %args, i64 %b, i64 %e, ptr %geom)
  %s1 = call i32 @pthread_setspecific(i32 %key, ptr null)
  ret i32 0
faulted:
  %s2 = call i32 @pthread_setspecific(i32 %key, ptr null)
  ; the handler left its signal blocked: unblock it (the jump did not restore the mask)
  %set = alloca [128 x i8], align 8
  %z = call i32 @sigemptyset(ptr %set)
  %a = call i32 @sigaddset(ptr %set, i32 %r)
  %m = call i32 @pthread_sigmask(i32 1, ptr %set, ptr null)
  %ap = getelementptr i8, ptr %buf, i64 480
  %addr = load volatile i64, ptr %ap
  store i64 %addr, ptr %faddr
  ret i32 %r
}

define internal void @on_fault(i32 %sig, ptr %info, ptr %uctx) {
entry:
  %key = load i32, ptr @key
  %buf = call ptr @pthread_getspecific(i32 %key)
  %outside = icmp eq ptr %buf, null
  br i1 %outside, label %chain, label %jump
jump:
  %ap = getelementptr i8, ptr %info, i64 16
  %addr = load i64, ptr %ap
  %slot = getelementptr i8, ptr %buf, i64 480
  store volatile i64 %addr, ptr %slot
  call void @siglongjmp(ptr %buf, i32 %sig)
  unreachable
chain:
  call void @call_old(i32 %sig, ptr %info, ptr %uctx)
  ; the fault recurs on return and takes the default action
  %r = call i32 @sigaction(i32 %sig, ptr @default, ptr null)
  ret void
}

; The handler that was there before ours for %sig, unless it was SIG_DFL,
; SIG_IGN or ours.
define internal void @call_old(i32 %sig, ptr %info, ptr %uctx) cold noinline optsize {
entry:
  %idx = sext i32 %sig to i64
  %old = getelementptr [32 x %action], ptr @old_actions, i64 0, i64 %idx
  %h = load ptr, ptr %old
  %hi = ptrtoint ptr %h to i64
  %special = icmp ule i64 %hi, 1
  %self = icmp eq ptr %h, @on_fault
  %self2 = icmp eq ptr %h, @on_interrupt
  %mine = or i1 %self, %self2
  %skip = or i1 %special, %mine
  br i1 %skip, label %done, label %call
call:
  %fp = getelementptr %action, ptr %old, i32 0, i32 2
  %flags = load i32, ptr %fp
  %si = and i32 %flags, 4
  %three = icmp ne i32 %si, 0
  br i1 %three, label %call3, label %call1
call3:
  call void %h(i32 %sig, ptr %info, ptr %uctx)
  br label %done
call1:
  call void %h(i32 %sig)
  br label %done
done:
  ret void
}

; --- alternate signal stacks --------------------------------------------------------
; A kernel or host function that overflows its stack faults on the stack's
; guard page; the handler can only run on another stack.  Each thread gets one
; the first time it runs guarded code (64 KiB: the kernel's signal frame with
; the widest vector state is ~11 KiB), unless it has one already (Python's
; faulthandler gives the main thread one); @alt_key holds it (1: not ours) and
; frees ours when the thread ends.

define internal void @alt_stack() cold noinline optsize {
entry:
  %cur = alloca { ptr, i32, i64 }, align 8
  %q = call i32 @sigaltstack(ptr null, ptr %cur)
  %fp = getelementptr { ptr, i32, i64 }, ptr %cur, i32 0, i32 1
  %flags = load i32, ptr %fp
  %sp = getelementptr { ptr, i32, i64 }, ptr %cur, i32 0, i32 2
  %size = load i64, ptr %sp
  %disabled = and i32 %flags, 2
  %none = icmp ne i32 %disabled, 0
  %small = icmp ult i64 %size, 32768
  %replace = or i1 %none, %small
  %altk = load i32, ptr @alt_key
  br i1 %replace, label %make, label %theirs
theirs:
  %s0 = call i32 @pthread_setspecific(i32 %altk, ptr inttoptr (i64 1 to ptr))
  ret void
make:
  %mem = call ptr @malloc(i64 65536)
  %got = icmp ne ptr %mem, null
  br i1 %got, label %install, label %out
install:
  %new = alloca { ptr, i32, i64 }, align 8
  store ptr %mem, ptr %new
  %nf = getelementptr { ptr, i32, i64 }, ptr %new, i32 0, i32 1
  store i32 0, ptr %nf
  %ns = getelementptr { ptr, i32, i64 }, ptr %new, i32 0, i32 2
  store i64 65536, ptr %ns
  %r = call i32 @sigaltstack(ptr %new, ptr null)
  %s1 = call i32 @pthread_setspecific(i32 %altk, ptr %mem)
  br label %out
out:
  ret void
}

; @alt_key's destructor: a thread that ends gives its stack back
define internal void @drop_alt_stack(ptr %mem) cold noinline optsize {
entry:
  %theirs = icmp eq ptr %mem, inttoptr (i64 1 to ptr)
  br i1 %theirs, label %done, label %drop
drop:
  %off = alloca { ptr, i32, i64 }, align 8
  store ptr null, ptr %off
  %of = getelementptr { ptr, i32, i64 }, ptr %off, i32 0, i32 1
  store i32 2, ptr %of
  %os = getelementptr { ptr, i32, i64 }, ptr %off, i32 0, i32 2
  store i64 0, ptr %os
  %r = call i32 @sigaltstack(ptr %off, ptr null)
  call void @free(ptr %mem)
  br label %done
done:
  ret void
}

; --- interruption (Ctrl-C) -------------------------------------------------------
; SIGINT during a launch: Python's handler runs (it records the signal; the
; caller raises KeyboardInterrupt), @cancel is set (nobody claims another block),
; the launch's other threads get SIGINT too (marked ours by its value, so
; Python's handler runs once), and a thread inside a kernel jumps back to its
; guard, which returns 2.  Outside launches Python's handler is all that runs.

define internal void @on_interrupt(i32 %sig, ptr %info, ptr %uctx) cold noinline optsize {
entry:
  %vp = getelementptr i8, ptr %info, i64 24
  %value = load i64, ptr %vp
  %codep = getelementptr i8, ptr %info, i64 8
  %code = load i32, ptr %codep
  %queued = icmp eq i32 %code, -1
  %low = and i64 %value, 4294967295
  %magic = icmp eq i64 %low, ${interrupt_mark}
  %relayed = and i1 %queued, %magic
  br i1 %relayed, label %relay_check, label %python
relay_check:
  %sent = lshr i64 %value, 32
  %now = load atomic i64, ptr @epoch seq_cst, align 8
  %now32 = and i64 %now, 4294967295
  %late = icmp ne i64 %sent, %now32
  br i1 %late, label %done, label %ours
python:
  call void @call_old(i32 %sig, ptr %info, ptr %uctx)
  br label %ours
ours:
  %n = load atomic i64, ptr @active seq_cst, align 8
  %running = icmp ne i64 %n, 0
  br i1 %running, label %stop, label %done
stop:
  %was = atomicrmw xchg ptr @cancel, i64 1 seq_cst
  %first = icmp eq i64 %was, 0
  br i1 %first, label %relay, label %jump
relay:
  call void @relay_interrupt()
  br label %jump
jump:
  %key = load i32, ptr @key
  %buf = call ptr @pthread_getspecific(i32 %key)
  %outside = icmp eq ptr %buf, null
  br i1 %outside, label %done, label %out
out:
  %slot = getelementptr i8, ptr %buf, i64 480
  store volatile i64 0, ptr %slot
  call void @siglongjmp(ptr %buf, i32 2)
  unreachable
done:
  ret void
}

define internal void @send_interrupt(i64 %tid) cold noinline optsize {
entry:
  %none = icmp eq i64 %tid, 0
  %me = call i64 @pthread_self()
  %self = icmp eq i64 %tid, %me
  %skip = or i1 %none, %self
  br i1 %skip, label %done, label %send
send:
  %ep = load atomic i64, ptr @epoch seq_cst, align 8
  %ep32 = shl i64 %ep, 32
  %val = or i64 %ep32, ${interrupt_mark}
  %valp = inttoptr i64 %val to ptr
  %r = call i32 @pthread_sigqueue(i64 %tid, i32 2, ptr %valp)
  br label %done
done:
  ret void
}

; SIGINT to the thread leading the workers' launch and to every worker
define internal void @relay_interrupt() cold noinline optsize {
entry:
  %lead = load atomic i64, ptr @lead seq_cst, align 8
  call void @send_interrupt(i64 %lead)
  %n = load i64, ptr @started
  %any = icmp ne i64 %n, 0
  br i1 %any, label %loop, label %done
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %tp = getelementptr [${max_threads} x i64], ptr @tids, i64 0, i64 %i
  %tid = load i64, ptr %tp
  call void @send_interrupt(i64 %tid)
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}

; A launch begins: one more in progress
define internal void @begin_launch() {
entry:
  %a = atomicrmw add ptr @active, i64 1 seq_cst
  ret void
}

; A launch ends; the last to end clears @cancel.
define internal void @end_launch() {
entry:
  %a = atomicrmw sub ptr @active, i64 1 seq_cst
  %last = icmp eq i64 %a, 1
  br i1 %last, label %clear, label %done
clear:
  %c = load atomic i64, ptr @cancel seq_cst, align 8
  %set = icmp ne i64 %c, 0
  br i1 %set, label %reset, label %done
reset:
  %e = atomicrmw add ptr @epoch, i64 1 seq_cst
  store atomic i64 0, ptr @cancel seq_cst, align 8
  br label %done
done:
  ret void
}

define internal void @install(i32 %sig) {
entry:
  %cur = alloca %action, align 16
  %q = call i32 @sigaction(i32 %sig, ptr null, ptr %cur)
  %h = load ptr, ptr %cur
  %mine = icmp eq ptr %h, @on_fault
  br i1 %mine, label %done, label %set
set:
  %prev = alloca %action, align 16
  %r = call i32 @sigaction(i32 %sig, ptr @ours, ptr %prev)
  %ph = load ptr, ptr %prev
  %again = icmp eq ptr %ph, @on_fault
  br i1 %again, label %done, label %keep
keep:
  %idx = sext i32 %sig to i64
  %old = getelementptr [32 x %action], ptr @old_actions, i64 0, i64 %idx
  call void @llvm.memcpy.p0.p0.i64(ptr %old, ptr %prev, i64 152, i1 false)
  br label %done
done:
  ret void
}

declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)

; SIGINT: ours in front of a handler that is a function (Python's); SIG_DFL and
; SIG_IGN are left alone (Ctrl-C then does what it would do without us).
define internal void @ensure_interrupt() cold noinline optsize {
entry:
  %cur = alloca %action, align 16
  %q = call i32 @sigaction(i32 2, ptr null, ptr %cur)
  %h = load ptr, ptr %cur
  %mine = icmp eq ptr %h, @on_interrupt
  %hi = ptrtoint ptr %h to i64
  %special = icmp ule i64 %hi, 1
  %skip = or i1 %mine, %special
  br i1 %skip, label %done, label %set
set:
  %old = getelementptr [32 x %action], ptr @old_actions, i64 0, i64 2
  call void @llvm.memcpy.p0.p0.i64(ptr %old, ptr %cur, i64 152, i1 false)
  %r = call i32 @sigaction(i32 2, ptr @ours_int, ptr null)
  br label %done
done:
  ret void
}

; SIGSEGV's handler tells whether someone replaced ours (faulthandler.enable()
; replaces all four at once): one system call per launch.
define internal void @ensure_handlers() {
entry:
  %cur = alloca %action, align 16
  %q = call i32 @sigaction(i32 11, ptr null, ptr %cur)
  %h = load ptr, ptr %cur
  %mine = icmp eq ptr %h, @on_fault
  br i1 %mine, label %done, label %set
set:
  call void @install(i32 11)
  call void @install(i32 7)
  call void @install(i32 8)
  call void @install(i32 4)
  br label %done
done:
  call void @ensure_interrupt()
  ret void
}

define void @msycl_init(i64 %nworkers) {
entry:
  %r = call i32 @pthread_key_create(ptr @key, ptr null)
  %r2 = call i32 @pthread_key_create(ptr @alt_key, ptr @drop_alt_stack)
  %n = call i64 @llvm.umin.i64(i64 %nworkers, i64 ${max_threads})
  store i64 %n, ptr @nworkers
  call void @ensure_handlers()
  ret void
}

; after fork() the child has no workers: start afresh
define void @msycl_after_fork() {
entry:
  store i64 0, ptr @started
  store i32 0, ptr @busy
  store i32 0, ptr @sleepers
  store i64 0, ptr @active
  store i64 0, ptr @cancel
  store i64 0, ptr @lead
  call void @llvm.memset.p0.i64(ptr @slots, i8 0, i64 ${slots_bytes}, i1 false)
  ret void
}

declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

; Spin (with the CPU's spin-wait hint) until *%word == %value is %equal, at most
; ${spin_limit} times; whether it came true.
define internal i1 @spin(ptr %word, i64 %value, i1 %equal) {
entry:
  br label %check
check:
  %k = phi i64 [ 0, %entry ], [ %k1, %pause ]
  %w = load atomic i64, ptr %word seq_cst, align 8
  %eq = icmp eq i64 %w, %value
  %done = icmp eq i1 %eq, %equal
  br i1 %done, label %yes, label %pause
pause:
  ${spin_hint}
  %k1 = add i64 %k, 1
  %more = icmp ult i64 %k1, ${spin_limit}
  br i1 %more, label %check, label %no
yes:
  ret i1 true
no:
  ret i1 false
}

; Run the launch %e (an %entry) over [%begin, %end) under the guard: the one
; place that reads a launch of the workers' slots (a plan's entries:
; @guarded_entries).
define internal i32 @run_block(ptr %e, i64 %begin, i64 %end, ptr %faddr) {
entry:
  %fn = load ptr, ptr %e
  %ap = getelementptr %entry, ptr %e, i32 0, i32 1
  %args = load ptr, ptr %ap
  %gp = getelementptr %entry, ptr %e, i32 0, i32 3
  %geom = load ptr, ptr %gp
  %s = call i32 @guarded(ptr %fn, ptr %args, i64 %begin, i64 %end, ptr %geom, ptr %faddr)
  ret i32 %s
}

; --- sharing a launch ------------------------------------------------------------
; Each participant (a worker or the caller) has a share of the range in @parts,
; cut into blocks of @job_block.  It claims the blocks of its own share first
; (the same piece of memory as in the launch before: its caches), then those
; left in the others' shares, so a participant that starts late or runs slowly
; (a core taken by another process) holds nobody up.  Claims are one atomic
; add on the share's next index.  A fault sets @halt: nobody claims more.

; Run the blocks left in share %q; 0 or the signal of a fault.
define internal i32 @drain(ptr %e, i64 %q, ptr %faddr) {
entry:
  %part = getelementptr [${max_parts} x %part], ptr @parts, i64 0, i64 %q
  %endp = getelementptr %part, ptr %part, i32 0, i32 1
  %end = load i64, ptr %endp
  %blk = load i64, ptr @job_block
  br label %next
next:
  %h0 = load atomic i64, ptr @halt monotonic, align 8
  %c0 = load atomic i64, ptr @cancel monotonic, align 8
  %h = or i64 %h0, %c0
  %halted = icmp ne i64 %h, 0
  br i1 %halted, label %done, label %look
look:
  ; read before adding: a share with nothing left costs no write to its line
  %cur = load atomic i64, ptr %part monotonic, align 8
  %some = icmp ult i64 %cur, %end
  br i1 %some, label %claim, label %done
claim:
  %b = atomicrmw add ptr %part, i64 %blk seq_cst
  %left = icmp ult i64 %b, %end
  br i1 %left, label %run, label %done
run:
  %b1 = add i64 %b, %blk
  %e1 = call i64 @llvm.umin.i64(i64 %b1, i64 %end)
  %s = call i32 @run_block(ptr %e, i64 %b, i64 %e1, ptr %faddr)
  %bad = icmp ne i32 %s, 0
  br i1 %bad, label %fault, label %next
fault:
  store atomic i64 1, ptr @halt seq_cst, align 8
  ret i32 %s
done:
  ret i32 0
}

; Participant %p: its own share, then the others' in turn; 0 or the signal of a fault.
define internal i32 @participate(ptr %e, i64 %p, ptr %faddr) {
entry:
  %k = load i64, ptr @job_parts
  br label %loop
loop:
  %j = phi i64 [ 0, %entry ], [ %j1, %cont ]
  %pj = add i64 %p, %j
  %q = urem i64 %pj, %k
  %s = call i32 @drain(ptr %e, i64 %q, ptr %faddr)
  %bad = icmp ne i32 %s, 0
  br i1 %bad, label %out, label %cont
cont:
  %j1 = add i64 %j, 1
  %more = icmp ult i64 %j1, %k
  br i1 %more, label %loop, label %out
out:
  %r = phi i32 [ %s, %loop ], [ 0, %cont ]
  ret i32 %r
}

; --- worker threads ----------------------------------------------------------------
; Slot i (%slot): the ticket is bumped by the dispatcher for each job.  The
; job is claimed once, by the worker or - if the worker has not come by the
; time the caller has finished every block - by the caller, which then does not
; wait for it: the claim goes from ticket - 1 to ticket with a compare-and-swap.
; finished becomes the ticket when a worker's job is done.

define internal ptr @worker(ptr %arg) {
entry:
  %idx = ptrtoint ptr %arg to i64
  %slot = getelementptr [${max_threads} x %slot], ptr @slots, i64 0, i64 %idx
  %claimp = getelementptr %slot, ptr %slot, i32 0, i32 1
  br label %wait
wait:
  %seen = phi i64 [ 0, %entry ], [ %t, %run ], [ %t, %take ], [ %seen, %woke ]
  %new = call i1 @spin(ptr %slot, i64 %seen, i1 false)
  br i1 %new, label %take, label %sleep
sleep:
  %a = atomicrmw add ptr @sleepers, i32 1 seq_cst
  %g = load atomic i32, ptr @gen seq_cst, align 4
  %t2 = load atomic i64, ptr %slot seq_cst, align 8
  %new2 = icmp ne i64 %t2, %seen
  br i1 %new2, label %woke, label %futex
futex:
  %w = call i64 (i64, ...) @syscall(i64 ${futex_syscall}, ptr @gen, i32 128, i32 %g, ptr null)
  br label %woke
woke:
  %d = atomicrmw sub ptr @sleepers, i32 1 seq_cst
  br label %wait
take:
  %t = load atomic i64, ptr %slot seq_cst, align 8
  %prev = sub i64 %t, 1
  %c = cmpxchg ptr %claimp, i64 %prev, i64 %t seq_cst seq_cst
  %mine = extractvalue { i64, i1 } %c, 1
  br i1 %mine, label %run, label %wait
run:
  %launch = getelementptr %slot, ptr %slot, i32 0, i32 2
  %fa = getelementptr %slot, ptr %slot, i32 0, i32 5
  %s = call i32 @participate(ptr %launch, i64 %idx, ptr %fa)
  %sp = getelementptr %slot, ptr %slot, i32 0, i32 3
  store i32 %s, ptr %sp
  %fin = getelementptr %slot, ptr %slot, i32 0, i32 6
  store atomic i64 %t, ptr %fin seq_cst, align 8
  br label %wait
}

; Start the worker threads the first time (called with @busy held).
define internal void @start_workers() {
entry:
  %tid = alloca i64
  %n = load i64, ptr @nworkers
  br label %loop
loop:
  %i = load i64, ptr @started
  %more = icmp ult i64 %i, %n
  br i1 %more, label %create, label %done
create:
  %p = inttoptr i64 %i to ptr
  %r = call i32 @pthread_create(ptr %tid, ptr null, ptr @worker, ptr %p)
  %ok = icmp eq i32 %r, 0
  br i1 %ok, label %next, label %failed
next:
  %tv = load i64, ptr %tid
  %tp = getelementptr [${max_threads} x i64], ptr @tids, i64 0, i64 %i
  store i64 %tv, ptr %tp
  %i1 = add i64 %i, 1
  store i64 %i1, ptr @started
  br label %loop
failed:
  store i64 %i, ptr @nworkers
  br label %done
done:
  ret void
}

define i32 @msycl_run(ptr %fn, ptr %args, i64 %total, ptr %geom, i64 %chunks, ptr %faddr) {
entry:
  call void @begin_launch()
  call void @ensure_handlers()
  %s = call i32 @run_launch(ptr %fn, ptr %args, i64 %total, ptr %geom, i64 %chunks, ptr %faddr)
  call void @end_launch()
  ret i32 %s
}

define internal i32 @run_launch(ptr %fn, ptr %args, i64 %total, ptr %geom, i64 %chunks, ptr %faddr) {
entry:
  %me = alloca %entry
  %par = icmp ugt i64 %chunks, 1
  br i1 %par, label %lock, label %alone
lock:
  %got = cmpxchg ptr @busy, i32 0, i32 1 seq_cst seq_cst
  %locked = extractvalue { i32, i1 } %got, 1
  br i1 %locked, label %start, label %alone
alone:
  %s = call i32 @guarded(ptr %fn, ptr %args, i64 0, i64 %total, ptr %geom, ptr %faddr)
  ret i32 %s
start:
  %self = call i64 @pthread_self()
  store atomic i64 %self, ptr @lead seq_cst, align 8
  call void @start_workers()
  %avail = load i64, ptr @started
  %want = sub i64 %chunks, 1
  %w = call i64 @llvm.umin.i64(i64 %want, i64 %avail)
  %any = icmp ugt i64 %w, 0
  br i1 %any, label %split, label %unlock_alone
unlock_alone:
  store atomic i64 0, ptr @lead seq_cst, align 8
  store atomic i32 0, ptr @busy seq_cst, align 4
  br label %alone
split:
  ; shares of ceil(total / k) indices, each cut into ${blocks_per_part} blocks
  %k = add i64 %w, 1
  %t1 = add i64 %total, %w
  %step = udiv i64 %t1, %k
  %bl0 = add i64 %step, ${blocks_per_part_minus_1}
  %bl1 = udiv i64 %bl0, ${blocks_per_part}
  %blk = call i64 @llvm.umax.i64(i64 %bl1, i64 1)
  store i64 %k, ptr @job_parts
  store i64 %blk, ptr @job_block
  store atomic i64 0, ptr @halt seq_cst, align 8
  br label %share
share:
  %p = phi i64 [ 0, %split ], [ %p1, %share ]
  %part = getelementptr [${max_parts} x %part], ptr @parts, i64 0, i64 %p
  %pb0 = mul i64 %p, %step
  %pb = call i64 @llvm.umin.i64(i64 %pb0, i64 %total)
  %pe0 = add i64 %pb0, %step
  %pe = call i64 @llvm.umin.i64(i64 %pe0, i64 %total)
  store i64 %pb, ptr %part
  %pep = getelementptr %part, ptr %part, i32 0, i32 1
  store i64 %pe, ptr %pep
  %p1 = add i64 %p, 1
  %allp = icmp ult i64 %p1, %k
  br i1 %allp, label %share, label %post
post:
  %i = phi i64 [ 0, %share ], [ %i1, %post ]
  %slot = getelementptr [${max_threads} x %slot], ptr @slots, i64 0, i64 %i
  %fnp = getelementptr %slot, ptr %slot, i32 0, i32 2, i32 0
  store ptr %fn, ptr %fnp
  %argp = getelementptr %slot, ptr %slot, i32 0, i32 2, i32 1
  store ptr %args, ptr %argp
  %ep = getelementptr %slot, ptr %slot, i32 0, i32 2, i32 2
  store i64 %total, ptr %ep
  %gp = getelementptr %slot, ptr %slot, i32 0, i32 2, i32 3
  store ptr %geom, ptr %gp
  %t = load i64, ptr %slot
  %tn = add i64 %t, 1
  store atomic i64 %tn, ptr %slot seq_cst, align 8
  %i1 = add i64 %i, 1
  %again = icmp ult i64 %i1, %w
  br i1 %again, label %post, label %wake
wake:
  %g = atomicrmw add ptr @gen, i32 1 seq_cst
  %sl = load atomic i32, ptr @sleepers seq_cst, align 4
  %sleeping = icmp ne i32 %sl, 0
  br i1 %sleeping, label %futex, label %own
futex:
  %wk = call i64 (i64, ...) @syscall(i64 ${futex_syscall}, ptr @gen, i32 129, i32 2147483647)
  br label %own
own:
  ; the caller is participant w
  store ptr %fn, ptr %me
  %mea = getelementptr %entry, ptr %me, i32 0, i32 1
  store ptr %args, ptr %mea
  %mee = getelementptr %entry, ptr %me, i32 0, i32 2
  store i64 %total, ptr %mee
  %meg = getelementptr %entry, ptr %me, i32 0, i32 3
  store ptr %geom, ptr %meg
  %os = call i32 @participate(ptr %me, i64 %w, ptr %faddr)
  br label %join
join:
  ; every block is claimed: a worker that has not claimed its job yet is not
  ; waited for (its job is claimed here), one that has is
  %j = phi i64 [ 0, %own ], [ %j1, %joined ]
  %st = phi i32 [ %os, %own ], [ %st2, %joined ]
  %js = getelementptr [${max_threads} x %slot], ptr @slots, i64 0, i64 %j
  %jt = load i64, ptr %js
  %jprev = sub i64 %jt, 1
  %jclaimp = getelementptr %slot, ptr %js, i32 0, i32 1
  %jc = cmpxchg ptr %jclaimp, i64 %jprev, i64 %jt seq_cst seq_cst
  %unclaimed = extractvalue { i64, i1 } %jc, 1
  %finp = getelementptr %slot, ptr %js, i32 0, i32 6
  br i1 %unclaimed, label %skipped, label %check
skipped:
  br label %joined
check:
  %fin = call i1 @spin(ptr %finp, i64 %jt, i1 true)
  br i1 %fin, label %ran, label %yield
yield:
  ; interrupted: a worker still in a kernel gets SIGINT again (it may have
  ; entered its block just after the first)
  %cn = load atomic i64, ptr @cancel seq_cst, align 8
  %cut = icmp ne i64 %cn, 0
  br i1 %cut, label %resend, label %pause
resend:
  %wt = getelementptr [${max_threads} x i64], ptr @tids, i64 0, i64 %j
  %wtid = load i64, ptr %wt
  call void @send_interrupt(i64 %wtid)
  br label %pause
pause:
  %y = call i32 @sched_yield()
  br label %check
ran:
  %wsp = getelementptr %slot, ptr %js, i32 0, i32 3
  %ws0 = load i32, ptr %wsp
  %wap = getelementptr %slot, ptr %js, i32 0, i32 5
  %wa0 = load i64, ptr %wap
  br label %joined
joined:
  %ws = phi i32 [ 0, %skipped ], [ %ws0, %ran ]
  %wa = phi i64 [ 0, %skipped ], [ %wa0, %ran ]
  %clean = icmp eq i32 %st, 0
  %hit = icmp ne i32 %ws, 0
  %take = and i1 %clean, %hit
  %st2 = select i1 %take, i32 %ws, i32 %st
  %cur = load i64, ptr %faddr
  %na = select i1 %take, i64 %wa, i64 %cur
  store i64 %na, ptr %faddr
  %j1 = add i64 %j, 1
  %jm = icmp ult i64 %j1, %w
  br i1 %jm, label %join, label %finish
finish:
  ; interrupted: blocks may be left unclaimed (2, unless a fault came first)
  %cn2 = load atomic i64, ptr @cancel seq_cst, align 8
  %cut2 = icmp ne i64 %cn2, 0
  %clean2 = icmp eq i32 %st2, 0
  %stop2 = and i1 %cut2, %clean2
  %st3 = select i1 %stop2, i32 2, i32 %st2
  store atomic i64 0, ptr @lead seq_cst, align 8
  store atomic i32 0, ptr @busy seq_cst, align 4
  ret i32 %st3
}

; A plan's entries run in order on the calling thread under one guard (a
; jump buffer for the whole run, not one per entry: an entry costs its call).
; %job is { entries, count, signal, fault address } (native.py's PlanJob); the
; index of the entry that faulted or was interrupted, its signal and address in
; the job, or -1.
define i64 @msycl_run_plan(ptr %job) {
entry:
  call void @begin_launch()
  call void @ensure_handlers()
  %entries = load ptr, ptr %job
  %np = getelementptr { ptr, i64, i64, i64 }, ptr %job, i32 0, i32 1
  %count = load i64, ptr %np
  %faddr = getelementptr { ptr, i64, i64, i64 }, ptr %job, i32 0, i32 3
  %at = alloca i64, align 8
  %s = call i32 @guarded_entries(ptr %entries, i64 %count, ptr %at, ptr %faddr)
  call void @end_launch()
  %bad = icmp ne i32 %s, 0
  br i1 %bad, label %faulted, label %done
faulted:
  %sig = sext i32 %s to i64
  %sp = getelementptr { ptr, i64, i64, i64 }, ptr %job, i32 0, i32 2
  store i64 %sig, ptr %sp
  %i = load i64, ptr %at
  ret i64 %i
done:
  ret i64 -1
}

; @guarded for a list of entries: 0, or the signal that stopped entry *%at
; (2: SIGINT) with the faulting address in *%faddr.  The index of the entry
; running lives in memory (volatile), so the path after a jump reads it.
define internal i32 @guarded_entries(ptr %entries, i64 %count, ptr %at, ptr %faddr) noinline {
entry:
  %buf = alloca [512 x i8], align 16
  %cur = alloca i64, align 8
  store volatile i64 0, ptr %cur
  %altk = load i32, ptr @alt_key
  %alt = call ptr @pthread_getspecific(i32 %altk)
  %noalt = icmp eq ptr %alt, null
  br i1 %noalt, label %make_alt, label %armed
make_alt:
  call void @alt_stack()
  br label %armed
armed:
  %key = load i32, ptr @key
  %r = call i32 @__sigsetjmp(ptr %buf, i32 0) returns_twice
  %ok = icmp eq i32 %r, 0
  br i1 %ok, label %run, label %faulted
run:
  %s0 = call i32 @pthread_setspecific(i32 %key, ptr %buf)
  %none = icmp eq i64 %count, 0
  br i1 %none, label %done, label %loop
loop:
  %i = phi i64 [ 0, %run ], [ %i1, %called ]
  store volatile i64 %i, ptr %cur
  ; SIGINT that came before the buffer was in place, or during an entry before
  %c = load atomic i64, ptr @cancel seq_cst, align 8
  %cut = icmp ne i64 %c, 0
  br i1 %cut, label %stopped, label %call
call:
  %e = getelementptr %entry, ptr %entries, i64 %i
  %fn = load ptr, ptr %e
  %ap = getelementptr %entry, ptr %e, i32 0, i32 1
  %args = load ptr, ptr %ap
  %tp = getelementptr %entry, ptr %e, i32 0, i32 2
  %end = load i64, ptr %tp
  %gp = getelementptr %entry, ptr %e, i32 0, i32 3
  %geom = load ptr, ptr %gp
  call void %fn(ptr %args, i64 0, i64 %end, ptr %geom)
  br label %called
called:
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %count
  br i1 %more, label %loop, label %done
done:
  %s1 = call i32 @pthread_setspecific(i32 %key, ptr null)
  ret i32 0
stopped:
  %s3 = call i32 @pthread_setspecific(i32 %key, ptr null)
  store i64 %i, ptr %at
  store i64 0, ptr %faddr
  ret i32 2
faulted:
  %s2 = call i32 @pthread_setspecific(i32 %key, ptr null)
  ; the handler left its signal blocked: unblock it (the jump did not restore the mask)
  %set = alloca [128 x i8], align 8
  %z = call i32 @sigemptyset(ptr %set)
  %a = call i32 @sigaddset(ptr %set, i32 %r)
  %m = call i32 @pthread_sigmask(i32 1, ptr %set, ptr null)
  %addrp = getelementptr i8, ptr %buf, i64 480
  %addr = load volatile i64, ptr %addrp
  store i64 %addr, ptr %faddr
  %which = load volatile i64, ptr %cur
  store i64 %which, ptr %at
  ret i32 %r
}
