"""Virtual-function images and ``-split=none`` (issue 30, points 12-14).

* ``-split=none`` keeps kernels that need different optional features in
  different images (the optional-kernel-features design's second split), and
  what upstream's ``ModuleCopier`` keeps beyond the entry points goes to one
  image, never twice;
* every function of one virtual-function set is in one image (plus its
  dummy), whatever the split mode and whatever aspects each function uses;
* ``post-link -o TARGET,FILE`` on a module with virtual functions is the
  design's AOT flow.
"""
import pytest

from minisycl.passes.ir import parse_text
from minisycl.postlink import SPLIT_MODES, SplitError, split_module

from test_split import device_module      # the source through the front end and the build's passes

SETS = """
class Base {
  int tag;
  virtual int plain() [[indirectly_callable("mixed")]] { return 1; }
  virtual double wide() [[indirectly_callable("mixed")]] { double d = 2.5; return d; }
  virtual int other() [[indirectly_callable]] { return 3; }
};
class Derived : Base {
  int plain() override [[indirectly_callable("mixed")]] { return 4; }
};
kernel make(Derived* d) { new (d) Derived(); }
kernel call_mixed(Base* b, int* out) [[calls_indirectly("mixed")]] { out[0] = b->plain(); }
kernel call_other(Base* b, int* out) [[calls_indirectly]] { out[0] = b->other(); }
kernel wide_kernel(double* out) { out[0] = 1.5; }
"""


@pytest.mark.parametrize("mode", SPLIT_MODES)
def test_one_image_per_set_whatever_the_mode_and_aspects(tmp_path, mode):
    images = split_module(device_module(tmp_path, SETS), mode=mode)
    mixed = [im for im in images if im.properties.get("SYCL/virtual functions", "virtual-functions-set")
             and b"mixed" in im.properties.get("SYCL/virtual functions", "virtual-functions-set")]
    # the set's image (fp64 through Base::wide), then its dummy: both hold all three functions
    assert [im.dummy for im in mixed] == [False, True]
    for im in mixed:
        assert sorted(im.entry_points) == ["_ZN4Base4wideEv", "_ZN4Base5plainEv", "_ZN7Derived5plainEv"]
    assert images.index(mixed[1]) == images.index(mixed[0]) + 1
    default = [im for im in images if im.properties.get("SYCL/virtual functions", "virtual-functions-set")
               and im not in mixed]
    assert [im.entry_points for im in default] == [["_ZN4Base5otherEv"]]     # no aspects: no dummy


def kernel_images(images):
    return [im for im in images if not im.properties.get("SYCL/virtual functions", "virtual-functions-set")]


def test_none_keeps_kernels_of_different_optional_features_apart(tmp_path):
    images = kernel_images(split_module(device_module(tmp_path, SETS), mode="none"))
    # call_mixed uses fp64 through its set, wide_kernel itself: one image; the others need nothing
    assert [sorted(im.entry_points) for im in images] == [["call_mixed", "wide_kernel"], ["call_other", "make"]]
    assert images[0].properties.get("SYCL/device requirements", "aspects") != \
        images[1].properties.get("SYCL/device requirements", "aspects")


NONE_IR = """
@kept = global i32 1
@scoped = global i32 0 #2
@fp = global ptr @target

define spir_func i32 @target(i32 %x) #3 {
  ret i32 %x
}

define spir_kernel void @wide(ptr %p) #0 !sycl_used_aspects !1 {
  %v = load i32, ptr @scoped
  store double 1.0, ptr %p
  ret void
}

define spir_kernel void @small(ptr %p) #0 !reqd_work_group_size !2 {
  store i32 1, ptr %p
  ret void
}

attributes #0 = { "sycl-module-id"="a.cpp" }
attributes #2 = { "sycl-unique-id"="u_scoped" "sycl-device-global-size"="4" "sycl-device-image-scope" }
attributes #3 = { "referenced-indirectly" }

!sycl_aspects = !{!0}
!0 = !{!"fp64", i32 6}
!1 = !{i32 6}
!2 = !{i32 8, i32 1, i32 1}
"""


def test_none_gives_what_the_module_copier_keeps_once():
    # every entry point needs an optional feature: the last image of the split
    # holds what upstream's ModuleCopier keeps (@kept, @fp and @target), and the
    # device_image_scope variable only where its kernel is (else the split
    # would refuse it as used in two images)
    module = parse_text(NONE_IR, "none.ll")[0]
    images = split_module(module, mode="none", device_globals=True)
    assert [im.entry_points for im in images] == [["wide"], ["small"]]
    wide, small = (set(n for n, g in im.module.globals.items() if not g.is_declaration) for im in images)
    assert "scoped" in wide and "scoped" not in small
    assert {"kept", "fp"} <= small and not {"kept", "fp"} & wide
    assert not images[1].module.functions["target"].is_declaration


def test_none_without_optional_features_is_one_image(tmp_path):
    source = "kernel a(int* p) { p[0] = 1; }\nkernel b(int* p) { p[0] = 2; }\n"
    images = split_module(device_module(tmp_path, source), mode="none")
    assert [im.entry_points for im in images] == [["a", "b"]]


