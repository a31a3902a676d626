"""LLVM IR written as text, one instruction line at a time: the front end's IR writer.

The emitter used to build llvmlite.ir objects and print them; that was more
than half of the front end's time (an object per instruction, a name scope
walk per value, several formatting layers), for text LLVM then parses anyway.
Here each instruction becomes its line at once.  The module is still parsed
and verified by LLVM (``frontend.verify``), so every line is checked.

Types and values are small immutable records whose ``text``/``ref`` are LLVM's
spelling; a ``Value`` prints as the typed operand ``"<type> <ref>"``.
"""
from __future__ import annotations

import struct

from ..passes.ir.lexer import escaped_bytes, float_hex, quote_name
from .ir_attributes import quote


#: the longest local value name written (in UTF-8 at most 4x as many bytes, below LLVM's 1024)
LOCAL_NAME_CHARS = 200


def global_name(name: str) -> str:
    """``@name``, quoted when LLVM's lexer needs it."""
    return "@" + quote_name(name)


# ----------------------------------------------------------------------- types
class Type:
    """An LLVM type: ``kind`` is void, int, float, ptr, array or struct; ``elems``
    holds struct members, or ``(element, count)`` for arrays."""

    __slots__ = ("text", "kind", "bits", "elems")

    def __init__(self, text: str, kind: str, bits: int = 0, elems=None):
        self.text, self.kind, self.bits, self.elems = text, kind, bits, elems

    def __str__(self) -> str:
        return self.text

    @property
    def zero(self) -> str:
        """The spelling of this type's zero value."""
        k = self.kind
        return "0" if k == "int" else "0.0" if k == "float" else "null" if k == "ptr" else "zeroinitializer"

    def set_body(self, elems) -> None:
        """The members of an identified struct."""
        self.elems = tuple(elems)

    def element(self, index: int) -> "Type":
        return self.elems[0] if self.kind == "array" else self.elems[index]


_INTS: dict[int, Type] = {}


def int_type(bits: int) -> Type:
    t = _INTS.get(bits)
    if t is None:
        t = _INTS[bits] = Type(f"i{bits}", "int", bits)
    return t


VOID = Type("void", "void")
PTR = Type("ptr", "ptr", 64)
#: a pointer into work-group memory (SPIR's local address space)
PTR_LOCAL = Type("ptr addrspace(3)", "ptr", 64)
HALF, FLOAT, DOUBLE = Type("half", "float", 16), Type("float", "float", 32), Type("double", "float", 64)
I1, I8, I32, I64 = int_type(1), int_type(8), int_type(32), int_type(64)


def array_type(elem: Type, count: int) -> Type:
    return Type(f"[{count} x {elem.text}]", "array", elems=(elem, count))


def struct_type(elems) -> Type:
    """A literal (unnamed) struct type."""
    elems = tuple(elems)
    return Type("{ " + ", ".join(e.text for e in elems) + " }" if elems else "{}", "struct", elems=elems)


# ----------------------------------------------------------------------- values
class Value:
    """A typed operand: an instruction result, argument, global or constant."""

    __slots__ = ("type", "ref")

    def __init__(self, type: Type, ref: str):
        self.type, self.ref = type, ref

    def __str__(self) -> str:
        return f"{self.type.text} {self.ref}"


_FLOAT_PACK = {16: "e", 32: "f", 64: "d"}


def _float_text(bits: int, value: float) -> str:
    """The IEEE double bit pattern of ``value`` rounded to ``bits`` (LLVM's exact
    hexadecimal spelling; values too large for the type become infinity)."""
    try:
        value = struct.unpack(_FLOAT_PACK[bits], struct.pack(_FLOAT_PACK[bits], value))[0]
    except OverflowError:
        value = float("inf") if value > 0 else float("-inf")
    return float_hex(value)


