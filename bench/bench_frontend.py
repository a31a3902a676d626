"""Front-end speed: compile a generated 20,001-line source with 1,000 kernels.

Reports lines/second end to end (parse + check + emit + LLVM verify) and the
share of each stage, next to the issue's target of 20,000 lines/s on one core,
and how many declarations the parser's recursive-descent fast path took (the
LALR tables take the rest).  Beside the parse stage it times Lark's own LALR
driver on the same tokens (the baseline our table-walking loop replaces).
Then the checker's growth on deep nesting (issue 17 point 6: name lookup is
constant-time per name): an ``else if`` chain and nested ``if``s, each at 1x
and 2x length; linear growth shows as a check-time ratio near 2 (it was near 4,
quadratic, when lookup walked the scope chain): 30,000 and 60,000 of each, as
issue 17 asks (``frontend.RECURSION_LIMIT`` lets 60,000 nested statements compile).
The large kernel against small ones (issue 28, point 1): one kernel of 20,000
statement lines against the same statements as 1,000 kernels of 20, in
tokens/s (the large kernel's lines hold ~2.5x the tokens of the 1,000-kernel
program's, so its lines/s, also printed, is no measure of function size).
Against a compiler users know (issue 28, point 2): the same programs as C (the
kernels' bodies as plain C functions: ``generate_c``) through ``gcc
-fsyntax-only`` and ``gcc -O0 -S`` in the same run; our end-to-end time as a
ratio to each (target: at most 3x gcc -fsyntax-only).

The front end forks workers for a large source (``frontend/workers.py``,
``MINISYCL_FRONTEND_WORKERS``): the end-to-end line says how many ran and the
CPU seconds of the slowest one per stage; the same program then goes the
serial way (``MINISYCL_FRONTEND_WORKERS=1``), interleaved with the default, so
the workers' gain is measured in the same run.  Last, what no worker can take:
the tokenizer alone and LLVM's own parse + verify of the module alone, each
as a ratio to gcc -fsyntax-only.  Each way's lines also give the parent's own
CPU seconds per stage (the bodies' tokens are the workers' to make: the parent
tokenizes what is outside them) and the critical path they make with the
slowest worker and LLVM: the end-to-end time on a machine with a free core per
worker, predicted from a run on a busy one (``MINISYCL_FRONTEND_WORKERS=8
python bench/bench_frontend.py`` on 2 cores predicts 8 workers on 16).

Run: python bench/bench_frontend.py [--kernels N] [--chain N] [--nested N] [--quick]

``--quick`` (the CI guard, ``bench/guard.py``): 200 kernels, a 4,000-line
kernel, no growth checks; the last line is JSON of ratios (lower is better).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from lark import Lark, Token

from minisycl.frontend import compile_source, descent, parser
from minisycl.passes.support import knobs
from minisycl.passes.support.gc_pause import gc_paused
from minisycl.passes.support.diagnostics import DiagnosticSink
from minisycl.frontend.lexer import split_top_level, tokenize
from minisycl.passes.ir.bridge import parse_and_verify

TARGET_LINES_PER_S = 20_000
WORKERS_VARIABLE = "MINISYCL_FRONTEND_WORKERS"

KERNEL = """\
// kernel {i}
float helper_{i}(float x, int n) {{
  float acc = 0.0f;
  for (int j = 0; j < n; j++) {{
    acc = acc + x * (float)j;
    if (acc > 100.0f) {{
      acc = acc - 100.0f;
    }}
  }}
  acc = acc * 0.5f;
  return acc;
}}

