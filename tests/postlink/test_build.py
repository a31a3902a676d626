"""``minisycl build`` / ``inspect`` and the bundle format."""
import json

import pytest
from click.testing import CliRunner

from minisycl.passes.support.cli import main
from minisycl.postlink.bundle import FORMAT_VERSION, Bundle, BundleError

SRC = """
class Shape {
  float scale;
  virtual float area() [[indirectly_callable]] { return 0.0f; }
  virtual double precise_area() [[indirectly_callable("fp64_set")]] { return 0.0; }
};
device_global<int> launches;
static device_global<float[4]> coeffs [[device_image_scope, host_access(read)]];
kernel make(Shape* storage) { new (storage) Shape(); coeffs[0] = 1.0f; }
kernel areas(id<1> i, Shape** shapes, float* out) [[calls_indirectly]] {
  out[i] = shapes[i]->area();
  atomic_fetch_add(&launches, 1);
}
kernel precise(Shape* s, double* out) [[calls_indirectly("fp64_set")]] { out[0] = s->precise_area(); }
host float host_only(float x) { print("host"); return x * 2.0f; }
"""


@pytest.fixture(scope="module")
def bundle_path(tmp_path_factory):
    d = tmp_path_factory.mktemp("b")
    (d / "shapes.ksl").write_text(SRC)
    r = CliRunner().invoke(main, ["build", str(d / "shapes.ksl"), "-o", str(d / "app.bundle"),
                                  "--target", "intel_gpu_tgllp", "--target", "intel_gpu_pvc", "-j", "2"])
    assert r.exit_code == 0, r.output
    return d / "app.bundle"


def test_bundle_contents(bundle_path):
    b = Bundle.read(str(bundle_path))
    assert b.kernels == {"make": "Shape*", "areas": "id<1>,Shape**,float*", "precise": "Shape*,double*"}
    assert b.host[:4] == b"BC\xc0\xde"
    dgs = {g["name"]: g for g in b.device_globals.values()}
    assert dgs["launches"]["size"] == 4 and not dgs["launches"]["device_image_scope"]
    assert dgs["coeffs"]["device_image_scope"] and dgs["coeffs"]["host_access"] == 0 and dgs["coeffs"]["size"] == 16
    jit = [im for im in b.images if im.target is None]
    assert sum(im.dummy for im in jit) == 1
    sets = [im.properties.get("SYCL/virtual functions", "virtual-functions-set") for im in jit]
    assert sum(s is not None for s in sets) == 3      # _ZTSv, fp64_set, its dummy
    # AOT: tgllp has no fp64: the 'precise' kernel is left out, and no image has VF properties
    tgllp = [im for im in b.images if im.target == "intel_gpu_tgllp"]
    pvc = [im for im in b.images if im.target == "intel_gpu_pvc"]
    assert not any("precise" in im.entry_points for im in tgllp)
    assert any("precise" in im.entry_points for im in pvc)
    for im in tgllp + pvc:
        assert "SYCL/virtual functions" not in im.properties
        assert im.native and len(im.native) > 100


def test_inspect_text_and_json(bundle_path):
    r = CliRunner().invoke(main, ["inspect", str(bundle_path)])
    assert r.exit_code == 0, r.output
    assert "aspects = fp64 (6)" in r.output and "dummy-image = 1" in r.output
    r = CliRunner().invoke(main, ["inspect", str(bundle_path), "--json"])
    info = json.loads(r.output)
    assert info["targets"] == ["intel_gpu_tgllp", "intel_gpu_pvc"]
    assert any(im["properties"].get("SYCL/virtual functions", {}).get("creates-virtual-functions-set")
               == "_ZTS8fp64_set,_ZTSv" for im in info["images"])


@pytest.mark.parametrize("damage", ["truncate", "flip", "foreign", "version"])
def test_damaged_bundles_are_refused(bundle_path, tmp_path, damage):
    data = bytearray(bundle_path.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data[len(data) // 2] ^= 0xFF
    elif damage == "foreign":
        data = bytearray(b"\x7fELF" + bytes(100))
    else:
        data[8] = FORMAT_VERSION + 1
    bad = tmp_path / "bad.bundle"
    bad.write_bytes(bytes(data))
    with pytest.raises(BundleError):
        Bundle.read(str(bad))
    r = CliRunner().invoke(main, ["inspect", str(bad)])
    assert r.exit_code == 1 and r.output.startswith("minisycl: error:") and "Traceback" not in r.output


def test_unknown_target_writes_nothing(tmp_path):
    (tmp_path / "a.ksl").write_text("kernel k(int* p) { p[0] = 1; }\n")
    out = tmp_path / "a.bundle"
    r = CliRunner().invoke(main, ["build", str(tmp_path / "a.ksl"), "-o", str(out), "--target", "intel_gpu_nope"])
    assert r.exit_code == 1 and "unknown target 'intel_gpu_nope'" in r.output
    assert not out.exists()


def test_post_link_failure_leaves_no_table(tmp_path):
    src = tmp_path / "in.ll"
    src.write_text('@dg = global { i32 } zeroinitializer #0\n'
                   'define spir_kernel void @a() #1 {\n  %x = load i32, ptr @dg\n  ret void\n}\n'
                   'define spir_kernel void @b() #1 {\n  %x = load i32, ptr @dg\n  ret void\n}\n'
                   'attributes #0 = { "sycl-device-global-size"="4" "sycl-device-image-scope" "sycl-unique-id"="u" }\n'
                   'attributes #1 = { "sycl-module-id"="x.cpp" }\n')
    r = CliRunner().invoke(main, ["post-link", "-split=kernel", "--device-globals", str(src), "-o", str(tmp_path / "o.table")])
    assert r.exit_code == 1 and "used in more than one device image" in r.output
    assert list(tmp_path.iterdir()) == [src]
