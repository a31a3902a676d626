"""Differential test: post-link and split-if-device against LLVM itself (issue 15, point 5).

``ir_gen.modules()`` draws valid device modules full of what trips an IR
reader (quoted names with `` = ``, ``#``, ``\\22``, non-ASCII; comdats;
``addrspacecast`` members of ``@llvm.compiler.used``; metadata naming values;
debug info).  For each one:

* ``minisycl post-link -split=kernel|source|auto -symbols -S`` (the API the
  command runs: ``split_module`` + ``write_outputs``) must give the images,
  entry points and ``.sym`` files upstream's rules give, every image must
  verify in LLVM, and each image must define exactly the functions and global
  variables that LLVM keeps when it internalizes everything but the image's
  entry points and runs GlobalDCE (``bench/llvm_split.py``).
* ``minisycl opt -passes=split-if-device,propagate-aspects`` must write a
  module that verifies and defines what LLVM keeps from the device roots.

Where the reference models an upstream rule LLVM's passes do not know, it
says so (``reference_image``):

* ``@llvm.used`` is erased before the split (upstream
  ``removeSYCLKernelsConstRefArray``), so what only it names is not kept;
* device globals leave ``@llvm.compiler.used`` before the split (upstream
  ``removeDeviceGlobalFromCompilerUsed``); the other members stay in every
  image, as the list is a root of each (upstream's dependency graph starts
  from every global that is not discardable, and GlobalDCE keeps what the
  list names);
* a ``"referenced-indirectly"`` function joins every image with an indirect
  call of its signature (upstream's ``DependencyGraph``, case 2) and is left
  as it is by Internalize (``mustPreserveGV``): GlobalDCE keeps it unless its
  linkage is discardable and nothing live uses it;
* a module without entry points is copied whole and cleaned up
  (``ModuleCopier``): global variables that are not discardable stay.

The generator makes no ``"indirectly-callable"`` function: virtual-function
outlining moves those into images of their own by design.  Not modelled, as
the issue defines the reference: upstream's split images also hold every
global variable that is not discardable (its dependency graph starts from
them and Internalize keeps variables); post-link and the reference both keep
only the ones an image reaches.

``REPRODUCERS`` are small modules on which the code was wrong, one per
failure class; they always run.

Cost: ``POST_LINK_EXAMPLES`` + ``OPT_EXAMPLES`` modules, the same ones every
run (``derandomize``, no example database), no shrinking: the whole file runs
in well under a minute on the 2-core machine.  ``MINISYCL_DIFF_EXAMPLES=N``
draws N modules for each test instead; ``MINISYCL_DIFF_SHRINK=1`` lets
hypothesis shrink a failing module to a small one (it can take minutes).
"""
from __future__ import annotations

import os
import sys
import tempfile

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, settings

from ir_gen import KERNEL_SIG, Fn, GenModule, Gv, modules

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import llvm_split  # noqa: E402
import llvmlite.binding as llvm  # noqa: E402

from minisycl.passes.support.cli import main  # noqa: E402
from minisycl.passes.support import knobs  # noqa: E402
from minisycl.passes.ir import parse_text, quote_name, unquote_name  # noqa: E402
from minisycl.postlink import split_module, write_outputs  # noqa: E402

MODES = ("kernel", "source", "auto")
#: modules per CI run (about 0.1 s a module for post-link's three splits and
#: LLVM's reference images, 0.05 s for opt, on the 2-core machine); the same
#: modules every run (derandomized); ``MINISYCL_DIFF_EXAMPLES=N`` draws N of each
POST_LINK_EXAMPLES = knobs.diff_examples(200)
OPT_EXAMPLES = knobs.diff_examples(100)
#: ``MINISYCL_DIFF_SHRINK=1``: on a failure, let hypothesis shrink the module
#: to a small one (minutes); CI reports the first failing module as drawn
SHRINK = knobs.diff_shrink()


