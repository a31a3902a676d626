"""The byte-array encoding reproduces every verified example of the reference
(docs/formats.md, "Byte arrays"), and .prop files round-trip."""
import struct

import pytest

from minisycl.postlink.propertyset import (PropertyError, PropertySets, byte_array, decode_base64, encode_base64,
                                           string_value, u32_array, u64_array)

EXAMPLES = [
    (u32_array([]), "AAAAAAAAAAA"),
    (u32_array([1, 6]), "ABAAAAAAAAQAAAAAGAAAAA"),
    (u32_array([0, 9, 12]), "gBAAAAAAAAAAAAAAJAAAAwAAAAA"),
    (u32_array([5, 6]), "ABAAAAAAAAQBAAAAGAAAAA"),
    (u32_array([6]), "gAAAAAAAAAgBAAAA"),
    (u32_array([0, 1, 6, 9, 12]), "gCAAAAAAAAAAAAAABAAAAYAAAAQCAAAAMAAAAA"),
    (u32_array([1, 6, 9, 12]), "ACAAAAAAAAQAAAAAGAAAAkAAAAADAAAA"),
    (u32_array([5, 6, 9]), "gBAAAAAAAAQBAAAAGAAAAkAAAAA"),
    (u32_array([5]), "gAAAAAAAAAQBAAAA"),
    (string_value("set-foo"), "4AAAAAAAAAwclRXLm92b"),
    (string_value("setA"), "gAAAAAAAAAwclRXQ"),
    (u64_array([64]), "ABAAAAAAAAAQAAAAAAAAAA"),
    (u64_array([32]), "ABAAAAAAAAAIAAAAAAAAAA"),
    (u32_array([1]), "gAAAAAAAAAQAAAAA"),
    (byte_array(struct.pack("<II", 4, 0)), "ABAAAAAAAAABAAAAAAAAAA"),
    (byte_array(struct.pack("<II", 1, 1)), "ABAAAAAAAAQAAAAABAAAAA"),
    (string_value("_ZL7dg_int1"), "YBAAAAAAAAwXax0Nkd2Xp5GdxA"),
]


@pytest.mark.parametrize("raw,text", EXAMPLES, ids=[t for _, t in EXAMPLES])
def test_verified_examples(raw, text):
    assert encode_base64(raw) == text
    assert decode_base64(text) == raw


def test_not_rfc4648():
    import base64
    raw = u32_array([6])
    assert base64.b64encode(raw).decode().rstrip("=") != encode_base64(raw)


def test_bad_base64_is_rejected():
    with pytest.raises(PropertyError):
        decode_base64("AAAAA")          # length 1 mod 4
    with pytest.raises(PropertyError):
        decode_base64("AA*A")


def test_prop_file_round_trip_and_order():
    props = PropertySets()
    props.add("SYCL/device requirements", "aspects", u32_array([6]))
    props.add("SYCL/misc properties", "optLevel", 2)
    props.add("SYCL/device requirements", "aspects", u32_array([1]))   # first value wins
    text = props.text()
    assert text == "[SYCL/device requirements]\naspects=2|gAAAAAAAAAgBAAAA\n[SYCL/misc properties]\noptLevel=1|2\n"
    assert PropertySets.parse(text).text() == text


@pytest.mark.parametrize("bad", ["key=1|1\n", "[S]\nkey\n", "[S]\nkey=3|x\n", "[S]\n=1|2\n", "[S]\nk=1|x\n"])
def test_malformed_prop_lines(bad):
    with pytest.raises(PropertyError) as err:
        PropertySets.parse(bad, "x.prop")
    assert str(err.value).startswith("x.prop:")