kernel k_{i}(id<1> i, float* a, float* b, int n) {{
  float v = a[i];
  int m = n % 7 + {i} % 3;
  v = helper_{i}(v, m);
  b[i] = v > 0.5f ? v : -v;
  atomic_fetch_add(&counter, 1);
}}
"""


def generate_long(statements: int) -> str:
    """One kernel whose body is ``statements`` lines: long repetitions (a block's
    statement list) must cost linear time, not quadratic."""
    body = "".join(f"  if (n > {i}) acc = acc + a[{i % 64}] * {i}.0f;\n" for i in range(statements))
    return f"kernel long_body(float* a, int n) {{\n  float acc = 0.0f;\n{body}  a[0] = acc;\n}}\n"


def generate_long_split(statements: int, per: int) -> str:
    """The statements of ``generate_long(statements)`` as kernels of ``per`` statements each."""
    out = []
    for k in range(statements // per):
        body = "".join(f"  if (n > {i}) acc = acc + a[{i % 64}] * {i}.0f;\n" for i in range(k * per, (k + 1) * per))
        out.append(f"kernel long_body_{k}(float* a, int n) {{\n  float acc = 0.0f;\n{body}  a[0] = acc;\n}}\n")
    return "".join(out)


C_PRELUDE = "int counter;\n"

#: ``KERNEL`` as C: the helper unchanged, the kernel a plain function of its index
C_KERNEL = KERNEL.replace("kernel k_{i}(id<1> i,", "void k_{i}(long i,").replace(
    "atomic_fetch_add(&counter, 1);", "__atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);")


def generate_c(kernels: int) -> str:
    """``generate(kernels)`` as C."""
    return C_PRELUDE + "".join(C_KERNEL.format(i=i) for i in range(kernels))


def generate_long_c(statements: int) -> str:
    """``generate_long(statements)`` as C."""
    return generate_long(statements).replace("kernel long_body(", "void long_body(")


def gcc_times(c_source: str, repeat: int) -> dict[str, float] | None:
    """Best wall times of ``gcc -fsyntax-only`` and ``gcc -O0 -S`` on ``c_source``
    (None without gcc); the C must compile without a diagnostic."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    with tempfile.TemporaryDirectory(prefix="minisycl-bench-gcc-") as d:
        path = os.path.join(d, "bench.c")
        with open(path, "w") as fh:
            fh.write(c_source)
        out = {}
        for name, flags in (("gcc -fsyntax-only", ["-fsyntax-only"]), ("gcc -O0 -S", ["-O0", "-S", "-o", os.devnull])):
            best = float("inf")
            for _ in range(repeat):
                t0 = time.perf_counter()
                done = subprocess.run([gcc, "-std=c11", "-w", *flags, path], capture_output=True, text=True)
                best = min(best, time.perf_counter() - t0)
                if done.returncode:
                    raise SystemExit(f"gcc refused the generated C: {done.stderr[:500]}")
            out[name] = best
        return out


def best_compile(src: str, name: str, repeat: int, workers: str | None = None):
    """(best end-to-end seconds, that run's stage timings) of ``compile_source``;
    ``workers``: ``MINISYCL_FRONTEND_WORKERS`` for these runs ("": unset, the default)."""
    if workers is not None:
        os.environ[WORKERS_VARIABLE] = workers
        try:
            return best_compile(src, name, repeat)
        finally:
            os.environ.pop(WORKERS_VARIABLE, None)
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = compile_source(src, name)
        total = time.perf_counter() - t0
        if best is None or total < best[0]:
            best = (total, r.timings)
        del r                       # LLVM frees the module here, outside the next timing
    return best


def print_stages(timings: dict, total: float, lines: int) -> None:
    for stage in ("parse", "check", "emit", "rules", "verify"):
        t = timings.get(stage, 0.0)
        print(f"  {stage:7s} {t:6.2f} s  {100 * t / total:5.1f}%  ({lines / t:,.0f} lines/s)" if t else f"  {stage}: -")


#: the parent's own stages (``timings["cpu_<stage>"]``: its main thread's CPU seconds), in their order
PARENT_STAGES = ("tokenize", "parse", "declare", "parse_bodies", "check", "fork_and_collect", "assemble", "emit",
                 "print")


