"""A definition's declaration made the plain way (``edits._plain_declaration``,
one regular expression for the common header) has the same bytes as made
through the lexer (``edits._declaration_text``), on generated headers made of
the pieces that matter: linkages, calling conventions, return attributes,
quoted names, parameters with and without names, attributes, attribute
groups, attachments and the clauses only a definition may have (issue 28,
point 1: post-link declares every virtual function in the images that name
its vtable).  ``MINISYCL_FUZZ_EXAMPLES=N`` runs N cases (default 300)."""
import os

from hypothesis import HealthCheck, given, settings, strategies as st

from minisycl.passes.ir.edits import _PLAIN_DEFINE, _declaration_of, _declaration_text
from minisycl.passes.ir.entities import Function
from minisycl.passes.support import knobs

FUZZ = settings(max_examples=knobs.fuzz_examples(300), deadline=None, database=None,
                derandomize="MINISYCL_FUZZ_EXAMPLES" not in os.environ, suppress_health_check=list(HealthCheck))

PREFIX = ["internal", "linkonce_odr", "weak_odr", "external", "extern_weak", "private", "dso_local", "hidden",
          "protected", "spir_func", "spir_kernel", "fastcc", "noundef", "zeroext", "signext", "cc 10"]
RETURNS = ["void", "i32", "ptr", "float", "i1", "ptr addrspace(4)", "{ i32, ptr }", "<2 x i32>", '%"struct.S"',
           "%struct.S", "[4 x i8]"]
NAMES = ["f", "_ZN3Set02vfEv0", "0", "a.b$c-d", '"a b"', '"x\\22y"']
PARAMS = ["i32 %a", "ptr %this", "ptr noundef %p", "ptr noundef align 4 %p", "i32", "ptr byval(%struct.S) %s",
          '%"T x" %t', "%struct.S %s", "i64 %0", "...", "ptr nocapture readonly %q", "float %x.y"]
TAIL = ["local_unnamed_addr", "unnamed_addr", "#0", "#12", "!sycl_used_aspects !1", "!dbg !7", "!a.b-c !0",
        "comdat", "comdat($c)", "personality ptr @p", "prefix i32 1", "prologue i8 0", "align 8",
        'section "s"', 'gc "g"', "addrspace(1)", "!intel_reqd_sub_group_size !3"]


#: the pieces of the common header alone (half the cases: the plain way's own)
PLAIN = {id(PREFIX): PREFIX[:-1], id(RETURNS): RETURNS[:4], id(NAMES): NAMES[:4],
         id(PARAMS): PARAMS[:3] + ["i64 %0", "float %x.y"], id(TAIL): TAIL[:7] + ["comdat", "align 8"]}


@st.composite
def headers(draw):
    plain = draw(st.booleans())

    def pieces(options):
        return st.sampled_from(PLAIN[id(options)] if plain else options)
    prefix = draw(st.lists(pieces(PREFIX), max_size=4))
    params = draw(st.lists(pieces(PARAMS), max_size=4))
    tail = draw(st.lists(pieces(TAIL), max_size=5))
    name = draw(pieces(NAMES))
    return ("define " + "".join(p + " " for p in prefix) + draw(pieces(RETURNS)) + " @" + name +
            "(" + ", ".join(params) + ")" + "".join(" " + t for t in tail) + " {"), name


@FUZZ
@given(headers())
def test_plain_declarations_are_the_lexers(header_name):
    header, name = header_name
    fn = Function(name, header, "entry:\n  ret void\n}\n")
    assert _declaration_of(fn).header == _declaration_text(Function(name, header, fn.body))


def test_the_common_header_takes_the_plain_way():
    header = "define linkonce_odr spir_func void @_ZN3Set02vfEv0(ptr %this, i32 %n) #0 !sycl_used_aspects !1 {"
    assert _PLAIN_DEFINE.fullmatch(header) is not None
    assert _declaration_of(Function("_ZN3Set02vfEv0", header, "}\n")).header == \
        "declare spir_func void @_ZN3Set02vfEv0(ptr, i32) #0"
