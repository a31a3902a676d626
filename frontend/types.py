"""Types of the kernel language and C's conversion rules over them.

Sizes and layouts are LLVM's (computed in ``data_layout``); this
module only knows the language-level facts: integer ranks and signedness, the
usual arithmetic conversions, and class layout order (vptr, base, fields).
"""
from __future__ import annotations


class Type:
    __slots__ = ()
    is_void = is_bool = is_int = is_float = is_ptr = is_array = is_class = is_item = is_reducer = False
    is_handler = False
    #: ``is_int or is_float or is_bool`` (a class attribute: read per expression)
    is_arith = False


class VoidType(Type):
    __slots__ = ()
    is_void = True

    def __str__(self):
        return "void"


class BoolType(Type):
    __slots__ = ()
    is_bool = True
    is_arith = True
    rank = 0
    signed = False
    bits = 1

    def __str__(self):
        return "bool"


class IntType(Type):
    __slots__ = ("name", "bits", "signed", "rank")
    is_int = True
    is_arith = True

    def __init__(self, name, bits, signed, rank):
        self.name, self.bits, self.signed, self.rank = name, bits, signed, rank

    def __str__(self):
        return self.name


class FloatType(Type):
    __slots__ = ("name", "bits")
    is_float = True
    is_arith = True

    def __init__(self, name, bits):
        self.name, self.bits = name, bits

    def __str__(self):
        return self.name


#: Pointers and array dimensions one declared type may stack (``int***[2][3]``
#: is 5): types are walked recursively (printing, hashing, layout), so an
#: unbounded stack of ``*`` crashed the compiler; clang's bracket depth is 256.
MAX_TYPE_DEPTH = 256

#: address spaces of pointers: generic (any memory) and work-group memory (SPIR's local)
GENERIC, LOCAL = 0, 3


class PointerType(Type):
    """``T*``; ``space`` LOCAL for ``local T*`` (a pointer into work-group memory)."""
    __slots__ = ("pointee", "space")
    is_ptr = True

    def __init__(self, pointee, space=GENERIC):
        self.pointee, self.space = pointee, space

    def __eq__(self, other):
        return isinstance(other, PointerType) and self.pointee == other.pointee and self.space == other.space

    def __hash__(self):
        return hash(("ptr", self.pointee, self.space))

    def __str__(self):
        return f"local {self.pointee}*" if self.space == LOCAL else f"{self.pointee}*"


class ArrayType(Type):
    __slots__ = ("elem", "count")
    is_array = True

    def __init__(self, elem, count):
        self.elem, self.count = elem, count

    def __eq__(self, other):
        return isinstance(other, ArrayType) and self.elem == other.elem and self.count == other.count

    def __hash__(self):
        return hash(("arr", self.elem, self.count))

    def __str__(self):
        inner, dims = self, ""
        while isinstance(inner, ArrayType):
            dims += f"[{inner.count}]"
            inner = inner.elem
        return f"{inner}{dims}"


class ItemType(Type):
    """``id<N>``, ``range<N>`` and ``nd_item<N>``."""
    __slots__ = ("kind", "dims")
    is_item = True

    def __init__(self, kind, dims):
        self.kind, self.dims = kind, dims

    def __eq__(self, other):
        return isinstance(other, ItemType) and self.kind == other.kind and self.dims == other.dims

    def __hash__(self):
        return hash((self.kind, self.dims))

    def __str__(self):
        return f"{self.kind}<{self.dims}>"


class HandlerType(Type):
    """``kernel_handler``: the last parameter of a kernel that reads specialization
    constants (a pointer to the run-time buffer of their values in the IR)."""
    __slots__ = ()
    is_handler = True

    def __eq__(self, other):
        return isinstance(other, HandlerType)

    def __hash__(self):
        return hash("kernel_handler")

    def __str__(self):
        return "kernel_handler"


KERNEL_HANDLER = HandlerType()


class ReducerType(Type):
    """``reducer<T, op>``: a kernel parameter that accumulates a ``sycl.reduction``."""
    __slots__ = ("elem", "op")
    is_reducer = True

    def __init__(self, elem, op):
        self.elem, self.op = elem, op

    def __eq__(self, other):
        return isinstance(other, ReducerType) and self.elem == other.elem and self.op == other.op

    def __hash__(self):
        return hash(("reducer", self.elem, self.op))

    def __str__(self):
        return f"reducer<{self.elem}, {self.op}>"