def critical_path(stages: dict) -> float:
    """CPU seconds of what must run one after another with a core for each
    worker: the parent's own stages, the slowest worker, then the longer of the
    rules and LLVM's parse + verify (they run side by side)."""
    return (sum(stages.get(f"cpu_{st}", 0.0) for st in PARENT_STAGES) + stages.get("worker_total", 0.0)
            + max(stages["cpu_rules"], stages["cpu_llvm"]))


def print_critical_path(stages: dict) -> None:
    """The parent's CPU seconds per stage and the critical path they make
    (``critical_path``): on a machine with a free core per worker, the end-to-end
    time is about that, whatever this machine's cores and load made the wall time."""
    parts = [f"{st} {stages[f'cpu_{st}']:.3f}" for st in PARENT_STAGES if f"cpu_{st}" in stages]
    print(f"  the parent's own CPU (s): {', '.join(parts)}; rules {stages['cpu_rules']:.3f} beside LLVM's "
          f"parse + verify {stages['cpu_llvm']:.3f} (its thread)")
    worker = f" + slowest worker {stages['worker_total']:.3f}" if "worker_total" in stages else ""
    print(f"  critical path with a free core per worker: {critical_path(stages):.3f} s (parent's stages{worker}"
          f" + max(rules, LLVM))")


def floors(src: str, repeat: int) -> tuple[float, float]:
    """Best seconds of the tokenizer alone, and of LLVM's parse + verify alone of the module ``src`` compiles to."""
    ir = compile_source(src, "bench.ksl").ir
    lex = llvm = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        tokenize(src, "bench.ksl", DiagnosticSink())
        t1 = time.perf_counter()
        ref, problem = parse_and_verify(ir, "bench.ksl")
        t2 = time.perf_counter()
        assert problem is None, problem
        ref.close()
        lex, llvm = min(lex, t1 - t0), min(llvm, t2 - t1)
    return lex, llvm


def token_count(src: str) -> int:
    return len(tokenize(src, "count.ksl", DiagnosticSink()))


def generate_else_if_chain(branches: int) -> str:
    """One kernel with an ``if / else if`` chain of ``branches`` branches, each
    reading two locals (each ``else if`` nests one scope deeper)."""
    body = "".join(f"  else if (n == {i}) acc = acc + a[{i % 64}];\n" for i in range(1, branches))
    return f"kernel chain(int* a, int n) {{\n  int acc = 0;\n  if (n == 0) acc = 1;\n{body}  a[0] = acc;\n}}\n"


def generate_nested_ifs(depth: int) -> str:
    """One kernel with ``depth`` nested ``if`` blocks, each reading two locals."""
    opens = "".join(f"  if (n > {i}) {{ acc = acc + a[{i % 64}];\n" for i in range(depth))
    return f"kernel nest(int* a, int n) {{\n  int acc = 0;\n{opens}{'}' * depth}\n  a[0] = acc;\n}}\n"


def check_growth(name, make, n, repeat):
    """Best check-stage time at ``n`` and ``2n``, and their ratio."""
    times = []
    for size in (n, 2 * n):
        src = make(size)
        best = float("inf")
        for _ in range(repeat):
            r = compile_source(src, f"{name}.ksl")
            best = min(best, r.timings["check"])
            del r
        times.append(best)
    print(f"{name}: check {n:,} -> {times[0]:.2f} s, {2 * n:,} -> {times[1]:.2f} s "
          f"(x{times[1] / times[0]:.1f} for 2x the length; linear is x2, quadratic x4)")


def generate(kernels: int) -> str:
    return "device_global<int> counter;\n" + "".join(KERNEL.format(i=i) for i in range(kernels))


def fast_path_share(src: str) -> tuple[int, int]:
    """(declarations the recursive-descent fast path parses, all declarations) of ``src``."""
    chunks = split_top_level(tokenize(src, "bench.ksl", DiagnosticSink()))
    fast = descent.Descent(parser._tables()[1])
    taken = 0
    for chunk in chunks:
        try:
            fast.parse(chunk, ("$END", "", chunk[-1][2], chunk[-1][3] + 1))
            taken += 1
        except descent.Fallback:
            pass
    return taken, len(chunks)