def const(ty: Type, value) -> Value:
    """A scalar constant (``None`` gives the zero value of any type)."""
    if value is None:
        return Value(ty, ty.zero)
    if ty.kind == "int":
        if ty.bits == 1:
            return Value(ty, "true" if value else "false")
        return Value(ty, str(int(value)))
    if ty.kind == "float":
        return Value(ty, _float_text(ty.bits, float(value)))
    raise AssertionError(f"no scalar constant of type {ty}")


def const_aggregate(ty: Type, items) -> Value:
    """A struct or array constant from element constants."""
    body = ", ".join(str(v) for v in items)
    return Value(ty, ("[" + body + "]") if ty.kind == "array" else ("{ " + body + " }" if body else "{}"))


def const_bytes(data: bytes) -> Value:
    return Value(array_type(I8, len(data)), f'c"{escaped_bytes(data)}"')


NULL = Value(PTR, "null")


# ----------------------------------------------------------------------- functions
class Block:
    __slots__ = ("name", "lines", "terminated")

    def __init__(self, name: str):
        self.name, self.lines, self.terminated = name, [], False


class Function(Value):
    """A function declaration or definition; a ``ptr`` value (``@name``) itself."""

    __slots__ = ("name", "ret", "params", "var_arg", "linkage", "cconv", "attributes", "metadata",
                 "args", "blocks", "_used", "_counts", "_temps", "rendered")

    def __init__(self, name: str, ret: Type, params, var_arg: bool = False, arg_names=None):
        super().__init__(PTR, global_name(name))
        self.name, self.ret, self.params, self.var_arg = name, ret, list(params), var_arg
        self.linkage, self.cconv = "", ""
        self.attributes: list[str] = []      # enum names and rendered string attributes
        self.metadata: dict[str, str] = {}   # kind -> "!N"
        self.blocks: list[Block] = []
        self._used: set[str] = set()
        self._counts: dict[str, int] = {}
        self._temps = 0
        self.rendered: Rendered | None = None     # its text, written by a worker (``frontend.workers``)
        names = arg_names or [None] * len(self.params)
        self.args = [Value(t, "%" + (self.unique(n) if n else self.temp())) for t, n in zip(self.params, names)]

    def unique(self, name: str) -> str:
        """``name``, or ``name.N`` if taken (llvmlite's scheme); values and blocks share it.
        A long name is cut to ``LOCAL_NAME_CHARS`` first: LLVM cuts a local value's
        name at 1024 bytes, so two long names with one prefix would clash in its parser."""
        name = name[:LOCAL_NAME_CHARS]
        used = self._used
        if name not in used:
            used.add(name)
            return name
        n = self._counts.get(name, 0)
        while True:
            n += 1
            candidate = f"{name}.{n}"
            if candidate not in used:
                break
        self._counts[name] = n
        used.add(candidate)
        return candidate

    def temp(self) -> str:
        """A fresh unnamed value (``.N``: a leading dot never clashes with a source name)."""
        self._temps += 1
        return f".{self._temps}"

    def append_basic_block(self, name: str) -> Block:
        block = Block(self.unique(name))
        self.blocks.append(block)
        return block

    def text(self, group=None) -> str:
        """The ``define``/``declare``; ``group``: the module's ``attribute_group``
        (without one, attributes are written inline)."""
        if self.rendered is not None:
            return self.rendered.text(group)
        head = [self.linkage, self.cconv, self.ret.text] if self.blocks else [self.cconv, self.ret.text]
        if self.blocks:
            params = ", ".join(str(a) for a in self.args)
        else:
            params = ", ".join(t.text for t in self.params)
        if self.var_arg:
            params = params + ", ..." if params else "..."
        attrs = [group(self.attributes)] if group is not None and self.attributes else self.attributes
        md = [f"!{k} {v}" for k, v in self.metadata.items()]
        if not self.blocks:
            # a declaration's metadata comes first, as LLVM prints it (``declare !k !N ...``)
            line = " ".join(md + [x for x in head if x]) + f" {self.ref}({params})"
            return "declare " + line + (" " + " ".join(attrs) if attrs else "") + "\n"
        tail = " ".join(attrs + md)
        line = " ".join(x for x in head if x) + f" {self.ref}({params})" + (" " + tail if tail else "")
        body = [f"define {line} {{\n"]
        for block in self.blocks:
            body.append(f"{block.name}:\n")
            body.extend(block.lines)
        body.append("}\n")
        return "".join(body)


