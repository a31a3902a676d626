"""The CLI tells the user what they did (issue 17, point 4) and devices tell the
truth about their aspects (point 8)."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from minisycl import runtime as sycl
from minisycl.device_configs.targets import CONFIG_DIR


def minisycl(*args, env=None, cwd=None):
    full = {k: v for k, v in os.environ.items() if k not in ("MINISYCL_DEBUG", "MINISYCL_DEVICE")}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "minisycl.passes.support.cli", *args], capture_output=True,
                          text=True, env=full, cwd=cwd)


def test_run_shows_the_scripts_own_traceback(tmp_path):
    script = tmp_path / "user.py"
    script.write_text("import sys\n\ndef helper(n):\n    return {}[n]\n\nhelper(sys.argv[1])\n")
    proc = minisycl("run", str(script), "the key")
    assert proc.returncode == 1, proc.stderr
    assert "internal error" not in proc.stderr and "runpy" not in proc.stderr and "run_cmd" not in proc.stderr
    assert proc.stderr.startswith("Traceback (most recent call last):\n"), proc.stderr
    assert f'File "{script}", line 6, in <module>' in proc.stderr
    assert f'File "{script}", line 4, in helper' in proc.stderr
    assert proc.stderr.rstrip().endswith("KeyError: 'the key'")


def test_run_exit_status_of_the_script_is_kept(tmp_path):
    script = tmp_path / "exits.py"
    script.write_text("import sys\nsys.exit(4)\n")
    assert minisycl("run", str(script)).returncode == 4


def test_internal_error_reproduce_line_runs(tmp_path):
    """A bare exception from minisycl's own code is ours (exit 3); the reproduce
    line is the command the user typed, and running it shows the traceback."""
    script = tmp_path / "misuse.py"
    # a bug of ours, simulated: the device module loses a function and fails inside minisycl
    script.write_text("import sys\nfrom minisycl import runtime as sycl\n"
                      "sys.modules['minisycl.runtime.device'].get_devices = None\nsycl.queue()\n")
    proc = minisycl("run", str(script))
    assert proc.returncode == 3, proc.stderr
    line = proc.stderr.splitlines()[-1].strip()
    assert line == f"reproduce with: MINISYCL_DEBUG=1 minisycl run {script}", proc.stderr
    again = minisycl("run", str(script), env={"MINISYCL_DEBUG": "1"})
    assert again.returncode != 0 and "Traceback" in again.stderr and "TypeError" in again.stderr


def test_unknown_minisycl_device(tmp_path):
    script = tmp_path / "q.py"
    script.write_text("from minisycl import runtime as sycl\nsycl.queue()\n")
    for proc in (minisycl("run", str(script), env={"MINISYCL_DEVICE": "bogus"}),
                 minisycl("devices", env={"MINISYCL_DEVICE": "bogus"})):
        assert proc.returncode == 1, proc.stderr
        lines = proc.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("minisycl: error: ")
        assert "'bogus'" in lines[0] and "MINISYCL_DEVICE" in lines[0] and "minisycl_cpu, intel_gpu_pvc" in lines[0]


def test_unknown_minisycl_device_from_python(monkeypatch):
    monkeypatch.setenv("MINISYCL_DEVICE", "bogus")
    with pytest.raises(sycl.exception) as err:
        sycl.queue()
    # DPC++ with a device selector that matches no device: errc::runtime
    assert err.value.code() == sycl.errc.runtime
    assert "No device of requested type available" in str(err.value) and "'bogus'" in str(err.value)


@pytest.fixture
def config_folder(tmp_path):
    folder = tmp_path / "configs"
    folder.mkdir()
    for name in ("minisycl_cpu", "intel_gpu_pvc", "intel_gpu_tgllp"):
        shutil.copy(os.path.join(CONFIG_DIR, name + ".yaml"), folder)
    (folder / "broken_gpu.yaml").write_text("aspects: [fp16]\nsub-group-sizes: [0]\nruntime-device: true\n")
    (folder / "bad_bytes.yaml").write_bytes(b"aspects: [fp16\xff]\n")
    return folder


def test_broken_config_is_reported_and_skipped(config_folder, tmp_path):
    env = {"MINISYCL_DEVICE_CONFIGS": str(config_folder)}
    proc = minisycl("devices", env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "*[minisycl:0] minisycl_cpu: minisycl (host CPU via LLVM JIT) (cpu)",
        " [minisycl:1] intel_gpu_pvc: Intel(R) Corporation (gpu)",
        " [minisycl:2] intel_gpu_tgllp: Intel(R) Corporation (gpu)"]
    assert proc.stderr.splitlines() == [
        f"{config_folder}/bad_bytes.yaml:1:15: warning: invalid UTF-8 byte 0xff (skipped)",
        f"{config_folder}/broken_gpu.yaml:2:19: warning: 'sub-group-sizes' must be a list of positive integers "
        f"(at most 2147483647), not '0' (skipped)"]
    # programs on the other devices are not affected
    src = tmp_path / "k.ksl"
    src.write_text("kernel k(int* p) { p[0] = 5; }")
    script = tmp_path / "use.py"
    script.write_text(f"""
