"""``minisycl build`` / ``inspect`` and the bundle format."""
import json
import os

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


# --- the stage table: --stop-after and --emit ------------------------------------

def test_stage_table_is_consistent():
    from minisycl.postlink.build import STAGE_NAMES, STAGES
    made = {"sources"}
    for stage in STAGES:
        assert set(stage.consumes) <= made, stage.name          # each stage consumes what came before
        made.update(stage.produces)
    assert STAGE_NAMES[-1] == "bundle"
    r = CliRunner().invoke(main, ["build", "--help"])
    assert all(name in r.output for name in STAGE_NAMES)


@pytest.fixture
def shapes(tmp_path):
    (tmp_path / "shapes.ksl").write_text(SRC)
    return tmp_path


def test_stop_after_opt_writes_the_device_module(shapes):
    from minisycl.passes.ir import load
    r = CliRunner().invoke(main, ["build", str(shapes / "shapes.ksl"), "-o", str(shapes / "x.ll"),
                                  "--stop-after", "opt", "--emit", "link"])
    assert r.exit_code == 0, r.output
    device = load(str(shapes / "x.ll"))
    assert {"make", "areas", "precise"} <= {n for n, f in device.functions.items() if f.is_kernel}
    assert "host_only" not in device.functions                    # split-if-device ran
    # link's product as it was before opt edited the module in place
    linked = load(str(shapes / "x.link.ll"))
    assert not linked.functions["host_only"].is_declaration
    assert sorted(p.name for p in shapes.iterdir()) == ["shapes.ksl", "x.link.ll", "x.ll"]


def test_stop_after_post_link_writes_a_file_table(shapes):
    out = shapes / "images.table"
    r = CliRunner().invoke(main, ["build", str(shapes / "shapes.ksl"), "-o", str(out), "--stop-after", "post-link",
                                  "--target", "intel_gpu_pvc"])
    assert r.exit_code == 0, r.output
    lines = out.read_text().splitlines()
    assert lines[0] == "[Code|Properties|Symbols]"
    rows = [line.split("|") for line in lines[1:]]
    assert [os.path.basename(r[0]) for r in rows if "jit_" not in r[0]][0] == "images_intel_gpu_pvc_0.bc"
    for code, prop, sym in rows:
        assert open(code, "rb").read(4) == b"BC\xc0\xde"
        assert open(prop).read().startswith("[SYCL/device requirements]")
        assert open(sym).read()
    assert any("compile_target" in open(prop).read() for _, prop, _ in rows)


def test_stop_after_device_globals_and_native(shapes, bundle_path):
    src = str(shapes / "shapes.ksl")
    r = CliRunner().invoke(main, ["build", src, "-o", str(shapes / "dg.json"), "--stop-after", "device-globals"])
    assert r.exit_code == 0, r.output
    def by_name(table):         # unique ids hash the source's path
        return {g["name"]: g for g in table.values()}
    assert by_name(json.loads((shapes / "dg.json").read_text())) == \
        by_name(Bundle.read(str(bundle_path)).device_globals)
    r = CliRunner().invoke(main, ["build", src, "-o", str(shapes / "obj.table"), "--stop-after", "native",
                                  "--target", "intel_gpu_tgllp", "-j", "1"])
    assert r.exit_code == 0, r.output
    objects = (shapes / "obj.table").read_text().splitlines()
    assert objects[0] == "[Code]" and len(objects) > 1
    assert all(o.endswith(".o") and os.path.getsize(o) > 100 for o in objects[1:])
    assert not list(shapes.glob("*.bundle"))


def test_emit_all_writes_every_stage_before_the_last(shapes):
    (shapes / "other.ksl").write_text("kernel k2(int* p) { p[0] = 2; }\n")
    r = CliRunner().invoke(main, ["build", str(shapes / "shapes.ksl"), str(shapes / "other.ksl"),
                                  "-o", str(shapes / "app.bundle"), "--emit", "all"])
    assert r.exit_code == 0, r.output
    names = sorted(p.name for p in shapes.iterdir())
    for expected in ("app.bundle", "app.compile_0.ll", "app.compile_1.ll", "app.link.ll", "app.opt.ll",
                     "app.post-link.table", "app.device-globals.json", "app.native.table"):
        assert expected in names
    assert (shapes / "app.native.table").read_text() == "[Code]\n"        # no --target: no object code
    assert "k2" in (shapes / "app.compile_1.ll").read_text()
    assert Bundle.read(str(shapes / "app.bundle")).kernels.keys() == {"make", "areas", "precise", "k2"}


@pytest.mark.parametrize("args,message", [
    (["--stop-after", "optimize"], "unknown stage 'optimize' (expected one of: compile, link, opt, post-link, "),
    (["--emit", "nope"], "unknown stage 'nope'"),
    (["--stop-after", "opt", "--emit", "native"], "--emit native: the build stops after 'opt'"),
])
def test_bad_stages_are_one_error_line(shapes, args, message):
    r = CliRunner().invoke(main, ["build", str(shapes / "shapes.ksl"), "-o", str(shapes / "x.out"), *args])
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert r.output.count("error:") == 1 and message in r.output
    assert sorted(p.name for p in shapes.iterdir()) == ["shapes.ksl"]


def test_several_files_need_a_file_name(shapes):
    r = CliRunner().invoke(main, ["build", str(shapes / "shapes.ksl"), "-o", "-", "--stop-after", "post-link"])
    assert r.exit_code == 1 and "give -o a file name, not '-'" in r.output
    r = CliRunner().invoke(main, ["build", str(shapes / "shapes.ksl"), "-o", "-", "--stop-after", "link"])
    assert r.exit_code == 0 and "define spir_kernel void @make" in r.output