def reference_image(m: GenModule, ref_input, entries: list[str]):
    """LLVM's image for ``entries``.

    Entry points: first what upstream's dependency graph reaches, by
    ``keep_only`` with the ``"referenced-indirectly"`` functions whose
    signature an indirect call in the image has as entries too, until nothing
    more joins (LLVM decides what is reached; the generator knows the
    signatures of each body's indirect calls).  Then the image: ``keep_only``
    of the entry points (internalize the rest, GlobalDCE) where the
    ``"referenced-indirectly"`` functions reached are upstream's
    ``mustPreserveGV``: Internalize leaves them as they are, so GlobalDCE
    deletes one of discardable linkage that nothing live uses, and keeps the
    others.

    No entry point at all (``entries == []``): upstream does not split but
    copies the module (``ModuleCopier``) and cleans it up the same way: every
    global variable that is not discardable stays (Internalize keeps all
    variables), and so does every ``"referenced-indirectly"`` function that is
    not discardable.  A device global that left ``@llvm.compiler.used`` with no
    other user was erased before (``removeDeviceGlobalFromCompilerUsed``)."""
    candidates = m.referenced_indirectly()
    if not entries:
        dead = {g for g in m.used if g in m.device_globals() and not m.users(g)}
        variables = {g.name for g in ref_input.global_variables
                     if not g.is_declaration and g.linkage not in _DISCARDABLE and not g.name.startswith("llvm.")}
        return llvm_split.keep_only(ref_input, [], preserve=(variables - dead) | set(candidates))
    keep = set(entries)
    while True:         # what upstream's dependency graph reaches: candidates count as reached
        functions, _ = llvm_split.defined_names(llvm_split.keep_only(ref_input, keep))
        sigs = set()
        for name in functions:
            sigs |= m.icall_signatures(name)
        more = keep | {c for c, sig in candidates.items() if sig in sigs}
        if more == keep:
            break
        keep = more
    return llvm_split.keep_only(ref_input, entries, preserve=functions & set(candidates))


#: linkages LLVM may drop when nothing uses the global (``isDiscardableIfUnused``)
_DISCARDABLE = {llvm.Linkage.internal, llvm.Linkage.private, llvm.Linkage.linkonce_any, llvm.Linkage.linkonce_odr,
                llvm.Linkage.available_externally}


def contents(ref) -> dict:
    functions, variables = llvm_split.defined_names(ref)
    return {"functions": sorted(functions), "globals": sorted(variables),
            "llvm.compiler.used": sorted(llvm_split.used_members(ref))}


def difference(got: dict, want: dict) -> str:
    """What an image has that LLVM's has not, and the other way round."""
    out = []
    for key in want:
        extra, missing = set(got[key]) - set(want[key]), set(want[key]) - set(got[key])
        out += [f"{key}: extra {sorted(extra)}"] if extra else []
        out += [f"{key}: missing {sorted(missing)}"] if missing else []
    return "; ".join(out)


def check_post_link(m: GenModule, folder: str) -> None:
    text = m.text()
    ref_input = llvm_split.parse(m.text(drop_from_used=m.device_globals(), llvm_used=False))
    wanted: dict[tuple, dict] = {}          # the same groups recur between modes
    for mode in MODES:
        images = split_module(parse_text(text, "gen.ll")[0], mode=mode)
        groups = m.groups(mode)
        assert [im.entry_points for im in images] == groups, mode
        os.makedirs(os.path.join(folder, mode), exist_ok=True)
        rows = write_outputs(images, os.path.join(folder, mode, "out.table"), text_ir=True, symbols=True)
        for (code, sym), entries in zip(rows, groups):
            with open(code, encoding="utf-8") as fh:
                image = llvm_split.parse(fh.read())                    # (a) every image verifies
            with open(sym, encoding="utf-8") as fh:
                assert fh.read() == "".join(e + "\n" for e in entries)
            if tuple(entries) not in wanted:
                wanted[tuple(entries)] = contents(reference_image(m, ref_input, entries))
            got, want = contents(image), wanted[tuple(entries)]     # (b) what LLVM keeps
            assert got == want, f"-split={mode}, image of {entries}: {difference(got, want)}"


def check_opt(m: GenModule, folder: str) -> None:
    path, out = os.path.join(folder, "in.ll"), os.path.join(folder, "device.ll")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(m.text())
    r = CliRunner().invoke(main, ["opt", "-passes=split-if-device,propagate-aspects", path, "-o", out])
    assert r.exit_code == 0, r.output
    with open(out, encoding="utf-8") as fh:
        device = llvm_split.parse(fh.read())
    # split-if-device gives a used-list member to the half whose roots reach it:
    # the list is no root of its own there, device globals are device roots
    ref_input = llvm_split.parse(m.text(drop_from_used=set(m.used), llvm_used=False))
    want = llvm_split.defined_names(llvm_split.keep_only(ref_input, m.device_roots()))
    got = llvm_split.defined_names(device)
    assert got == want, difference(dict(zip(("functions", "globals"), got)), dict(zip(("functions", "globals"), want)))


def _settings(n):
    phases = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target] + ([Phase.shrink] if SHRINK else [])
    return settings(max_examples=n, deadline=None, derandomize=True, database=None, phases=phases,
                    suppress_health_check=[HealthCheck.too_slow])