def lalr_loops(src: str, repeat: int) -> tuple[float, float]:
    """Best times of (our loop building the AST, Lark's loop building its parse
    tree) over the same top-level token chunks."""
    chunks = split_top_level(tokenize(src, "bench.ksl", DiagnosticSink()))
    ends = [("$END", "", c[-1][2], c[-1][3] + 1) for c in chunks]
    lark_chunks = [[Token(t, v, line=ln, column=col) for t, v, ln, col in c] for c in chunks]
    tables, _ = parser._tables()
    grammar = (Path(parser.__file__).parent / "grammar.lark").read_text()
    lark = Lark(grammar, parser="lalr", lexer=parser._TokenList, maybe_placeholders=True)
    ours = theirs = float("inf")
    with gc_paused():
        for _ in range(repeat):
            t0 = time.perf_counter()
            for chunk, end in zip(chunks, ends):
                parser._run(tables, chunk, end)
            t1 = time.perf_counter()
            for chunk in lark_chunks:
                lark.parse(chunk)
            t2 = time.perf_counter()
            ours, theirs = min(ours, t1 - t0), min(theirs, t2 - t1)
    return ours, theirs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", type=int, default=1000)
    ap.add_argument("--long", type=int, default=20_000, help="statement lines of the large kernel")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--chain", type=int, default=30_000, help="else-if branches at 1x")
    ap.add_argument("--nested", type=int, default=30_000, help="nested ifs at 1x")
    ap.add_argument("--quick", action="store_true", help="small sizes, no growth checks; a last line of JSON ratios")
    args = ap.parse_args()
    if args.quick:
        args.kernels, args.long, args.repeat = 200, 4000, 2
    src = generate(args.kernels)
    lines = src.count("\n")
    compile_source(generate(2), "warmup.ksl")            # grammar construction, imports
    cores = len(os.sched_getaffinity(0))
    # the default way is the knob as this run was given it (unset: the front end's own choice)
    given = knobs.frontend_workers()
    ways = {"default": "" if given is None else str(given), "serial": "1", "all cores": str(cores)}
    runs = {way: [] for way in ways}
    for _ in range(args.repeat):                    # interleaved: each way meets the same machine
        for way, setting in ways.items():
            runs[way].append(best_compile(src, "bench.ksl", 1, workers=setting))
    best = {way: min(r) for way, r in runs.items()}
    total, timings = best["default"]
    serial_total = best["serial"][0]
    rate = lines / total
    print(f"source: {lines} lines, {args.kernels} kernels (best of {args.repeat}; {cores} cores, "
          f"load average {os.getloadavg()[0]:.1f})")
    print(f"end to end: {total:.2f} s = {rate:,.0f} lines/s   (target {TARGET_LINES_PER_S:,} lines/s: "
          f"{'met' if rate >= TARGET_LINES_PER_S else 'NOT met'}, {rate / TARGET_LINES_PER_S:.2f}x)")
    for way, (t, stages) in best.items():
        used = stages.get("workers", 1)
        print(f"{way} ({WORKERS_VARIABLE}={ways[way] or 'unset'}): {t:.2f} s with {used} worker"
              f"{'s' if used > 1 else ''}, {serial_total / t:.2f}x the serial way's speed")
        print_stages(stages, t, lines)
        if used > 1:
            print(f"  in the slowest worker (CPU s): parse {stages['worker_parse']:.2f}, check "
                  f"{stages['worker_check']:.2f}, emit {stages['worker_emit']:.2f}  (check above: the parent's "
                  f"declarations, then its wait for the workers' bodies, parsed, checked and emitted)")
        print_critical_path(stages)
    taken, chunks = fast_path_share(src)
    print(f"  (parse: {taken} of {chunks} declarations by recursive descent, the rest by the LALR tables; "
          f"verify: LLVM's time the rules did not hide, on a second thread)")
    ratios = {}
    gcc = gcc_times(generate_c(args.kernels), args.repeat)
    if gcc is None:
        print("gcc: not found (no comparison)")
    else:
        for name, t in gcc.items():
            print(f"  {name:18s} on the same program as C: {t:6.2f} s; ours end to end = {total / t:.1f}x"
                  + (f" (serial {serial_total / t:.1f}x, all cores {best['all cores'][0] / t:.1f}x)  (target <= 3x)"
                     if "syntax" in name else ""))
            if "syntax" in name:
                print(f"    with a free core per worker (critical path): default {critical_path(timings) / t:.1f}x, "
                      f"all cores {critical_path(best['all cores'][1]) / t:.1f}x")
            ratios[f"front end / {name}"] = {"ratio": total / t, "measured": f"{total:.2f} s", "baseline": f"{t:.2f} s"}
        syntax = gcc["gcc -fsyntax-only"]
        lex, llvm = floors(src, args.repeat)
        print(f"  what no worker takes, alone: tokenizing {lex:.2f} s = {lex / syntax:.1f}x gcc -fsyntax-only; "
              f"LLVM's parse + verify of the module {llvm:.2f} s = {llvm / syntax:.1f}x")

    long_src, split_src = generate_long(args.long), generate_long_split(args.long, 20)
    long_runs, split_runs = [], []
    for _ in range(max(args.repeat, 3)):            # interleaved: both meet the same machine; one process each
        long_runs.append(best_compile(long_src, "long.ksl", 1, workers="1"))
        split_runs.append(best_compile(split_src, "split.ksl", 1, workers="1"))
    (long_total, long_timings), (split_total, split_timings) = min(long_runs), min(split_runs)
    long_lines = long_src.count("\n")
    long_rate, split_rate = token_count(long_src) / long_total, token_count(split_src) / split_total
    print(f"one kernel of {long_lines:,} lines: {long_total:.2f} s = {long_lines / long_total:,.0f} lines/s "
          f"({long_lines / long_total / rate:.2f}x the {args.kernels}-kernel program's lines/s; its lines hold "
          f"{token_count(long_src) / long_lines / (token_count(src) / lines):.1f}x the tokens)")
    print(f"  the same statements as {args.long // 20:,} kernels of 20: {split_total:.2f} s; tokens/s: one kernel "
          f"{long_rate:,.0f}, many kernels {split_rate:,.0f} = {long_rate / split_rate:.2f}x (target >= 0.8x)")
    print("  stages, one kernel / many:  " + ",  ".join(
        f"{st} {long_timings.get(st, 0):.2f}/{split_timings.get(st, 0):.2f} s" for st in ("parse", "check", "emit",
                                                                                        "rules", "verify")))
    ratios["many small kernels' tokens/s / one large kernel's"] = {
        "ratio": split_rate / long_rate, "measured": f"{long_rate:,.0f} tokens/s (one kernel)",
        "baseline": f"{split_rate:,.0f} tokens/s (many)"}
    gcc_long = gcc_times(generate_long_c(args.long), args.repeat)
    if gcc_long is not None:
        for name, t in gcc_long.items():
            print(f"  {name:18s} on the large kernel as C: {t:6.2f} s; ours = {long_total / t:.1f}x")
    if args.quick:
        print(json.dumps(ratios))
        return
    check_growth("else-if chain", generate_else_if_chain, args.chain, args.repeat)
    check_growth("nested ifs", generate_nested_ifs, args.nested, args.repeat)
    ours, theirs = lalr_loops(src, args.repeat)
    print(f"LALR loop alone, same tokens: ours (building the AST) {ours:.2f} s; "
          f"Lark's own (parse tree only) {theirs:.2f} s = {theirs / ours:.1f}x ours")


if __name__ == "__main__":
    main()
