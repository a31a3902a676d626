"""Device configs: the shipped files load and use the one aspect table;
malformed files fail with file:line:col and the problem."""
import pytest

from minisycl.frontend.aspects import lookup
from minisycl.postlink.device_config import ConfigError, load_file, load_target, target_names

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
    ("aspects: []\nsub-group-sizes: [8, x]\n", ":2:18:", "positive integers"),
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