@_settings(POST_LINK_EXAMPLES)
@given(modules())
def test_post_link_keeps_what_llvm_keeps(m):
    with tempfile.TemporaryDirectory() as folder:
        check_post_link(m, folder)


@_settings(OPT_EXAMPLES)
@given(modules())
def test_split_if_device_keeps_what_llvm_keeps(m):
    with tempfile.TemporaryDirectory() as folder:
        check_opt(m, folder)


def test_reference_is_internalize_plus_global_dce():
    """The oracle itself, on a module whose answer is known: what an entry
    reaches (calls, initialisers, used lists) stays; metadata is no use."""
    ref = llvm_split.parse(REFERENCE_INPUT)
    image = llvm_split.keep_only(ref, ["k", "local"])
    assert llvm_split.defined_names(image) == ({"k", "f x", "fromtable", "used", "local"}, {"table", "kept"})
    assert llvm_split.used_members(image) == {"used", "kept"}
    assert llvm_split.defined_names(ref)[0] >= {"dropped", "onlymd"}      # the input is left as it was


REFERENCE_INPUT = r"""
$"f x" = comdat any
@table = internal global ptr @fromtable
@kept = internal addrspace(1) global i32 0
@llvm.compiler.used = appending global [2 x ptr] [ptr @used, ptr addrspacecast (ptr addrspace(1) @kept to ptr)]
define weak_odr spir_kernel void @k() {
  call spir_func void @"f x"()
  %p = load ptr, ptr @table
  ret void
}
define linkonce_odr hidden spir_func void @"f x"() comdat { ret void }
define spir_func void @fromtable() { ret void }
define spir_func void @used() { ret void }
define internal spir_func void @local() { ret void }
define spir_func void @dropped() { ret void }
define spir_func void @onlymd() { ret void }
!named = !{!0}
!0 = !{ptr @onlymd}
"""


# --- small modules of each failure class found so far ----------------------------------------

VOID_PTR, I32_I32, F_F = ("void", ("ptr",)), ("i32", ("i32",)), ("float", ("float",))


def kernel(name: str, *ops, **kw) -> Fn:
    return Fn(name, "kernel", KERNEL_SIG, linkage="weak_odr", module_id="a.cpp", ops=list(ops), **kw)


def helper(name: str, sig=VOID_PTR, linkage="internal", **kw) -> Fn:
    return Fn(name, "helper", sig, linkage=linkage, **kw)


def module(functions, globals_=(), used=(), kernels_md=False, escape_all=False) -> GenModule:
    return GenModule(list(functions), list(globals_), list(used), [], kernels_md, debug=False, escape_all=escape_all,
                     intrinsic=False)


REPRODUCERS = {
    # LLVM prints '\' in a name as '\\' (quote_string spelled it '\5C'): a bare
    # 'comdat' was looked up under another spelling than LLVM's '$"h\\x" = comdat any'
    "name-backslash": module([kernel("a\\b", ("call", "h\\x")),
                              helper("h\\x", linkage="linkonce_odr", comdat=True)]),
    # LLVM prints names with '$' quoted, non-ASCII ones as \XX escapes: the
    # comdat was looked up as $f$1, not $"f$1"
    "name-needs-quotes-comdat": module([kernel("k", ("call", "f$1"), ("call", "gé"), ("load", "v$é")),
                                        helper("f$1", linkage="linkonce_odr", comdat=True),
                                        helper("gé", linkage="linkonce_odr", comdat=True)],
                                       [Gv("v$é", "plain", "linkonce_odr", comdat=True)], escape_all=True),
    # a global named " = " is cut at that " = "
    "global-name-with-equals": module([kernel("k", ("load", " = "))], [Gv(" = ", "plain", "internal")]),
    # !opencl.kernels = !{!0, !1}, !0 = !{ptr @k1}: copied into the image of k2 as is
    "named-metadata-value-refs": module([kernel("k1"), kernel("k2")], kernels_md=True),
    # !callees and a function attachment naming functions nothing uses (metadata is not a use)
    "callees-metadata": module([kernel("k", ("icall_any", VOID_PTR, True), attachment="g"),
                                helper("f", linkage=""), helper("g")]),
    # the rebuilt @llvm.compiler.used says 'ptr @g' for an addrspace(1) member
    "used-addrspacecast": module([kernel("k", ("load", "other"))],
                                 [Gv("dg", "dg", "internal", 1, uid="uid"), Gv("other", "plain", "internal", 1),
                                  Gv("unused", "plain", "internal", 1)], used=["dg", "other", "unused"]),
    # members of @llvm.compiler.used that are not device globals must stay in every image
    "used-member-dropped": module([kernel("k"), helper("keepfn")], [Gv("keep", "plain", "internal")],
                                  used=["keep", "keepfn"]),
    # upstream: "_Z", any number of digits (none too), "__sycl_": a builtin, not an entry point
    "builtin-name-without-digits": module([kernel("k"), Fn("_Z__sycl_helper", "external", VOID_PTR,
                                                           module_id="a.cpp")]),
    # a "referenced-indirectly" candidate of discardable linkage that only an indirect
    # call's type brings is deleted by upstream's GlobalDCE (Internalize leaves its
    # linkage); an external one it alone reached stays (it is preserved)
    "referenced-indirectly-discardable": module([kernel("k", ("icall_any", I32_I32, False)),
                                                 helper("dead", I32_I32, linkage="linkonce_odr",
                                                        referenced_indirectly=True, ops=[("icall_any", F_F, False)]),
                                                 helper("dead too", I32_I32, referenced_indirectly=True),
                                                 helper("kept", F_F, linkage="", referenced_indirectly=True)]),
    # no entry point: upstream copies the module and cleans it up; variables that
    # are not discardable stay, a device global only @llvm.compiler.used named goes
    "no-entry-points": module([helper("h", linkage="", ops=[("load", "dg used")]),
                               helper("ri", linkage="", referenced_indirectly=True),
                               helper("ri local", referenced_indirectly=True)],
                              [Gv("g", "plain", ""), Gv("l", "plain", "internal"),
                               Gv("dg", "dg", "", 1, uid="u"), Gv("dg used", "dg", "", 1, uid="v")],
                              used=["dg", "dg used"]),
    # a "referenced-indirectly" function joins each image with an indirect call of its type
    "referenced-indirectly": module([kernel("k", ("icall_any", I32_I32, False)),
                                     helper("cand", I32_I32, linkage="", referenced_indirectly=True),
                                     helper("other", F_F, linkage="", referenced_indirectly=True)]),
}


