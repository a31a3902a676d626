"""Device configs: the shipped files load and use the one aspect table;
malformed files fail with file:line:col and the problem."""
import pytest

from minisycl.device_configs.aspects import lookup
from minisycl.device_configs.targets import ConfigError, load_file, load_target, target_names

REQUIRED = ["intel_gpu_pvc", "intel_gpu_tgllp", "intel_gpu_skl", "nvidia_gpu_sm_50", "nvidia_gpu_sm_80",
            "nvidia_gpu_sm_90", "amd_gpu_gfx90a", "spir64_x86_64", "x86_64", "minisycl_cpu"]


@pytest.mark.parametrize("name", REQUIRED)
def test_shipped_configs(name):
    t = load_target(name)
    assert t.name == name
    assert all(lookup(a) is not None for a in t.aspects)


def test_upstream_facts():
    assert "fp64" in load_target("intel_gpu_pvc").aspects
    assert "fp64" not in load_target("intel_gpu_tgllp").aspects
    assert "fp16" not in load_target("nvidia_gpu_sm_50").aspects
    assert "fp16" not in load_target("amd_gpu_gfx90a").aspects
    assert load_target("x86_64").may_support_other_aspects
    assert load_target("intel_gpu_pvc").sub_group_sizes == (16, 32)
    assert set(REQUIRED) <= set(target_names())


def test_unknown_target_lists_known():
    with pytest.raises(ConfigError) as err:
        load_target("intel_gpu_nope")
    assert "known targets:" in str(err.value) and "intel_gpu_pvc" in str(err.value)


@pytest.mark.parametrize("text,where,what", [
    ("aspects: [fp64, warp_drive]\n", ":1:17:", "unknown aspect 'warp_drive'"),
    ("aspects: []\ncolour: red\n", ":2:1:", "unknown key 'colour'"),
    ("aspects: fp64\n", ":1:10:", "'aspects' must be a list"),
    ("aspects: []\nsub-group-sizes: [8, x]\n", ":2:22:", "positive integers"),   # the bad item
    # nested values, duplicate keys, non-positive and huge sizes, tags, keys that are not names
    ("aspects: [[fp16]]\n", ":1:11:", "'aspects' must be a list of aspect names"),
    ("aspects: [fp16]\naot-toolchain: {a: b}\n", ":2:16:", "'aot-toolchain' must be a string"),
    ("aspects: [fp16]\nsub-group-sizes: [[8]]\n", ":2:19:", "positive integers"),
    ("aspects: [fp16]\nruntime-device: [true]\n", ":2:17:", "true or false"),
    ("aspects: [fp16]\naspects: [fp64]\n", ":2:1:", "duplicate key 'aspects' (first given at line 1)"),
    ("aspects: []\nsub-group-sizes: [16, 0]\n", ":2:23:", "positive integers"),
    ("aspects: []\nsub-group-sizes: [-8]\n", ":2:19:", "positive integers"),
    ("aspects: []\nsub-group-sizes: [99999999999999999999]\n", ":2:19:", "at most"),
    ("aspects: !!python/object:os.system [fp16]\n", ":1:10:", "'aspects' must be a list"),
    ("? [a]\n: b\n", ":1:3:", "a key must be a plain name"),
    ("aspects: " + "[" * 3000 + "]" * 3000 + "\n", ":1:1:", "nested too deeply"),
    ("aspects: []\nmay_support_other_aspects: maybe\n", ":2:28:", "true or false"),
    ("aspects: [\n", ":", "invalid YAML"),
    ("sub-group-sizes: []\n", ":1:1:", "missing required key 'aspects'"),
    ("- a\n- b\n", ":1:1:", "mapping"),
])
def test_malformed_configs(tmp_path, text, where, what):
    path = tmp_path / "bad_target.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_file(str(path))
    msg = str(err.value)
    assert msg.startswith(str(path) + where), msg
    assert what in msg


# every target of DPC++'s list in docs/formats.md, "Device configs", with its facts
SECTION5 = ["spir64", "spir64_gen", "spir64_fpga", "intel_gpu_pvc_vg", "intel_gpu_dg1", "intel_gpu_acm_g10",
            "intel_gpu_acm_g11", "intel_gpu_acm_g12", "intel_gpu_adl_s", "intel_gpu_adl_p", "intel_gpu_adl_n",
            "intel_gpu_rkl", "intel_gpu_ehl", "intel_gpu_icllp", "intel_gpu_kbl", "intel_gpu_cfl", "intel_gpu_apl",
            "intel_gpu_glk", "intel_gpu_whl", "intel_gpu_aml", "intel_gpu_cml", "intel_gpu_bdw", "intel_gpu_mtl_u",
            "intel_gpu_mtl_h", "intel_gpu_arl_h", "nvidia_gpu_sm_52", "nvidia_gpu_sm_53", "nvidia_gpu_sm_60",
            "nvidia_gpu_sm_90a"]


@pytest.mark.parametrize("name", SECTION5)
def test_section5_targets_are_known(name):
    t = load_target(name)
    if name.startswith("intel_gpu_"):
        assert t.aot_toolchain == "ocloc" and t.aot_toolchain_options == f"-device {name[len('intel_gpu_'):]}"
        assert "ext_intel_esimd" in t.aspects and not t.may_support_other_aspects
    elif name.startswith("spir64"):
        assert t.aspects == () and t.sub_group_sizes == () and t.may_support_other_aspects


def test_section5_facts():
    assert "fp64" in load_target("intel_gpu_cfl").aspects and load_target("intel_gpu_cfl").sub_group_sizes == (8, 16, 32)
    assert "fp64" not in load_target("intel_gpu_dg1").aspects
    assert load_target("intel_gpu_pvc_vg").sub_group_sizes == (16, 32)
    sm52, sm53, sm60 = (set(load_target(f"nvidia_gpu_sm_{n}").aspects) for n in ("52", "53", "60"))
    assert "fp16" not in sm52 and "fp16" in sm53 and "atomic64" not in sm53 and "atomic64" in sm60
    assert set(load_target("nvidia_gpu_sm_90a").aspects) == set(load_target("nvidia_gpu_sm_90").aspects)


def test_bytes_that_are_not_utf8_are_located(tmp_path):
    path = tmp_path / "bad_bytes.yaml"
    path.write_bytes(b"aspects: [fp16]\n# caf\xe9\n")
    with pytest.raises(ConfigError) as err:
        load_file(str(path))
    assert str(err.value) == f"{path}:2:6: error: invalid UTF-8 byte 0xe9"
    assert err.value.render() == str(err.value)          # one error line, not "minisycl: error: ... error:"


def test_target_may_be_a_config_path(tmp_path):
    path = tmp_path / "my_gpu.yaml"
    path.write_text("aspects: [gpu, fp16]\nsub-group-sizes: [8]\n")
    t = load_target(str(path))
    assert (t.name, t.aspects, t.sub_group_sizes) == ("my_gpu", ("gpu", "fp16"), (8,))
    with pytest.raises(ConfigError) as err:
        load_target(str(tmp_path / "missing.yaml"))
    assert "missing.yaml" in str(err.value)
