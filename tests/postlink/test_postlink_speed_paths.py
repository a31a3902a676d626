"""The post-link step's fast paths write exactly what their plain forms wrote
(issue 28, point 1: post-link's speed).

* The bench's device module (``bench/gen_ir.py``), split by kernel and by
  source, gives the very files the tree before the speed work wrote: their
  names and bytes are pinned (sha256, first 16 digits; LLVM's bitcode may
  differ between LLVM releases, so the pins hold for the LLVM they were taken
  with).
* A function's declaration (every image that calls a virtual function of
  another image declares it) reads the words before the name and the
  parameters without the scanner where they are plain words: those readings
  are checked against ``lexer.tokens`` on generated text.

``MINISYCL_FUZZ_EXAMPLES=N`` runs N generated cases (default 300).
"""
import os
import sys

import llvmlite.binding as llvm
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from minisycl.passes.ir import Module
from minisycl.passes.ir.edits import _declaration_of, _unnamed
from minisycl.passes.ir.entities import _PLAIN_WORDS, Function, _plain_words
from minisycl.passes.ir.lexer import split_operands, tokens
from minisycl.passes.support import knobs
from minisycl.postlink import split_module, write_outputs
from minisycl.postlink.grouping import group_key

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from bench_postlink import outputs_hash  # noqa: E402  (the bench's hash of a run's outputs)
from gen_ir import generate_device_module  # noqa: E402

FUZZ = settings(max_examples=knobs.fuzz_examples(300), deadline=None, database=None,
                derandomize="MINISYCL_FUZZ_EXAMPLES" not in os.environ, suppress_health_check=list(HealthCheck))

#: (kernels, split mode) -> the outputs' hash, as c63d976 (before this work) wrote them
PINNED_LLVM = (22, 1, 0)
PINNED = {(40, "kernel"): "ce2ed2e9c5423250", (40, "source"): "fe47cea8f1cd6ecd"}


@pytest.mark.parametrize("kernels, mode", sorted(PINNED))
@pytest.mark.parametrize("serialize", [None, "bitcode"])
def test_the_bench_modules_images_are_byte_for_byte_as_before(tmp_path, kernels, mode, serialize):
    if tuple(llvm.llvm_version_info) != PINNED_LLVM:
        pytest.skip(f"the outputs were pinned with LLVM {'.'.join(map(str, PINNED_LLVM))}")
    text = generate_device_module(kernels, sets=max(1, kernels // 20))
    module = Module.parse(str(llvm.parse_assembly(text)), "gen.ll")
    images = split_module(module, mode=mode, serialize=serialize)
    write_outputs(images, str(tmp_path / "out.table"), properties=True, symbols=True)
    assert outputs_hash(str(tmp_path)) == PINNED[(kernels, mode)]


WORDS = st.sampled_from(["define", "internal", "spir_func", "void", "i32", "8", "0", "0x1F", "-1", "1e5", "1.5",
                         "x86_fp80", "_", "a:", "A", ".a", "$c", "%T", "@g", "#0", "!0", "(", "addrspace(1)", '"s"',
                         ";c", "", "ptr", "noundef"])
TEXTS = st.lists(st.tuples(WORDS, st.sampled_from([" ", "  ", "", "\t"])), max_size=8).map(
    lambda parts: "".join(w + sep for w, sep in parts))


@FUZZ
@given(TEXTS)
def test_plain_words_are_the_scanners_tokens(text):
    if _PLAIN_WORDS.fullmatch(text):
        assert _plain_words(text) == tokens(text)


def _unnamed_by_tokens(params: str) -> str:
    """``_unnamed`` as it was written first: every parameter through the scanner."""
    if "%" not in params:
        return params
    out = []
    for p in split_operands(params[1:-1]):
        toks = tokens(p)
        if len(toks) > 1 and toks[-1][0][0] == "%":
            p = p[:toks[-1][1]].rstrip()
        out.append(p)
    return "(" + ", ".join(out) + ")"


PARAMS = st.lists(st.lists(st.sampled_from(["ptr", "i32", "noundef", "%x", "%0", "%a.b", '%"q r"', "%T", "align",
                                            "8", "byval(%T)", "{", "}", "x", "_y"]), min_size=1, max_size=4)
                  .map(" ".join), max_size=4).map(lambda ps: "(" + ", ".join(ps) + ")")


@FUZZ
@given(PARAMS)
def test_parameters_lose_their_names_as_the_scanner_reads_them(params):
    assert _unnamed(params) == _unnamed_by_tokens(params)


@FUZZ
@given(st.lists(st.sampled_from(["internal", "linkonce_odr", "hidden", "spir_func", "noundef", "zeroext", "i32",
                                 "align 8", "dereferenceable(8)", "ptr addrspace(4)", '"quoted"']),
                max_size=4).map(" ".join), st.sampled_from(["void", "i32", "ptr", "{ i32, ptr }", "%T"]))
def test_a_declaration_reads_the_header_as_the_scanner_does(words, ret):
    header = f"define {words} {ret} @f(ptr noundef %p, i32 %n) #0 !kind !1 {{".replace("  ", " ")
    fast = _declaration_of(Function("f", header, "entry:\n  ret void\n}\n")).header
    slow_fn = Function("f", header, "entry:\n  ret void\n}\n")
    slow_fn._parsed()._prefix = tokens(header[:slow_fn._parsed().name_start])       # the scanner's reading
    from minisycl.passes.ir.call_sites import _type_start
    slow_fn._parsed()._ret_start = _type_start(slow_fn._parsed()._prefix, len(slow_fn._parsed()._prefix) - 1)
    assert fast == _declaration_of(slow_fn).header


class _Attached(dict):
    """No attachment, but read as a function that has some (``group_key``'s general path)."""

    def __bool__(self):
        return True


def test_a_source_key_without_attachments_is_the_general_key():
    module = Module.parse(str(llvm.parse_assembly(generate_device_module(40, sets=2))), "gen.ll")
    plain = [name for name, fn in module.functions.items() if fn.is_kernel and not fn.metadata]
    assert plain
    for name in plain:
        fast = group_key(module, name)
        module.functions[name]._md = _Attached()
        assert group_key(module, name) == fast