class ClassType(Type):
    """A ``class``/``struct``; members are filled in by the checker.

    LLVM layout (Itanium-like, single inheritance): ``[vptr]`` when the class is
    polymorphic and its base is not, then the base subobject, then own fields.
    """
    __slots__ = ("name", "keyword", "base", "fields", "field_index", "methods", "vslots",
                 "statics", "ctors", "complete", "loc", "own_vptr", "mangled", "access", "destructor")
    is_class = True

    def __init__(self, name, keyword, loc):
        self.name, self.keyword, self.loc = name, keyword, loc
        self.base = None
        self.fields: list[tuple[str, Type]] = []
        self.field_index: dict[str, int] = {}
        self.methods: dict[str, object] = {}
        self.vslots: list = []          # FuncSyms in vtable order
        self.statics: dict[str, object] = {}
        self.ctors: list = []
        self.complete = False
        self.own_vptr = False
        self.mangled = f"{len(name)}{name}"
        self.access: dict[str, str] = {}    # own member -> "private"/"protected" (absent: public)
        self.destructor = None              # where a (refused) ``~Name()`` was declared

    def __str__(self):
        return self.name

    @property
    def polymorphic(self) -> bool:
        return bool(self.vslots)

    def llvm_members(self) -> list[tuple[str, object]]:
        """(kind, payload) in LLVM struct order: ('vptr', None), ('base', cls), ('field', (name, ty))."""
        out = []
        if self.own_vptr:
            out.append(("vptr", None))
        if self.base is not None:
            out.append(("base", self.base))
        out.extend(("field", f) for f in self.fields)
        return out

    def base_index(self) -> int:
        return 1 if self.own_vptr else 0

    def find_field(self, name):
        """(index path, type) of field ``name``, searching base classes, or None."""
        if name in self.field_index:
            idx = self.field_index[name]
            return [idx], self.fields[idx - (1 if self.own_vptr else 0) - (1 if self.base else 0)][1]
        if self.base is not None:
            found = self.base.find_field(name)
            if found:
                return [self.base_index()] + found[0], found[1]
        return None

    def owner_of(self, name):
        """The class (this one or a base) that declares member ``name``, or None."""
        cls = self
        while cls is not None:
            if name in cls.field_index or name in cls.methods or name in cls.statics:
                return cls
            cls = cls.base
        return None

    def derives_from(self, other) -> bool:
        cls = self
        while cls is not None:
            if cls is other:
                return True
            cls = cls.base
        return False

    def find_method(self, name):
        cls = self
        while cls is not None:
            if name in cls.methods:
                return cls.methods[name]
            cls = cls.base
        return None

    def vptr_path(self) -> list[int]:
        """Struct index path to the (shared) vtable pointer."""
        if self.own_vptr:
            return [0]
        return [self.base_index()] + self.base.vptr_path()

    def base_path(self, ancestor) -> list[int]:
        path, cls = [], self
        while cls is not ancestor:
            path.append(cls.base_index())
            cls = cls.base
        return path


VOID = VoidType()
BOOL = BoolType()
CHAR = IntType("char", 8, True, 1)
UCHAR = IntType("uchar", 8, False, 1)
SHORT = IntType("short", 16, True, 2)
USHORT = IntType("ushort", 16, False, 2)
INT = IntType("int", 32, True, 3)
UINT = IntType("uint", 32, False, 3)
LONG = IntType("long", 64, True, 4)
ULONG = IntType("ulong", 64, False, 4)
#: The type of an expression that already has an error: converts silently to
#: anything, so one mistake gives one diagnostic.
ERROR = IntType("<error>", 32, True, 3)
HALF = FloatType("half", 16)
FLOAT = FloatType("float", 32)
DOUBLE = FloatType("double", 64)

#: Spellings of the primitive types (sequences of type words, order-insensitive).
PRIMITIVE_WORDS = {
    ("void",): VOID, ("bool",): BOOL, ("char",): CHAR, ("signed", "char"): CHAR,
    ("uchar",): UCHAR, ("unsigned", "char"): UCHAR, ("short",): SHORT, ("signed", "short"): SHORT,
    ("short", "int"): SHORT, ("ushort",): USHORT, ("unsigned", "short"): USHORT,
    ("int",): INT, ("signed",): INT, ("signed", "int"): INT, ("uint",): UINT,
    ("unsigned",): UINT, ("unsigned", "int"): UINT, ("long",): LONG, ("long", "int"): LONG,
    ("long", "long"): LONG, ("signed", "long"): LONG, ("ulong",): ULONG,
    ("unsigned", "long"): ULONG, ("unsigned", "long", "long"): ULONG, ("size_t",): ULONG,
    ("half",): HALF, ("float",): FLOAT, ("double",): DOUBLE,
}
_BY_SORTED_WORDS = {tuple(sorted(k)): v for k, v in PRIMITIVE_WORDS.items()}


def primitive(words) -> Type | None:
    return _BY_SORTED_WORDS.get(tuple(sorted(words)))


def unsigned_of(t: IntType) -> IntType:
    return {8: UCHAR, 16: USHORT, 32: UINT, 64: ULONG}[t.bits]


def promote(t: Type) -> Type:
    """C integer promotion: bool, char and short become int."""
    if t.is_bool or (t.is_int and t.rank < INT.rank):
        return INT
    return t


_FLOAT_OF_BITS = {16: HALF, 32: FLOAT, 64: DOUBLE}


def usual_arithmetic(a: Type, b: Type) -> Type:
    """C's usual arithmetic conversions for two arithmetic operand types."""
    if a.is_float or b.is_float:
        return _FLOAT_OF_BITS[max(a.bits if a.is_float else 0, b.bits if b.is_float else 0)]
    a, b = promote(a), promote(b)
    if a is b:
        return a
    if a.signed == b.signed:
        return a if a.rank >= b.rank else b
    u, s = (a, b) if not a.signed else (b, a)
    if u.rank >= s.rank:
        return u
    if s.bits > u.bits:
        return s
    return unsigned_of(s)


def contains(t: Type, pred) -> bool:
    """Whether ``t`` or an element/field type it holds by value satisfies ``pred``
    (pointers are not followed: that is upstream's aspect rule)."""
    if pred(t):
        return True
    if t.is_array:
        return contains(t.elem, pred)
    if t.is_class:
        if t.base is not None and contains(t.base, pred):
            return True
        return any(contains(ft, pred) for _, ft in t.fields)
    return False
