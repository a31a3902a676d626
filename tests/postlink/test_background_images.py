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