def test_image_scope_still_refused_across_none_images():
    ir = NONE_IR.replace("define spir_kernel void @small(ptr %p) #0 !reqd_work_group_size !2 {\n",
                         "define spir_kernel void @small(ptr %p) #0 !reqd_work_group_size !2 {\n"
                         "  %w = load i32, ptr @scoped\n")
    with pytest.raises(SplitError, match="used in more than one device image"):
        split_module(parse_text(ir, "none.ll")[0], mode="none", device_globals=True)


def test_ir_output_only_does_not_split_by_features(tmp_path):
    # -ir-output-only asks for no split: kernels of different optional features stay in its one module
    from click.testing import CliRunner
    from minisycl.passes.support.cli import main
    (tmp_path / "in.ll").write_text(NONE_IR)
    out = tmp_path / "out.ll"
    result = CliRunner().invoke(main, ["post-link", "-ir-output-only", "-S", str(tmp_path / "in.ll"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "define spir_kernel void @wide" in text and "define spir_kernel void @small" in text


# -- generator: what would have found the examples -------------------------------------

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from minisycl.passes.support import knobs  # noqa: E402
from minisycl.passes.propagate_aspects import used_aspects  # noqa: E402

_KERNEL = st.fixed_dictionaries({"aspects": st.sets(st.sampled_from([5, 6, 28]), max_size=2),
                                 "wg": st.sampled_from([None, (8, 1, 1), (16, 1, 1)]),
                                 "sg": st.sampled_from([None, 8, 16]),
                                 "module": st.sampled_from(["a.cpp", "b.cpp"])})
_VIRTUAL = st.fixed_dictionaries({"set": st.sampled_from(["s1", "s2", "s3"]),
                                  "aspects": st.sets(st.sampled_from([5, 6]), max_size=1),
                                  "module": st.sampled_from(["a.cpp", "b.cpp"])})


def _module_text(kernels, virtuals) -> str:
    lines, md, attrs = [], ['!sycl_aspects = !{!0, !1, !2}', '!0 = !{!"fp16", i32 5}', '!1 = !{!"fp64", i32 6}',
                            '!2 = !{!"atomic64", i32 28}'], []
    node = 3

    def meta(values):
        nonlocal node
        md.append(f"!{node} = !{{{', '.join(f'i32 {v}' for v in values)}}}")
        node += 1
        return f"!{node - 1}"
    for i, v in enumerate(virtuals):
        used = f" !sycl_used_aspects {meta(sorted(v['aspects']))}" if v["aspects"] else ""
        attrs.append(f'attributes #{len(attrs)} = {{ "indirectly-callable"="{v["set"]}" "sycl-module-id"="{v["module"]}" }}')
        lines.append(f"define spir_func void @vf{i}() #{len(attrs) - 1}{used} {{\n  ret void\n}}")
    for i, k in enumerate(kernels):
        extra = f" !sycl_used_aspects {meta(sorted(k['aspects']))}" if k["aspects"] else ""
        extra += f" !reqd_work_group_size {meta(k['wg'])}" if k["wg"] else ""
        extra += f" !intel_reqd_sub_group_size {meta([k['sg']])}" if k["sg"] else ""
        attrs.append(f'attributes #{len(attrs)} = {{ "sycl-module-id"="{k["module"]}" }}')
        lines.append(f"define spir_kernel void @k{i}() #{len(attrs) - 1}{extra} {{\n  ret void\n}}")
    return "\n".join(lines + attrs + md) + "\n"


@settings(max_examples=knobs.fuzz_examples(40), deadline=None, derandomize=knobs.fuzz_examples(-1) == -1,
          suppress_health_check=list(HealthCheck))
@given(kernels=st.lists(_KERNEL, min_size=1, max_size=5), virtuals=st.lists(_VIRTUAL, max_size=5),
       mode=st.sampled_from(SPLIT_MODES))
def test_no_kernel_carries_another_kernels_requirements_and_sets_stay_whole(kernels, virtuals, mode):
    """Whatever the split mode: a kernel image asks a device for exactly what
    each of its kernels needs (aspects, required sizes), so no kernel is
    refused for another's optional feature; each virtual-function set is in
    exactly one image, followed by its dummy when it uses aspects."""
    module = parse_text(_module_text(kernels, virtuals), "gen.ll")[0]
    images = split_module(module, mode=mode)
    sets: dict[str, list] = {}
    for im in images:
        vset = im.properties.get("SYCL/virtual functions", "virtual-functions-set")
        if vset is not None:
            sets.setdefault(vset, []).append(im)
            continue
        part = im.module
        for field in ("aspects", "wg", "sg"):
            seen = set()
            for name in im.entry_points:
                k = kernels[int(name[1:])]
                seen.add(tuple(used_aspects(part, [name])) if field == "aspects" else k[field])
            assert len(seen) <= 1, f"{mode}: image of {im.entry_points} mixes {field} {seen}"
    assert len(sets) == len({v["set"] for v in virtuals})
    for vset, ims in sets.items():
        real = [im for im in ims if not im.dummy]
        assert len(real) == 1, f"{mode}: set {vset} in {len(real)} images"
        members = sorted(f"vf{i}" for i, v in enumerate(virtuals) if v["set"].encode() in vset)
        assert sorted(real[0].entry_points) == members
        assert len(ims) == 1 + any(virtuals[int(n[2:])]["aspects"] for n in members)