# ----------------------------------------------------------------------- builder
_ICMP_SIGNED = {"<": "slt", "<=": "sle", ">": "sgt", ">=": "sge", "==": "eq", "!=": "ne"}
_ICMP_UNSIGNED = {"<": "ult", "<=": "ule", ">": "ugt", ">=": "uge", "==": "eq", "!=": "ne"}
_FCMP_ORDERED = {"<": "olt", "<=": "ole", ">": "ogt", ">=": "oge", "==": "oeq", "!=": "one"}
_FCMP_UNORDERED = {"<": "ult", "<=": "ule", ">": "ugt", ">=": "uge", "==": "ueq", "!=": "une"}


class Builder:
    """Appends instructions to the end of one block of ``fn``."""

    __slots__ = ("fn", "block", "_lines")

    def __init__(self, fn: Function, block: Block):
        self.fn = fn
        self.position_at_end(block)

    def position_at_end(self, block: Block) -> None:
        self.block, self._lines = block, block.lines

    def _def(self, ty: Type, text: str, name: str = "") -> Value:
        fn = self.fn
        if name:
            ref = "%" + fn.unique(name)
        else:                               # ``fn.temp()``, inline: most values are temporaries
            fn._temps += 1
            ref = f"%.{fn._temps}"
        self._lines.append(f"  {ref} = {text}\n")
        return Value(ty, ref)

    def _do(self, text: str) -> None:
        self._lines.append(f"  {text}\n")

    def _terminate(self, text: str) -> None:
        self._do(text)
        self.block.terminated = True

    # memory
    def alloca(self, ty: Type, name: str = "") -> Value:
        return self._def(PTR, f"alloca {ty.text}", name)

    def load(self, ptr: Value, ty: Type, name: str = "", metadata: str = "") -> Value:
        return self._def(ty, f"load {ty.text}, {ptr.type.text} {ptr.ref}{metadata}", name)

    def store(self, value: Value, ptr: Value) -> None:
        self._do(f"store {value.type.text} {value.ref}, {ptr.type.text} {ptr.ref}")

    def gep(self, ptr: Value, indices, source: Type, name: str = "") -> Value:
        idx = ", ".join(str(i) for i in indices)
        return self._def(ptr.type, f"getelementptr inbounds {source.text}, {ptr.type.text} {ptr.ref}, {idx}", name)

    def load_atomic(self, ptr: Value, ty: Type, align: int) -> Value:
        return self._def(ty, f"load atomic {ty.text}, {ptr} seq_cst, align {align}")

    def store_atomic(self, value: Value, ptr: Value, align: int) -> None:
        self._do(f"store atomic {value}, {ptr} seq_cst, align {align}")

    def cmpxchg(self, ptr: Value, expected: Value, desired: Value) -> Value:
        ty = struct_type([expected.type, I1])
        return self._def(ty, f"cmpxchg {ptr}, {expected}, {desired} seq_cst seq_cst")

    def atomic_rmw(self, op: str, ptr: Value, value: Value) -> Value:
        return self._def(value.type, f"atomicrmw {op} {ptr}, {value} seq_cst")

    # arithmetic
    def binop(self, op: str, a: Value, b: Value) -> Value:
        return self._def(a.type, f"{op} {a}, {b.ref}")

    def neg(self, a: Value) -> Value:
        return self._def(a.type, f"sub {a.type.text} 0, {a.ref}")

    def fneg(self, a: Value) -> Value:
        return self._def(a.type, f"fneg {a}")

    def not_(self, a: Value) -> Value:
        return self._def(a.type, f"xor {a}, {'true' if a.type.bits == 1 else '-1'}")

    def icmp(self, op: str, a: Value, b: Value, signed: bool) -> Value:
        cond = (_ICMP_SIGNED if signed else _ICMP_UNSIGNED)[op]
        return self._def(I1, f"icmp {cond} {a}, {b.ref}")

    def fcmp(self, op: str, a: Value, b: Value, ordered: bool) -> Value:
        cond = (_FCMP_ORDERED if ordered else _FCMP_UNORDERED)[op]
        return self._def(I1, f"fcmp {cond} {a}, {b.ref}")

    def cast(self, op: str, a: Value, ty: Type) -> Value:
        return self._def(ty, f"{op} {a} to {ty.text}")

    # aggregates
    def extract_value(self, agg: Value, indices) -> Value:
        if isinstance(indices, int):
            indices = (indices,)
        ty = agg.type
        for i in indices:
            ty = ty.element(i)
        return self._def(ty, f"extractvalue {agg}, {', '.join(map(str, indices))}")

    def insert_value(self, agg: Value, value: Value, index: int) -> Value:
        return self._def(agg.type, f"insertvalue {agg}, {value}, {index}")

    # control flow
    def phi(self, ty: Type, incoming) -> Value:
        pairs = ", ".join(f"[ {v.ref}, %{b.name} ]" for v, b in incoming)
        return self._def(ty, f"phi {ty.text} {pairs}")

    def call(self, callee: Value, args, ret: Type | None = None, suffix: str = "", name: str = "") -> Value:
        """``call``; a ``Function`` callee brings its calling convention and type,
        a loaded pointer is a ``spir_func`` returning ``ret``.  ``suffix``:
        call-site attributes and metadata."""
        if ret is None:
            ret, cconv = callee.ret, callee.cconv
            fnty = ret.text
            if callee.var_arg:
                fnty += " (" + ", ".join(t.text for t in callee.params) + ", ...)"
        else:
            cconv, fnty = "spir_func", ret.text
        text = f"call {cconv + ' ' if cconv else ''}{fnty} {callee.ref}({', '.join(str(a) for a in args)}){suffix}"
        if ret.kind == "void":
            self._do(text)
            return Value(VOID, "")
        return self._def(ret, text, name)

    def branch(self, target: Block) -> None:
        self._terminate(f"br label %{target.name}")

    def cbranch(self, cond: Value, then: Block, other: Block) -> None:
        self._terminate(f"br i1 {cond.ref}, label %{then.name}, label %{other.name}")

    def ret(self, value: Value) -> None:
        self._terminate(f"ret {value}")

    def ret_void(self) -> None:
        self._terminate("ret void")