@pytest.mark.parametrize("name", sorted(REPRODUCERS))
def test_reproducer(name, tmp_path):
    m = REPRODUCERS[name]
    llvm_split.parse(m.text())
    check_post_link(m, str(tmp_path / "post-link"))
    os.makedirs(tmp_path / "opt")
    check_opt(m, str(tmp_path / "opt"))


def test_names_spelled_as_llvm_prints_them():
    """``quote_name`` spells every name as LLVM's printer does, and
    ``unquote_name`` reads that spelling back: each byte 1..255 (bytes that are
    no UTF-8 as surrogates) in a global, a comdat and a struct type name."""
    names = ["a" + bytes([b]).decode("utf-8", "surrogateescape") + "z" for b in range(1, 256)]
    names += ["$", "0a", "-a.b_c", "a\\5C", "é", "漢\\\"", "\\"]
    lines = []
    for i, name in enumerate(names):
        q = quote_name(name)
        lines.append(f"${q} = comdat any\n%{q} = type {{ i{i + 1} }}\n@{q} = linkonce_odr global %{q} zeroinitializer, comdat\n")
    printed = str(llvm_split.parse("".join(lines)))
    for name in names:
        q = quote_name(name)
        assert f"${q} = comdat any" in printed and f"@{q} = linkonce_odr global %{q} zeroinitializer, comdat" in printed, name
        assert unquote_name(q) == name


NOT_UTF8 = r'''
$"h\FE" = comdat any
define spir_kernel void @"k\FF"() #0 {
  call spir_func void @"h\FE"()
  ret void
}
define linkonce_odr spir_func void @"h\FE"() comdat {
  ret void
}
attributes #0 = { "sycl-module-id"="a\FFb" }
'''


def test_name_bytes_that_are_no_utf8(tmp_path):
    """LLVM names are bytes: a name that is no UTF-8 keeps its bytes through
    post-link (its comdat found, the ``.sym`` file holding the raw bytes, as
    upstream writes them) instead of stopping with an internal error."""
    src = tmp_path / "in.ll"
    src.write_text(NOT_UTF8)
    for mode in MODES:
        out = tmp_path / mode / "out.table"
        out.parent.mkdir()
        r = CliRunner().invoke(main, ["post-link", f"-split={mode}", "-symbols", "-properties", "-S", str(src),
                                      "-o", str(out)])
        assert r.exit_code == 0, r.output
        assert (tmp_path / mode / "out_0.sym").read_bytes() == b"k\xff\n"
        image = (tmp_path / mode / "out_0.ll").read_text()
        llvm_split.parse(image)
        assert 'define internal spir_func void @"h\\FE"()' in image
