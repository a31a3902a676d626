"""The speed guard's thresholds (``bench/guard.py``): ONE place, reviewed like code.

Each figure is a ratio to a baseline measured in the same run (lower is
better); the guard fails when a ratio is over its threshold.  A threshold is
the ratio achieved when it was set plus a margin for the noise of a shared
2-core CI machine, and says where it came from.  Raising one is a visible
change: say why in the commit.

``figure: (threshold, where it came from, the bench that measures it)``
"""
from __future__ import annotations

THRESHOLDS: dict[str, tuple[float, str, str]] = {
    # -- middle end and post-link (bench_passes.py, bench_postlink.py --quick): over LLVM's own work
    "passes.pipelined": (
        4.5, "issue 28, h3: 2.97-3.02 against 5f7c079's 3.37-3.45 on 2 shared cores under load ~9 (150 groups, "
             "A B A B); h6's range 2.7-3.8 less those 12% is 2.4-3.4, +30% noise (was 5.0); the issue's target "
             "is 2.0 at full size; h2, load 2-4: 485b9ca 2.88-5.29, the checker child 3.07-4.86, the thread "
             "(no core free: the default here) 2.87", "bench_passes.py"),
    "passes.one_thread": (
        5.5, "issue 28, h3: 3.03-3.06 against 5f7c079's 3.33-3.38 (MINISYCL_VERIFY_THREADS=1, A B A B); h6's "
             "3.3-4.7 less 10%, +30% noise (was 6.0)", "bench_passes.py"),
    "passes.main_thread_cpu": (
        2.1, "issue 28, h1: 1.60-1.61 (quick sizes) and 1.62-1.66 (1,000 groups) on 2 shared cores under load "
             "5-7, CPU time, so load moves it little; c63d976, whose main thread parsed and printed the input "
             "before the passes: 2.45-2.49 (quick), 2.60-2.77 (1,000 groups); +30%; h2 (input checked in a "
             "child where a core is free; the free-core bound now): 1.62-1.76 (quick), 1.69-1.72 (1,000 groups), "
             "load 2-4, as 485b9ca's 1.61-1.74; the figure became the median of the rounds' paired ratios "
             "(the least of each side's rounds gave 1.63-2.69 at 6ef26fd and failed CI at 2.34 and 2.11; paired: "
             "1.64-1.77 over five quick runs), the threshold kept",
        "bench_passes.py"),
    "passes.growth": (
        1.6, "issue 28, h6: 1.02 (time growth when the module doubles over LLVM's floor's; 1.0 is as LLVM)",
        "bench_passes.py"),
    # (issue 28, h3: LLVM's side now also writes the very files post-link writes, same folder's file system, so
    # the file system's cost, 0.1-1 ms a file on CI's ext4 under load, is on both sides; ratios are medians of 5
    # rounds interleaved A B B A; figures measured with --quick on 2 shared cores under load 1.2-3.4, /tmp on ext4)
    "postlink.kernel": (
        3.0, "issue 28, h3: 1.22-1.88 wall over LLVM's work writing the same files (before, against LLVM "
             "without writing anything: h6/h7 2.4-3.6, threshold 6.0); +60% noise; target 1.5 at full size",
        "bench_postlink.py"),
    "postlink.kernel.cpu": (
        3.2, "issue 28, h3: 1.31-2.03 (CPU time of post-link's process and children over LLVM's work's); +60%",
        "bench_postlink.py"),
    "postlink.source": (
        3.3, "issue 28, h3: 1.21-2.02 wall (was 3.5 against LLVM without writing); +65%; target 1.3 at full size",
        "bench_postlink.py"),
    "postlink.source.cpu": (
        3.5, "issue 28, h3: 1.50-2.23 CPU; +57%", "bench_postlink.py"),
    "postlink.kernel.growth": (
        2.0, "issue 28, h6: 1.35 (growth at twice the size over LLVM's work's growth); h3: 0.71-1.16 with medians "
             "of 5 rounds; +50% noise", "bench_postlink.py"),
    "postlink.source.growth": (
        2.0, "issue 28, h6: 1.19; h3: 0.81-1.08; +65% noise", "bench_postlink.py"),
    # -- command graphs (bench_graph.py): per eager launch of one kernel in the same run
    "graph replay per node / eager launch": (
        0.012, "issue 28, h2: 0.0044-0.0045 (replay 0.03 us/node under one native guard, eager 7.7 us; medians of "
               "single calls, 2 shared cores, load 8); x2.7 noise (was 0.02); 5f7c079: 0.008; issue 7's target is "
               "1/20 = 0.05", "bench_graph.py"),
    "update one parameter / eager launch": (
        1.0, "issue 28, h2: 0.60-0.61 (4.6-4.7 us: only the new argument packed, the node's copy and plan entry "
             "changed in place); +65% noise (was 2.5); 5f7c079: 1.04-1.08 (9.3-9.5 us)", "bench_graph.py"),
    "update + replay of 100 nodes / eager launch": (
        2.0, "issue 28, h2: 1.16-1.18 (8.9-9.0 us, the wait included) on 2 shared cores under load; +70% noise "
             "(was 4.5); 5f7c079: 2.18-2.23 (19.3-19.5 us, no wait); 64b4c97 checked every node's memory after "
             "an update: 32", "bench_graph.py"),
    # -- first launch (bench_first_launch.py): growth per growth of the parameter count
    "first launch growth / parameter growth": (
        2.0, "issue 28, h7: 0.85-1.6 (500 -> 2,000 parameters; 1.0 is linear); the quadratic step "
             "(64b4c97) gave ~3.5 at these sizes and ~5 at 1,000 -> 5,000", "bench_first_launch.py"),
    # -- kernel throughput (bench_runtime.py): one thread of minisycl over gcc -O3 -march=native, same C loop
    "saxpy 1 thread / gcc -O3": (
        2.0, "issue 28, h7: 1.19 (2^20 floats; memory-bound, the noisiest figure); x1.7 noise", "bench_runtime.py"),
    "saxpy 65536 1 thread / gcc -O3": (
        3.0, "issue 28, h7: 0.84-1.66 (in cache; 10-14 us calls, the timer's and the machine's noise); x1.8",
        "bench_runtime.py"),
    "matmul 1 thread / gcc -O3": (
        1.6, "issue 28, h7: 1.0 (128x128); +60% noise", "bench_runtime.py"),
    "reduce 1 thread / gcc -O3": (
        0.15, "issue 28, h7: 0.004 (atomics aggregated per thread against gcc's atomic per element); a lost "
              "aggregation is ~1.0. Raised from 0.05 at stop 38: the fresh-clone CI run measured 0.066 (0.41 ms) "
              "and the guard alone 0.033-0.056 in three runs; 485b9ca measured 0.035 beside this code's 0.034 "
              "(0.2 ms, which moves with the 2-core machine): still 7x below a lost aggregation",
        "bench_runtime.py"),
    # -- USM (bench_usm.py): a guarded allocation + free over NumPy's np.zeros of the same size
    "malloc_shared + free of 4096 bytes / np.zeros": (
        5.0, "issue 28, h7: 3.0-3.1 (9.4 us against 3.1 us: a mapping + guard page per allocation); +60%",
        "bench_usm.py"),
    "malloc_shared + free of 1048576 bytes / np.zeros": (
        1.6, "issue 28, h7: 0.5-0.8 (np.zeros touches pages, the mapping is lazy); x2 noise", "bench_usm.py"),
    # -- DLPack (bench_dlpack.py --quick): per call, in thread CPU time, over NumPy's own np.from_dlpack
    "DLPack export (np.from_dlpack of USM) / np.from_dlpack of NumPy": (
        4.5, "issue 33, h1: 2.7-2.9 (1.1-1.2 us against 0.41 us; load average 7-8, 4 runs); ctypes capsules and "
             "Python deleters (5f7c079's dlpack.py) gave 9.3-9.5; the issue's goal is under 5 us",
        "bench_dlpack.py"),
    "DLPack import (sycl.from_dlpack of NumPy) / np.from_dlpack of NumPy": (
        9.0, "issue 33, h1: 5.3-7.1 (2.2-2.9 us against 0.41 us; load average 7-8, 5 runs); ctypes reads and a "
             "Python __del__ (5f7c079's dlpack.py) gave 22-23; the issue's goal is under 5 us", "bench_dlpack.py"),
    # -- front end (bench_frontend.py)
    "front end / gcc -fsyntax-only": (
        11.0, "issue 28 point 2, h3: 7.2-8.2 against c63d976's 8.7-11.0 in the same runs (A B A B, 2 shared "
              "cores, load ~2; under load 5-7: 0.21 s against 0.27-0.29 s); CPU time -11 to -18% at 200 kernels, "
              "-8% at 1,000, -5 to -14% on the 20,000-line kernel (recursive-descent parse, rules beside LLVM's "
              "verify); +35% noise (was 12.0, h4: 8.1); the issue's target is 3.0, NOT met.  h1, second round "
              "(forked workers, frontend/workers.py): the default takes the serial way where the load average "
              "leaves no core free, as on CI's shared 2 cores: 7.8-7.9x at quick sizes against the base's "
              "7.0-7.8x in the same A B A B runs (load 2.1); 2 workers forced there: 10.0-10.2x (no free core); "
              "the floor, tokenizer + LLVM's parse and verify alone, is 2.5-4.5x", "bench_frontend.py"),
    "front end / gcc -O0 -S": (
        0.8, "issue 28 point 2, h3: about 0.5 (ours 0.21 s, gcc -O0 -S 0.40 s at its quietest; base 0.57); "
             "+55% noise (was 0.9, h4: 0.5-0.6)",
        "bench_frontend.py"),
    "many small kernels' tokens/s / one large kernel's": (
        1.4, "issue 28, h7: 0.96-1.03 (4,000 statements in one kernel against 200 kernels of 20, interleaved; "
             "once 1.42 when not interleaved on a loaded machine); the issue's target is 1/0.8 = 1.25",
        "bench_frontend.py"),
}

#: figures a run may lack, and why (their tool is not installed): reported as skipped
OPTIONAL: dict[str, str] = {
    **{name: "gcc not found" for name, (_, _, source) in THRESHOLDS.items() if source == "bench_runtime.py"},
    "front end / gcc -fsyntax-only": "gcc not found",
    "front end / gcc -O0 -S": "gcc not found",
}