# ----------------------------------------------------------------------- module
class GlobalVariable(Value):
    """A global; ``attributes`` are rendered string attributes (device globals);
    ``addrspace`` 3 for work-group memory (its address is a ``PTR_LOCAL``)."""

    __slots__ = ("name", "value_type", "linkage", "constant", "unnamed_addr", "initializer",
                 "section", "align", "attributes", "addrspace", "metadata")

    def __init__(self, name: str, value_type: Type, addrspace: int = 0):
        super().__init__(PTR_LOCAL if addrspace == 3 else PTR, global_name(name))
        self.addrspace = addrspace
        self.name, self.value_type = name, value_type
        self.linkage, self.constant, self.unnamed_addr = "", False, False
        self.initializer: Value | None = None
        self.section, self.align = "", 0
        self.attributes: list[str] = []
        self.metadata: dict[str, str] = {}      # attachment kind -> "!N"

    def text(self, group=None) -> str:
        parts = [f"{self.ref} ="]
        if self.linkage:
            parts.append(self.linkage)
        elif self.initializer is None:
            parts.append("external")
        if self.unnamed_addr:
            parts.append("unnamed_addr")
        if self.addrspace:
            parts.append(f"addrspace({self.addrspace})")
        parts.append("constant" if self.constant else "global")
        parts.append(str(self.initializer) if self.initializer is not None else self.value_type.text)
        line = " ".join(parts)
        if self.section:
            line += f", section {quote(self.section)}"
        if self.align:
            line += f", align {self.align}"
        if self.attributes:
            line += " " + (group(self.attributes) if group is not None else " ".join(self.attributes))
        line += "".join(f", !{kind} {node}" for kind, node in self.metadata.items())
        return line + "\n"


