"""``word_positions`` (the scan ``propagate-aspects`` uses for ``double``) finds
exactly the tokens ``word_matches`` finds for that word, on any text made of
the characters that decide LLVM's token boundaries (names, labels, strings,
comments, sigils, escapes)."""
from hypothesis import given, settings, strategies as st

from minisycl.passes.ir.lexer import word_matches, word_positions
from minisycl.passes.support import knobs

PIECES = ["double", "float", "doublex", "xdouble", "double:", "%", "@", "!", "#", "$", "\\", '"', ";", "\n", " ",
          ",", "(", ")", "c", ".", "-", "_", "0", ":", "i64", "%double", '%"double"', 'c"double"']


@settings(max_examples=knobs.fuzz_examples(300), deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40), st.sampled_from(["double", "float", "i64"]))
def test_same_as_word_matches(pieces, word):
    text = "".join(pieces)
    assert word_positions(text, word) == [at for w, at in word_matches(text) if w == word]


def test_examples():
    text = 'define double @f(double %x) { ; double\n  %"double" = fadd double %x, 1.0\n  br label %double\ndouble:\n'
    assert word_positions(text, "double") == [7, 17, 58]
    assert word_positions("c\"double\" double.x xdouble", "double") == []
