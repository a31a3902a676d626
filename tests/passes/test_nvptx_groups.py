"""The work-group built-ins on NVPTX (``passes/nvptx_groups.py``, issue 20 point 7):
every group function of the language over every type it takes, and every
reducer, lowered by ``lower-to-nvptx`` and compiled by llvmlite's NVPTX target
for sm_90 (PTX the GPU machine's driver then loads).  No GPU needed."""
import pytest

from minisycl.frontend import compile_source
from minisycl.passes import parse_pipeline
from minisycl.passes.ir import Module, emit_ptx
from minisycl.passes.manager import PassManager

ARITH = ["char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "half", "float", "double"]
INTS = [t for t in ARITH if t not in ("half", "float", "double")]
OPS = {"plus": ARITH, "multiplies": ARITH, "minimum": ARITH, "maximum": ARITH, "bit_and": INTS, "bit_or": INTS,
       "bit_xor": INTS, "logical_and": ["bool"], "logical_or": ["bool"]}


def _source() -> str:
    out = []
    for i, (op, t) in enumerate((op, t) for op, ts in OPS.items() for t in ts):
        out.append(f"""kernel a{i}(nd_item<1> it, {t}* x) {{
  long g = it.get_global_id(0);
  {t} v = x[g];
  x[g] = reduce_over_group(it, v, {op}); x[g] = inclusive_scan_over_group(it, x[g], {op});
  x[g] = exclusive_scan_over_group(it, x[g], {op}); x[g] = reduce_over_sub_group(it, x[g], {op});
  x[g] = inclusive_scan_over_sub_group(it, x[g], {op}); x[g] = exclusive_scan_over_sub_group(it, x[g], {op});
}}
kernel r{i}(id<1> i, {t}* x, reducer<{t}, {op}> r) {{ r.combine(x[i]); }}
""")
    for t in ARITH + ["bool"]:
        out.append(f"""kernel s_{t}(nd_item<2> it, {t}* x, uint lane) {{
  long g = it.get_global_linear_id();
  {t} v = x[g];
  x[g] = select_from_sub_group(it, v, lane); x[g] = permute_sub_group_by_xor(it, x[g], lane);
  x[g] = shift_sub_group_left(it, x[g], lane); x[g] = shift_sub_group_right(it, x[g], lane);
  x[g] = sub_group_broadcast(it, x[g], lane); x[g] = group_broadcast(it, x[g], 3);
}}
""")
    out.append("""kernel votes(nd_item<3> it, int* x, local int* t, local double* u) {
  long g = it.get_global_linear_id();
  bool b = x[g] > 0;
  t[it.get_local_linear_id()] = (int)none_of_group(it, b) + (int)all_of_sub_group(it, b) + (int)any_of_sub_group(it, b);
  group_barrier(it);
  u[0] = 1.0;
  sub_group_barrier(it);
  x[g] = t[0] + (int)any_of_group(it, b) + (int)all_of_group(it, b) + (int)it.get_sub_group_range()
       + (int)it.get_sub_group_id() + (int)it.get_sub_group_local_id() + (int)it.get_sub_group_size()
       + (int)it.get_max_sub_group_size() + (int)u[0];
}
""")
    return "".join(out)


@pytest.fixture(scope="module")
def lowered():
    module = Module.parse(compile_source(_source(), "all.ksl").ir)
    kernels = [f.name for f in module.functions.values() if f.is_kernel]
    PassManager(parse_pipeline("lower-to-nvptx")).run(module)
    return module, kernels


def test_no_built_in_is_left(lowered):
    module, _ = lowered
    left = [f.name for f in module.functions.values() if f.is_declaration and "__spirv_" in f.name]
    assert left == []


def test_every_group_function_and_reducer_compiles_to_ptx(lowered):
    module, kernels = lowered
    ptx = emit_ptx([module.text()], "sm_90", "+ptx80", keep=kernels)
    assert ptx.count(".visible .entry") == len(kernels)
    for needle in ("shfl.sync.idx.b32", "shfl.sync.down.b32", "shfl.sync.up.b32", "vote.sync.any.pred",
                   "vote.sync.all.pred", "bar.red.or.pred", "bar.red.and.pred", "bar.warp.sync", "bar.sync",
                   ".extern .shared", "atom.global.add.f32", "atom.global.add.f64", "atom.global.max.s32"):
        assert needle in ptx, needle
    # reducers of multiplies have no atomic instruction: a compare-and-swap loop
    assert "cas.b32" in ptx and "cas.b64" in ptx


def test_non_constant_scope_still_compiles():
    """A scope the front end would not emit (a variable) keeps both sides, chosen at run time."""
    text = """target triple = "spir64-unknown-unknown"
define spir_kernel void @k(ptr %p, i32 %scope) {
  %v = load float, ptr %p
  %r = call spir_func float @_Z17__spirv_GroupFAddiif(i32 %scope, i32 0, float %v)
  store float %r, ptr %p
  ret void
}
declare spir_func float @_Z17__spirv_GroupFAddiif(i32, i32, float)
"""
    module = Module.parse(text)
    PassManager(parse_pipeline("lower-to-nvptx")).run(module)
    ptx = emit_ptx([module.text()], "sm_90", "+ptx80", keep=["k"])
    assert "bar.sync" in ptx and "shfl.sync.down.b32" in ptx


def test_unknown_forms_are_refused_by_name():
    """A vector broadcast id (not in the language) stays a declaration and is refused."""
    text = """target triple = "spir64-unknown-unknown"
define spir_kernel void @k(ptr %p) {
  %v = load float, ptr %p
  %r = call spir_func float @_Z22__spirv_GroupBroadcastifDv3_m(i32 2, float %v, <3 x i64> zeroinitializer)
  store float %r, ptr %p
  ret void
}
declare spir_func float @_Z22__spirv_GroupBroadcastifDv3_m(i32, float, <3 x i64>)
"""
    module = Module.parse(text)
    with pytest.raises(Exception, match="_Z22__spirv_GroupBroadcastifDv3_m"):
        PassManager(parse_pipeline("lower-to-nvptx")).run(module)
