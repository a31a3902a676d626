"""The passes together on a generated single-source module, through the API and the CLI."""
import os
import sys

import pytest
from click.testing import CliRunner

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from gen_ir import generate_module  # noqa: E402

from minisycl.passes.support.cli import main  # noqa: E402
from minisycl.passes import parse_pipeline  # noqa: E402
from minisycl.passes.ir import Module, parse_text  # noqa: E402
from minisycl.passes.manager import PassContext, PassManager  # noqa: E402

GROUPS = 30


@pytest.fixture(scope="module")
def result():
    module = parse_text(generate_module(GROUPS), "gen.ll")[0]
    ctx = PassManager(parse_pipeline("split-if-device,propagate-aspects,analyze-virtual-functions"),
                      verify_each=True).run(module, PassContext())
    return module, ctx


def test_device_half(result):
    device, _ = result
    kernels = [n for n, f in device.functions.items() if f.is_kernel]
    assert len(kernels) == GROUPS + 2 * ((GROUPS + 9) // 10)
    assert "printf" not in device.functions
    assert not any(n.startswith("_Z4mainv") for n in device.functions)      # host entry points
    assert not any(n.startswith("_Z7on_hosti") for n in device.functions)   # if_host lambdas
    for name in device.functions_with("sycl-call-if-on-host"):
        assert device.functions[name].body.split() == ["entry:", "ret", "void", "}"]
    for name in list(device.functions_with("sycl-call-if-on-host")) + list(device.functions_with("sycl-call-if-on-device")):
        assert "noinline" not in device.function_attributes(name)


def test_host_half(result):
    _, ctx = result
    host = ctx.host_module
    assert not any(f.is_kernel for f in host.functions.values())
    assert "printf" in host.functions
    assert not any(n.startswith("_Z9on_devicei") for n in host.functions)
    host.verify()


def used(module, name):
    ops = module.function_metadata(name, "sycl_used_aspects") or []
    return [int(o.split()[1]) for o in ops]


def test_aspects(result):
    device, _ = result
    for g in range(GROUPS):
        want = sorted(({6} if g % 5 == 0 else set()) | ({28} if g % 7 == 0 else set()))
        assert used(device, f"_ZTS6kernel{g}") == want, g
    # calls-indirectly _ZTSv: the area() set uses nothing; construct-only kernels get nothing
    assert used(device, "_ZTS4call0") == []
    assert used(device, "_ZTS9construct0") == []
    assert used(device, "_ZN5Shape7preciseEv0") == [6]


def test_created_sets(result):
    device, ctx = result
    assert ctx.created_sets["_ZTS9construct0"] == ["_ZTS8fp64_set", "_ZTSv"]
    assert device.function_attributes("_ZTS9construct0")["minisycl-creates-virtual-functions"] == "_ZTS8fp64_set,_ZTSv"
    assert "_ZTS4call0" not in ctx.created_sets


def test_cli_output_is_deterministic(tmp_path, monkeypatch):
    # the same bytes every time, whether LLVM verifies beside Python or not
    src = tmp_path / "in.ll"
    src.write_text(generate_module(12))
    outs = []
    for i, threads in enumerate(["2", "2", "1"]):
        monkeypatch.setenv("MINISYCL_VERIFY_THREADS", threads)
        dev, host = tmp_path / f"d{i}.ll", tmp_path / f"h{i}.ll"
        r = CliRunner().invoke(main, ["opt", "-passes=split-if-device,propagate-aspects", str(src),
                                      "-o", str(dev), "--host-output", str(host)])
        assert r.exit_code == 0, r.output
        outs.append((dev.read_bytes(), host.read_bytes()))
    assert outs[0] == outs[1] == outs[2]
    assert Module.parse(outs[0][0].decode()).functions


def test_cli_bitcode_round_trip(tmp_path):
    src = tmp_path / "in.ll"
    src.write_text(generate_module(3))
    bc = tmp_path / "out.bc"
    r = CliRunner().invoke(main, ["opt", "-passes=propagate-aspects", str(src), "-o", str(bc), "--emit-bc"])
    assert r.exit_code == 0, r.output
    assert bc.read_bytes()[:4] == b"BC\xc0\xde"
    r = CliRunner().invoke(main, ["opt", "-passes=split-if-device", str(bc), "-o", "-"])
    assert r.exit_code == 0 and "spir_kernel" in r.output


def test_host_output_needs_the_split(tmp_path):
    src = tmp_path / "in.ll"
    src.write_text(generate_module(1))
    r = CliRunner().invoke(main, ["opt", "-passes=propagate-aspects", str(src), "--host-output", str(tmp_path / "h.ll")])
    assert r.exit_code == 2 and "--host-output needs split-if-device" in r.output
