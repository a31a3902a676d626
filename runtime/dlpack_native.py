"""The native half of DLPack: ``dlpack.ll`` compiled once, its entry points as builtins.

Every DLPack exchange makes or takes a capsule, and every capsule ends in a
destructor or a deleter.  Through ctypes each of these costs a foreign call
or a Python callback (1.5-6 microseconds apiece on a loaded machine), which
put one exchange at 10-30 microseconds.  Here they are a few dozen
instructions of the runtime's own JIT-compiled code (``engine.compile_ir``,
cached on disk like every object it makes), called as Python builtins:

* the entry points of ``dlpack.ll`` are made ``PyCFunction`` objects
  (``PyCFunction_NewEx`` over a ``PyMethodDef`` naming the compiled code), so
  Python calls them as it calls any builtin - no ctypes on the path;
* the capsule destructor and the deleters are native functions, so a
  capsule's end runs no Python (beyond the reference it drops);
* the Python C API functions the IR calls are registered with LLVM at their
  addresses in this interpreter (``ctypes.pythonapi``), so the code links
  against the interpreter that loads it, whatever its build.

``functions()`` gives ``(export, take, release, exports_alive)``; ``dlpack.py``
says what each does and is the only user.  The engine that holds the code is
never closed: capsules and deleters handed to other libraries point into it
until the process ends.
"""
from __future__ import annotations

import ctypes
import threading
from importlib import resources

import llvmlite.binding as llvm

from .engine import compile_ir, keep_context

__all__ = ["functions"]

#: the Python C API functions ``dlpack.ll`` declares
_API = ("PyCapsule_New", "PyCapsule_IsValid", "PyCapsule_GetPointer", "PyCapsule_SetName", "PyCapsule_GetContext",
        "PyCapsule_SetContext", "PyLong_AsVoidPtr", "PyLong_AsLongLong", "PyLong_FromLongLong",
        "PyTuple_New", "PyTuple_SetItem", "PyDict_GetItemWithError", "PyErr_Occurred", "PyErr_BadArgument",
        "PyErr_NoMemory", "Py_IncRef", "Py_DecRef", "Py_IsInitialized", "PyGILState_Ensure", "PyGILState_Release")
#: ``PyMethodDef.ml_flags`` (``methodobject.h``)
_METH_NOARGS, _METH_O, _METH_FASTCALL = 0x0004, 0x0008, 0x0080
#: builtin name -> (compiled function, calling convention)
_ENTRIES = {"export": ("msycl_dlpack_export", _METH_FASTCALL), "take": ("msycl_dlpack_take", _METH_FASTCALL),
            "release": ("msycl_dlpack_release", _METH_O), "exports_alive": ("msycl_dlpack_exports_alive", _METH_NOARGS)}


class _MethodDef(ctypes.Structure):
    """``PyMethodDef``: what a builtin function object points at (it must outlive it)."""
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p), ("ml_flags", ctypes.c_int),
                ("ml_doc", ctypes.c_char_p)]


_new_function = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
    ("PyCFunction_NewEx", ctypes.pythonapi))


class _Native:
    """The compiled code and the builtins over it (one per process, never freed)."""

    def __init__(self):
        for name in _API:
            llvm.add_symbol(name, ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value)
        libc = ctypes.CDLL(None)
        for name in ("malloc", "free"):
            llvm.add_symbol(name, ctypes.cast(getattr(libc, name), ctypes.c_void_p).value)
        text = resources.files(__package__).joinpath("dlpack.ll").read_text(encoding="utf-8")
        self.engine, context, _, _ = compile_ir(text, "the runtime's DLPack support", trusted=True)
        keep_context(self, context)
        defs = (_MethodDef * len(_ENTRIES))()
        self.defs = defs                 # (the builtins point into it)
        self.functions = []
        for i, (name, (symbol, flags)) in enumerate(_ENTRIES.items()):
            defs[i].ml_name, defs[i].ml_flags = name.encode(), flags
            defs[i].ml_meth = self.engine.get_function_address(symbol)
            self.functions.append(_new_function(ctypes.addressof(defs[i]), None, None))


_NATIVE: list[_Native] = []         # (held for the process: see the module docstring)
_LOCK = threading.Lock()


def functions() -> tuple:
    """``(export, take, release, exports_alive)``, compiled on the first call."""
    if not _NATIVE:
        with _LOCK:
            if not _NATIVE:
                native = _Native()
                ctypes.pythonapi.Py_IncRef(ctypes.py_object(native))    # (immortal: never collected)
                _NATIVE.append(native)
    return tuple(_NATIVE[0].functions)
