"""post-link's one option table against upstream's option list (issue 32, point 7).

``tests/postlink/data/sycl_post_link_options.txt`` is the list taken from
upstream's source (its header says where).  Every upstream option must be a
row of ``postlink/options.OPTIONS`` with the values upstream takes; every row
is upstream's (or marked as an older upstream option, or minisycl's own); a
refused option is an error saying minisycl does not implement it; ``--help``
shows the status of each."""
import pathlib

import pytest
from click.testing import CliRunner

from minisycl.passes.support.cli import main
from minisycl.postlink.cli import post_link_cmd
from minisycl.postlink.options import OPTIONS, STATUSES, upstream_names

DATA = pathlib.Path(__file__).parent / "data" / "sycl_post_link_options.txt"


def upstream_options() -> dict[str, list[str]]:
    out = {}
    for line in DATA.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, values = line.partition(" ")
            out[name] = values.split(",") if values else []
    return out


def test_every_upstream_option_is_in_the_table():
    upstream = upstream_options()
    missing = set(upstream) - upstream_names()
    assert not missing, f"upstream options missing from postlink/options.py: {sorted(missing)}"
    by_name = {o.upstream: o for o in OPTIONS if o.upstream}
    for name, values in upstream.items():
        choice = getattr(by_name[name].click.get("type"), "choices", None)
        if values:
            assert choice and set(values) <= set(choice), f"-{name}: upstream takes {values}, we take {choice}"


def test_every_row_is_upstream_or_marked():
    upstream = set(upstream_options())
    for opt in OPTIONS:
        assert opt.status in STATUSES
        if opt.upstream and opt.upstream not in upstream:
            assert opt.older, f"{opt.names[0]} is neither in upstream's newest list nor marked older"


def test_the_command_is_the_table():
    params = {p.name for p in post_link_cmd.params} - {"input"}
    assert params == {o.dest for o in OPTIONS}


@pytest.mark.parametrize("opt", [o for o in OPTIONS if o.status == "refused"], ids=lambda o: o.names[0])
def test_refused_option_is_an_error(tmp_path, opt):
    src = tmp_path / "in.ll"
    src.write_text('define spir_kernel void @k() #0 {\n  ret void\n}\nattributes #0 = { "sycl-module-id"="a" }\n')
    value = [] if opt.click.get("is_flag") else ["x"]
    r = CliRunner().invoke(main, ["post-link", opt.names[0], *value, str(src), "-o", str(tmp_path / "o.table")])
    assert r.exit_code == 1
    assert "minisycl does not implement" in r.output and opt.names[0] in r.output
    assert not (tmp_path / "o.table").exists()


def test_help_says_status():
    text = " ".join(CliRunner().invoke(main, ["post-link", "--help"]).output.split()).split("Options:", 1)[1]
    for opt in OPTIONS:
        assert opt.names[0] in text
    assert text.count("[not implemented by minisycl: refused]") == sum(o.status == "refused" for o in OPTIONS)
    assert text.count("[ESIMD only:") == sum(o.status == "no-esimd" for o in OPTIONS)
