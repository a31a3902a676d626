"""A compilation leaves no reference cycles behind.

``compile_source`` pauses Python's cyclic collector while it works; that is
only free if what it builds (tokens, AST, symbols, IR text) is acyclic, so
that reference counting frees it all on return.  A cycle here (an AST node and
its symbol pointing at each other, say) would hand the collector the whole
tree to trace later: about 0.1 s per 20,000 lines.

Classes are the known exception: a class and its methods point at each other
(``ClassType.methods`` / ``FuncSym.cls``), so those few symbols and the
method bodies they hold wait for the collector.
"""
import gc

from minisycl.frontend import compile_source

SRC = r"""
device_global<int> counter [[host_access(read)]];
static device_global<float[4]> coeffs [[device_image_scope]];
SYCL_EXTERNAL int twice(int x) { return 2 * x; }
float helper(float x, int n) {
  float acc = 0.0f;
  for (int j = 0; j < n; j++) { acc = acc + x * (float)j; if (acc > 100.0f) break; }
  if_device { acc = sqrt(acc); } otherwise { print("host", acc); }
  return acc;
}
kernel k(id<1> i, float* a, int n) [[device_has(fp64)]] {
  float v = a[i] + coeffs.get()[1];
  a[i] = helper(v, twice(n)) > 0.5f ? v : -v;
  atomic_fetch_add(&counter, 1);
}
kernel nd(nd_item<1> it, double* d) { d[it.get_global_id(0)] = (double)it.get_local_id(0); }
"""


def test_compiling_leaves_no_cyclic_garbage():
    compile_source(SRC, "warm.ksl")         # imports, grammar tables, caches
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        result = compile_source(SRC, "cycles.ksl")
        del result
        assert gc.collect() == 0
    finally:
        if was:
            gc.enable()
