"""The post-link step's images verified and written on LLVM's thread while the
split goes on (``split_module(serialize=...)``, issue 28) give the very bytes
of the plain way, on one thread or two, as bitcode or text; an image changed
after it was started is verified and written as it is then, never as it was."""
import os
import sys

import pytest

from minisycl.passes.ir import load, verify_and_serialize
from minisycl.postlink import split_module, write_outputs

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from gen_ir import generate_device_module  # noqa: E402


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    path = tmp_path_factory.mktemp("in") / "device.ll"
    path.write_text(generate_device_module(24, sets=3, vfs_per_set=4))
    return str(path)


def written(source, folder, mode, serialize, text_ir):
    os.makedirs(folder)
    images = split_module(load(source), mode=mode, serialize=serialize)
    write_outputs(images, os.path.join(folder, "out.table"), text_ir=text_ir, properties=True, symbols=True)
    out = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as fh:
            out[name] = fh.read().replace(os.fsencode(folder), b"<out>")
    return out


@pytest.mark.parametrize("mode", ["kernel", "source"])
@pytest.mark.parametrize("text_ir", [False, True])
def test_same_bytes_as_the_plain_way(source, tmp_path, monkeypatch, mode, text_ir):
    plain = written(source, str(tmp_path / "plain"), mode, None, text_ir)
    assert len(plain) > 3
    for threads in ("2", "1"):
        monkeypatch.setenv("MINISYCL_VERIFY_THREADS", threads)
        for serialize in ("bitcode", "text"):       # also the one the writer does not take
            got = written(source, str(tmp_path / f"{threads}{serialize}"), mode, serialize, text_ir)
            assert got == plain


def test_an_image_changed_after_its_start_is_written_as_changed(source):
    images = split_module(load(source), mode="kernel", serialize="bitcode")
    part = images[0].module
    before = verify_and_serialize([split_module(load(source), mode="kernel")[0].module], bitcode=True)[0]
    name = next(n for n, f in part.functions.items() if not f.is_declaration)
    part.make_declaration(name)
    after = verify_and_serialize([part], bitcode=True)[0]
    assert after != before
    assert after == verify_and_serialize([part], bitcode=True)[0]


def test_a_bad_mode_for_serialize_is_refused(source):
    with pytest.raises(ValueError, match="serialize"):
        split_module(load(source), mode="kernel", serialize="yes")


@pytest.mark.parametrize("load_average, started", [(64.0, False), (0.0, True)])
def test_images_are_started_beside_the_split_only_where_a_core_is_free(source, tmp_path, monkeypatch,
                                                                       load_average, started):
    # a busy machine: the verifier thread would only take turns with the split for
    # one core, so nothing is started and the writer has LLVM make every image's
    # code in one go; a free core: a forked child makes them while the split goes on
    monkeypatch.setattr(os, "getloadavg", lambda: (load_average,) * 3)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.delenv("MINISYCL_VERIFY_THREADS", raising=False)
    images = split_module(load(source), mode="kernel", serialize="bitcode")
    assert len(images) > 24                     # (past the thread's first modules: the child's turn)
    assert all((im.module._early is not None) == started for im in images)
    plain = written(source, str(tmp_path / "plain"), "kernel", None, False)
    assert written(source, str(tmp_path / "beside"), "kernel", "bitcode", False) == plain
