"""Numbers read from user text, of any length.

Every reader of a number a user wrote (``.ksl`` literals, ``.prop`` values,
YAML configs, bundle headers) reads it through ``parse_int``: a number too
large for what it is read into is ``None`` for the caller to report, never a
``ValueError`` from Python's limit on decimal conversion (4300 digits) nor a
conversion that costs time quadratic in its length.
"""
from __future__ import annotations

import math
import re

__all__ = ["parse_int", "MAX_BITS"]

#: The widest value any reader needs (64-bit sizes and literals; 128 leaves room
#: for the sums and products their callers check against).
MAX_BITS = 128

_DIGITS = {2: re.compile(r"[01]+"), 8: re.compile(r"[0-7]+"), 10: re.compile(r"[0-9]+"),
           16: re.compile(r"[0-9a-fA-F]+")}


def parse_int(text: str, base: int = 10, bits: int = MAX_BITS) -> int | None:
    """The value of ``text``, ASCII digits of ``base`` (2, 8, 10 or 16) and
    nothing else, or None when it is not such digits or the value needs more
    than ``bits`` bits.  Leading zeros are allowed and free: the cost is linear
    in ``len(text)`` and the conversion never sees more than a few dozen digits."""
    if not _DIGITS[base].fullmatch(text):
        return None
    significant = text.lstrip("0")
    if len(significant) > math.ceil(bits / math.log2(base)):
        return None
    value = int(significant or "0", base)
    return value if value.bit_length() <= bits else None