class Rendered:
    """A global or function another process wrote (``frontend.workers``): its
    text, whose module-wide numbers are still placeholders, and ``resolve``,
    which puts them in given the module's ``attribute_group`` (groups are
    numbered in the order they are printed, as here)."""

    __slots__ = ("name", "is_function", "_text", "_resolve")

    def __init__(self, name: str, is_function: bool, text: str, resolve):
        self.name, self.is_function, self._text, self._resolve = name, is_function, text, resolve

    def text(self, group=None) -> str:
        return self._resolve(self._text, group)


class Module:
    """Identified types, globals, functions and metadata of one module, in the
    order they were made; ``str()`` is the module's IR text."""

    def __init__(self, name: str, triple: str, datalayout: str):
        self.name, self.triple, self.datalayout = name, triple, datalayout
        self.types: dict[str, Type] = {}
        self.globals: dict[str, Value] = {}
        self._md: dict[str, str] = {}          # node body -> "!N"
        self._groups: dict[str, str] = {}      # attribute list text -> "#N"
        self.named_metadata: dict[str, list[str]] = {}
        #: name -> body text of identified types another process made (``frontend.workers``)
        self.type_bodies: dict[str, str] = {}

    def identified_type(self, name: str) -> Type:
        """The named struct ``%name`` (opaque until ``set_body``)."""
        t = self.types.get(name)
        if t is None:
            t = self.types[name] = Type("%" + quote_name(name), "struct")
        return t

    def add(self, g):
        """Register a ``Function`` or ``GlobalVariable`` (names are unique per module)."""
        if g.name in self.globals:
            raise AssertionError(f"duplicate global @{g.name}")
        self.globals[g.name] = g
        return g

    def metadata(self, items) -> str:
        """``!N`` for the node ``!{items}`` (strings become ``!"..."``; equal nodes are shared)."""
        return self.metadata_body("!{" + ", ".join("!" + quote(x) if isinstance(x, str) else str(x) for x in items) + "}")

    def find_metadata(self, body: str) -> str | None:
        """``!N`` of the node written ``body`` if the module has it (None: it has not)."""
        return self._md.get(body)

    def metadata_body(self, body: str) -> str:
        """``!N`` for the node written ``body``."""
        ref = self._md.get(body)
        if ref is None:
            ref = self._md[body] = f"!{len(self._md)}"
        return ref

    def attribute_group(self, attributes: list[str]) -> str:
        """``#N`` for the attribute group ``{ attributes }`` (equal lists share one),
        the form LLVM prints: the IR layer reads attributes from groups, so the
        device-code checks can read this text without LLVM printing it."""
        body = " ".join(attributes)
        ref = self._groups.get(body)
        if ref is None:
            ref = self._groups[body] = f"#{len(self._groups)}"
        return ref

    def __str__(self) -> str:
        group = self.attribute_group
        out = [f"; ModuleID = {quote(self.name)}\n", f'target triple = "{self.triple}"\n',
               f'target datalayout = "{self.datalayout}"\n\n']
        for name, t in self.types.items():
            body = self.type_bodies.get(name) or ("opaque" if t.elems is None else struct_type(t.elems).text)
            out.append(f"{t.text} = type {body}\n")
        out.append("\n")
        functions = []
        for g in self.globals.values():
            if isinstance(g, Function) or (isinstance(g, Rendered) and g.is_function):
                functions.append(g)
            else:
                out.append(g.text(group))
        out.append("\n")
        for f in functions:
            out.append(f.text(group))
            out.append("\n")
        for body, ref in self._groups.items():
            out.append(f"attributes {ref} = {{ {body} }}\n")
        for name, refs in self.named_metadata.items():
            out.append(f"!{name} = !{{{', '.join(refs)}}}\n")
        for body, ref in self._md.items():
            out.append(f"{ref} = {body}\n")
        return "".join(out)
