"""Front-end speed: compile a generated 20,001-line source with 1,000 kernels.

Reports lines/second end to end (parse + check + emit + LLVM verify) and the
share of each stage, next to the issue's target of 20,000 lines/s on one core.
Beside the parse stage it times Lark's own LALR driver on the same tokens (the
baseline our table-walking loop replaces).
Then the checker's growth on deep nesting (issue 17 point 6: name lookup is
constant-time per name): an ``else if`` chain and nested ``if``s, each at 1x
and 2x length; linear growth shows as a check-time ratio near 2 (it was near 4,
quadratic, when lookup walked the scope chain): 30,000 and 60,000 of each, as
issue 17 asks (``frontend.RECURSION_LIMIT`` lets 60,000 nested statements compile).
Run: python bench/bench_frontend.py [--kernels N] [--chain N] [--nested N]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from lark import Lark, Token

from minisycl.frontend import compile_source, parser
from minisycl.passes.support.gc_pause import gc_paused
from minisycl.passes.support.diagnostics import DiagnosticSink
from minisycl.frontend.lexer import split_top_level, tokenize

TARGET_LINES_PER_S = 20_000

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
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--chain", type=int, default=30_000, help="else-if branches at 1x")
    ap.add_argument("--nested", type=int, default=30_000, help="nested ifs at 1x")
    args = ap.parse_args()
    src = generate(args.kernels)
    lines = src.count("\n")
    compile_source(generate(2), "warmup.ksl")            # grammar construction, imports
    best = None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        r = compile_source(src, "bench.ksl")
        total = time.perf_counter() - t0
        if best is None or total < best[0]:
            best = (total, r.timings)
        del r                       # LLVM frees the module here, outside the next timing
    total, timings = best
    rate = lines / total
    print(f"source: {lines} lines, {args.kernels} kernels (best of {args.repeat})")
    print(f"end to end: {total:.2f} s = {rate:,.0f} lines/s   (target {TARGET_LINES_PER_S:,} lines/s: "
          f"{'met' if rate >= TARGET_LINES_PER_S else 'NOT met'}, {rate / TARGET_LINES_PER_S:.2f}x)")
    for stage in ("parse", "check", "emit", "rules", "verify"):
        t = timings.get(stage, 0.0)
        print(f"  {stage:7s} {t:6.2f} s  {100 * t / total:5.1f}%  ({lines / t:,.0f} lines/s)" if t else f"  {stage}: -")
    long_src = generate_long(20_000)
    long_lines = long_src.count("\n")
    long_best = float("inf")
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        r = compile_source(long_src, "long.ksl")
        long_best = min(long_best, time.perf_counter() - t0)
        del r
    print(f"one kernel of {long_lines:,} lines: {long_best:.2f} s = {long_lines / long_best:,.0f} lines/s")
    check_growth("else-if chain", generate_else_if_chain, args.chain, args.repeat)
    check_growth("nested ifs", generate_nested_ifs, args.nested, args.repeat)
    ours, theirs = lalr_loops(src, args.repeat)
    print(f"LALR loop alone, same tokens: ours (building the AST) {ours:.2f} s; "
          f"Lark's own (parse tree only) {theirs:.2f} s = {theirs / ours:.1f}x ours")


if __name__ == "__main__":
    main()