import numpy as np
from minisycl import runtime as sycl
prog = sycl.build_program([{str(src)!r}])
q = sycl.queue("intel_gpu_pvc"); p = sycl.malloc_shared(1, np.int32, q)
q.single_task(prog.kernel("k"), p).wait()
print(p[0])
""")
    proc = minisycl("run", str(script), env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == "5", proc.stderr
    # naming the broken one says why it is not a device
    proc = minisycl("devices", env=dict(env, MINISYCL_DEVICE="broken_gpu"))
    assert proc.returncode == 1 and "its config is broken" in proc.stderr and "broken_gpu.yaml:2:19" in proc.stderr


KERNELS = """
kernel on_gpu(int* p) [[device_has(gpu)]] { p[0] = 7; }
kernel on_cpu(int* p) [[device_has(cpu)]] { p[0] = 8; }
kernel with_graph_and_usm(int* p) [[device_has(ext_oneapi_graph, ext_oneapi_limited_graph, usm_device_allocations,
                                    usm_host_allocations, usm_shared_allocations)]] { p[0] = 9; }
"""


def test_device_has_gpu_runs_on_a_gpu_device(tmp_path):
    (tmp_path / "aspects.ksl").write_text(KERNELS)
    prog = sycl.build_program([str(tmp_path / "aspects.ksl")])
    results = {}
    for dev in ("intel_gpu_pvc", "intel_gpu_tgllp", "minisycl_cpu"):
        q = sycl.queue(dev)
        p = sycl.malloc_shared(1, np.int32, q)
        for k in ("on_gpu", "on_cpu", "with_graph_and_usm"):
            p[0] = 0
            try:
                q.single_task(prog.kernel(k), p).wait()
                results[dev, k] = int(p[0])
            except sycl.exception as err:
                assert err.code() == sycl.errc.kernel_not_supported
                results[dev, k] = str(err)
    assert results == {
        ("intel_gpu_pvc", "on_gpu"): 7, ("intel_gpu_tgllp", "on_gpu"): 7,
        ("intel_gpu_pvc", "on_cpu"): "Required aspect cpu is not supported on the device",
        ("intel_gpu_tgllp", "on_cpu"): "Required aspect cpu is not supported on the device",
        ("minisycl_cpu", "on_gpu"): "Required aspect gpu is not supported on the device",
        ("minisycl_cpu", "on_cpu"): 8,
        ("intel_gpu_pvc", "with_graph_and_usm"): 9, ("intel_gpu_tgllp", "with_graph_and_usm"): 9,
        ("minisycl_cpu", "with_graph_and_usm"): 9}


def test_device_aspects_are_the_config_plus_the_runtime():
    pvc = sycl.queue("intel_gpu_pvc").device
    a = sycl.aspect
    assert pvc.has(a.gpu) and pvc.is_gpu() and not pvc.has(a.cpu) and not pvc.is_cpu()
    assert {a.usm_device_allocations, a.usm_host_allocations, a.usm_shared_allocations,
            a.usm_atomic_host_allocations, a.usm_atomic_shared_allocations,
            a.ext_oneapi_graph, a.ext_oneapi_limited_graph, a.queue_profiling} <= pvc.aspects
    assert {a.fp64, a.ext_intel_esimd} <= pvc.aspects                 # from its config
    # what the runtime does not do is not claimed: kernels take USM allocations only
    assert not pvc.has(a.usm_system_allocations) and not sycl.queue("minisycl_cpu").device.has(
        a.usm_system_allocations)
    cpu = sycl.queue("minisycl_cpu").device
    assert cpu.has(a.cpu) and not cpu.has(a.gpu)
    assert not sycl.queue("intel_gpu_tgllp").device.has(a.fp64)        # hardware features stay the config's
