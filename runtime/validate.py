"""The one place public runtime entry points check their arguments.

Every public function and method of the runtime checks what the user passed
with these helpers before it acts, so a wrong type, a wrong kind of object or
an out-of-range value is ``sycl.exception(errc.invalid)`` naming the parameter
("memory_pool: device must be a device, a device name or a selector, got
str 'x'"), never a ``TypeError``, ``AttributeError``, ``struct.error`` from
deeper down, nor a value silently taken for something else (a string iterated
as a list of names, ``"yes"`` as ``True``).

Each helper returns the value in the form the caller uses (an ``int``, a
``list``, a ``numpy.dtype``).  The cheap, common case is tested first: the
helpers are called on the launch path too.  ``tests/runtime/test_api_types.py``
calls every public entry point with wrong values of every kind.
"""
from __future__ import annotations

import os

import numpy as np

from .errors import errc, exception

__all__ = ["KINDS", "register_kind", "invalid", "checked_int", "checked_count", "require_bool", "require_instance", "require_callable",
           "require_str", "require_choice", "require_path", "require_paths", "require_names", "require_dtype",
           "require_queue", "require_device", "require_context", "require_events", "described"]

_MAX = (1 << 63) - 1

#: the runtime's classes the helpers check for, by role ("queue", "device",
#: "context", "event"), registered by the modules defining them
#: (``register_kind``): every runtime module imports this one, so it imports none.
KINDS: dict[str, type] = {}


def register_kind(role: str, cls: type) -> type:
    KINDS[role] = cls
    return cls


def invalid(message: str) -> exception:
    """``exception(errc.invalid, message)``, to raise."""
    return exception(errc.invalid, message)


def described(value) -> str:
    """``value`` for a message: its type (by its SYCL name where it is one of the
    runtime's kinds, whichever device's class it is: ``queue``, not ``cuda_queue``)
    and a short repr."""
    text = repr(value)
    name = next((role for role, cls in KINDS.items() if isinstance(value, cls)), type(value).__name__)
    return f"{name} {text if len(text) <= 60 else text[:57] + '...'}"


def checked_int(value, what: str, low: int = 0, high: int = _MAX) -> int:
    """``value`` as an int in ``[low, high]`` (sizes, counts, offsets, indices)."""
    if type(value) is int and low <= value <= high:     # the common case, first
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise invalid(f"{what} must be an integer, got {described(value)}")
    value = int(value)
    if value < low or value > high:
        bound = f"at least {low}" if value < low else f"at most {high}"
        raise invalid(f"{what} must be {bound}, got {value}")
    return value


def checked_count(value, what: str) -> int:
    """A size or count: a non-negative integer that fits 64 signed bits."""
    if type(value) is int and 0 <= value <= _MAX:
        return value
    return checked_int(value, what)


def require_bool(value, what: str) -> bool:
    """A flag: ``True``/``False`` (NumPy's too); anything else is refused, not
    taken for its truth value."""
    if value is True or value is False:
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    raise invalid(f"{what} must be True or False, got {described(value)}")


def require_instance(value, cls, what: str, expected: str | None = None):
    """``value`` when it is a ``cls`` (a class or a tuple of them)."""
    if isinstance(value, cls):
        return value
    names = expected or (" or ".join(c.__name__ for c in cls) if isinstance(cls, tuple) else cls.__name__)
    raise invalid(f"{what} must be {_article(names)}, got {described(value)}")


def require_callable(value, what: str):
    if callable(value):
        return value
    raise invalid(f"{what} must be callable, got {described(value)}")


def require_str(value, what: str) -> str:
    if isinstance(value, str):
        return value
    raise invalid(f"{what} must be a string, got {described(value)}")


def require_choice(value, choices, what: str) -> str:
    """One of the strings ``choices``."""
    if isinstance(value, str) and value in choices:
        return value
    raise invalid(f"unknown {what} {value!r:.60} (expected one of: {', '.join(choices)})")


def require_path(value, what: str) -> str:
    """A file name: ``str``, ``bytes`` (any bytes the OS takes) or path-like, as ``str``."""
    if isinstance(value, str):
        path = value
    elif isinstance(value, (bytes, os.PathLike)):
        try:
            path = os.fsdecode(value)
        except TypeError:
            path = None
    else:
        path = None
    if not isinstance(path, str) or not path or "\0" in path:
        raise invalid(f"{what} must be a file name (str, bytes or path-like, not empty), got {described(value)}")
    return path


def require_paths(value, what: str) -> list[str]:
    """One file name or a non-empty list or tuple of them."""
    if isinstance(value, (str, bytes, os.PathLike)):
        return [require_path(value, what)]
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (str, bytes, os.PathLike)) for v in value):
        return [require_path(v, f"{what}[{i}]") for i, v in enumerate(value)]
    raise invalid(f"{what}: expects a path or a non-empty list of paths, got {described(value)}")


def require_names(value, what: str) -> list[str]:
    """A list or tuple of strings; one string is one name (never its characters)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise invalid(f"{what} must be a name or a list of names, got {described(value)}")


def require_dtype(value, what: str) -> np.dtype:
    """A NumPy element type USM, fills and copies can hold (fixed size, no objects)."""
    if type(value) is np.dtype:
        dtype = value
    else:
        if isinstance(value, (np.ndarray, list, tuple, dict)) or value is None:
            raise invalid(f"{what} must be an element type (a NumPy dtype), got {described(value)}")
        try:
            dtype = np.dtype(value)
        except (TypeError, ValueError) as err:
            raise invalid(f"{what} must be an element type (a NumPy dtype), got {described(value)} ({err})") from None
    if dtype.itemsize == 0 or dtype.hasobject:
        raise invalid(f"{what}: USM cannot hold elements of type {dtype}")
    return dtype


def require_queue(value, what: str = "queue", optional: bool = False):
    """A ``queue`` (or ``None`` when ``optional``)."""
    if isinstance(value, KINDS["queue"]) or (optional and value is None):
        return value
    raise invalid(f"{what} must be a queue{' or None' if optional else ''}, got {described(value)}")


def require_device(value, what: str = "device", optional: bool = False):
    """What names a device: a ``device``, a device name, or a selector (a
    callable scoring devices); ``None`` when ``optional`` (the default device)."""
    if isinstance(value, (KINDS["device"], str)) or callable(value) or (optional and value is None):
        return value
    raise invalid(f"{what} must be a device, a device name or a device selector"
                  f"{' (or None)' if optional else ''}, got {described(value)}")


def require_context(value, what: str = "context", optional: bool = False):
    if isinstance(value, KINDS["context"]) or (optional and value is None):
        return value
    raise invalid(f"{what} must be a context{' or None' if optional else ''}, got {described(value)}")


def require_events(value, what: str = "depends_on") -> list:
    """An event or a list or tuple of events, as a list."""
    event = KINDS["event"]
    if isinstance(value, event):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(e, event) for e in value):
        return list(value)
    raise invalid(f"{what} expects an event or a list of events, got {described(value)}")


def _article(noun: str) -> str:
    return ("an " if noun[:1] in "aeiou" else "a ") + noun
