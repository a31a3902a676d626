"""What names resolve to after semantic analysis: functions, locals, device globals, constants.

The aspect uses the device-code checks report (the emitter attaches them as
``!minisycl.aspect_uses``) are recorded on ``FuncSym`` while bodies are
checked, each with its source location and *region*: ``None`` for code that
runs on both sides, ``"device"`` inside an ``if_device`` block (or the
``otherwise`` of ``if_host``), ``"host"`` for the opposite.
"""
from __future__ import annotations

from .types import ClassType, Type


class FuncSym:
    __slots__ = ("name", "llname", "cls", "ret", "params", "loc", "node", "is_kernel", "is_host",
                 "is_static", "is_external", "is_virtual", "is_ctor", "defined", "set_name",
                 "calls_sets", "device_has", "reqd_wg", "launch", "aspects", "if_count", "module_id", "reqd_sg",
                 "local_decls")

    def __init__(self, name, llname, ret, params, loc):
        self.name, self.llname, self.ret, self.params, self.loc = name, llname, ret, params, loc
        self.cls = self.node = None
        self.is_kernel = self.is_host = self.is_static = self.is_external = False
        self.is_virtual = self.is_ctor = self.defined = False
        self.set_name = None            # IR set string when indirectly_callable
        self.calls_sets: list[str] = []
        self.device_has = None          # list[Aspect] or None
        self.reqd_wg = None
        self.launch = "single_task"     # or "range" / "nd_range"
        self.aspects: dict = {}         # (Aspect, region) -> (loc, what) of the first use
        self.if_count = 0
        self.module_id = None
        self.reqd_sg = None             # reqd_sub_group_size
        self.local_decls: list = []     # (name, loc) of its work-group memory (``local T x[N];``)

    @property
    def display(self) -> str:
        return f"{self.cls.name}::{self.name}" if self.cls is not None else self.name

    def __repr__(self):
        return f"<FuncSym {self.display}>"


class LocalSym:
    """A parameter or local variable; ``value``: the constant a ``const`` integer
    local was initialised with, usable in constant expressions as in C++."""
    __slots__ = ("name", "ty", "const", "boundary", "is_param", "loc", "value", "workgroup")

    def __init__(self, name, ty: Type, const, boundary, is_param, loc, workgroup=False):
        self.name, self.ty, self.const, self.boundary, self.is_param, self.loc = name, ty, const, boundary, is_param, loc
        self.value = None
        #: work-group memory (``local T x[N];``): one module-level variable, never captured
        self.workgroup = workgroup


class DeviceGlobalSym:
    __slots__ = ("name", "llname", "ty", "loc", "image_scope", "host_access", "init_mode",
                 "implement_in_csr", "init", "construct", "is_static", "is_extern", "is_inline", "unique_id", "cls")

    def __init__(self, name, llname, ty, loc):
        self.name, self.llname, self.ty, self.loc = name, llname, ty, loc
        self.image_scope = False
        self.host_access = None     # 0 read, 1 write, 2 read_write, 3 none (None: not given)
        self.init_mode = None       # 0 reprogram, 1 reset
        self.implement_in_csr = None
        self.init = None            # constant value tree (see checker.constants.const_initializer) or None
        self.construct = None       # (constructor or None, argument exprs) or ("copy", ConstSym): frontend.constexpr
        self.is_static = self.is_extern = self.is_inline = False
        self.unique_id = None
        self.cls = None


def same_device_global_type(a: DeviceGlobalSym, b: DeviceGlobalSym) -> bool:
    """Whether two device globals have one ``device_global<T, PropertyListT>``
    type: the same ``T`` and the same properties (in SYCL the properties are
    part of the type)."""
    return a.ty == b.ty and device_global_properties(a) == device_global_properties(b)


def device_global_properties(g: DeviceGlobalSym) -> tuple:
    """The property list of ``g``'s type, comparable between declarations."""
    return (bool(g.image_scope), g.host_access, g.init_mode, g.implement_in_csr)


class SpecIdSym:
    """``specialization_id<T> name{default};``: ``init`` the default's value tree
    (``checker.constants.const_initializer``; None: zero), ``unique_id`` the
    symbolic id the post-link step and the runtime know it by."""
    __slots__ = ("name", "llname", "ty", "loc", "init", "unique_id", "is_static")

    def __init__(self, name, llname, ty, loc):
        self.name, self.llname, self.ty, self.loc = name, llname, ty, loc
        self.init = None
        self.unique_id = name
        self.is_static = False


class ConstSym:
    """A named constant (``const int n = 4;``, ``constexpr S s(1, 2);``):
    ``value`` its value tree (``checker.constants``), ``construct`` what
    ``construct_device_globals`` still has to evaluate (a constructor and its
    arguments, or ``("copy", other)``), as for a ``DeviceGlobalSym``."""
    __slots__ = ("name", "ty", "value", "loc", "construct")

    def __init__(self, name, ty, value, loc):
        self.name, self.ty, self.value, self.loc = name, ty, value, loc
        self.construct = None


class Program:
    """Everything one translation unit declares, in source order."""

    def __init__(self, file: str):
        self.file = file
        self.classes: list[ClassType] = []
        self.functions: list[FuncSym] = []      # free functions, kernels, methods, ctors
        self.device_globals: list[DeviceGlobalSym] = []
        self.spec_ids: list[SpecIdSym] = []
        self.constants: list[ConstSym] = []     # named constants of class or array type
        self.uses_half = False
