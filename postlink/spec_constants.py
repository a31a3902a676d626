"""Specialization constants: upstream's ``SpecConstantsPass`` (``SpecConstants.cpp``)
as a post-link stage, and the property sets it feeds.

Input (what DPC++'s front end emits for ``kh.get_specialization_constant<id>()``,
and what minisycl's does): calls to

    T    @_Z37__sycl_getScalar2020SpecConstantValue...(ptr NAME, ptr ID, ptr BUF)
    void @_Z40__sycl_getComposite2020SpecConstantValue...(ptr sret(T) DST, ptr NAME, ptr ID, ptr BUF)
    T    @_Z40__sycl_getComposite2020SpecConstantValue...(ptr NAME, ptr ID, ptr BUF)   (small structs)

``NAME`` is a global ``c"<symbolic id>\\00"`` (the constant's unique name), ``ID``
the ``specialization_id`` global (its one field is the default value), ``BUF``
the run-time buffer of values (the ``kernel_handler``'s pointer, or ``null``).

Modes (``MODES``; ``post-link --spec-const``):

* ``native`` (``rt`` and ``native``): each distinct symbolic id gets numeric
  ids, one per scalar leaf of its type, in order of first use; a scalar read
  becomes ``__spirv_SpecConstant(i32 ID, T default)``, a composite one a tree
  of those joined by ``__spirv_SpecConstantComposite(elements...)`` (mangled
  as upstream mangles them).  Descriptors: per leaf ``(ID, offset, size)``
  relative to the constant, plus ``(0xFFFFFFFF, offset, size)`` for padding at
  the end of a struct.
* ``emulation`` (``default`` and ``emulation``): each distinct constant gets
  one id and a place in one buffer, aligned to its type (the padding is
  appended to the previous constant as a ``(0xFFFFFFFF, prev size, padding)``
  descriptor); a read becomes a load from ``BUF + offset``.
* ``default_values``: a read becomes the default value itself (the images of
  ``-generate-device-image-default-spec-consts``); no descriptors.

The module gets upstream's named metadata ``!sycl.specialization-constants``
(``!{!"symbolic id", i32 ID, i32 offset, i32 size, ...}``) and
``!sycl.specialization-constants-default-values`` (``!{T default}``, with
``!{[N x i8] zeroinitializer}`` for emulation padding), and the image the sets
``[SYCL/specialization constants]`` (key: symbolic id; value: the byte array of
the descriptors' uint32 triples) and ``[SYCL/specialization constants default
values]`` (key ``all``: the default values' bytes, as the buffer lays them out).

A read whose operands are not of that shape, a symbolic id used with two
types, or a type that cannot be laid out is a ``SpecConstError`` (the tool's
exit status 1), never an internal error.  The ``specialization_id`` globals
stay (debug information may name them); declarations of the read functions
that no longer have calls go.  Undefined (``undef``) parts of a default value
count as zero bytes; minisycl's front end never writes them.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

from ..passes.ir import Function, Module, quote_name, split_operands, split_type
from ..passes.ir.lexer import closing, escaped_bytes, tokens
from .image import Image, SplitError
from ..passes.ir.layout import Layout, LayoutError, aggregate_elements as _aggregate_elements
from .propertyset import PropertySets, byte_array
from ..passes.support.ir_contract import MISC_PROPERTIES, SPEC_CONSTANTS, SPEC_CONSTANTS_DEFAULTS

__all__ = ["MODES", "SpecConstError", "SpecConstants",
           "lower_spec_constants", "has_spec_constants", "apply_spec_constants", "PADDING_ID",
           "REPLACED_WITH_DEFAULT"]

REPLACED_WITH_DEFAULT = "specConstsReplacedWithDefault"
SCALAR = "_Z37__sycl_getScalar2020SpecConstantValue"
COMPOSITE = "_Z40__sycl_getComposite2020SpecConstantValue"
MD_CONSTANTS = "sycl.specialization-constants"
MD_DEFAULTS = "sycl.specialization-constants-default-values"
#: an LLVM integer type
_INTEGER = re.compile(r"i\d+")
#: the descriptor id of padding, which the runtime skips
PADDING_ID = 0xFFFFFFFF
#: ``--spec-const`` value -> the pass's handling mode
MODES = {"rt": "native", "native": "native", "default": "emulation", "emulation": "emulation"}

_CALL_HEAD = re.compile(r'^(\s*)(?:(%[-a-zA-Z$._0-9]+|%"[^"]*") = )?(?:(?:tail|musttail|notail) )?call ')
_ATTR_WORDS = frozenset("noundef nonnull noalias nocapture readonly writeonly signext zeroext inreg returned "
                        "immarg".split())


class SpecConstError(SplitError):
    """A module whose specialization-constant reads are malformed."""


@dataclass
class SpecConstants:
    """What the pass found: per symbolic id its descriptors ``(id, offset, size)``
    (in order of first use), and the default values' bytes (the buffer's layout)."""
    descriptors: dict[str, list[tuple[int, int, int]]] = field(default_factory=dict)
    defaults: bytes = b""
    #: symbolic id -> (offset in the buffer, size, LLVM type); emulation only
    places: dict[str, tuple[int, int, str]] = field(default_factory=dict)

    def properties(self) -> PropertySets:
        props = PropertySets()
        for sym, descs in self.descriptors.items():
            props.add(SPEC_CONSTANTS, sym, byte_array(b"".join(struct.pack("<III", *d) for d in descs)))
        if self.descriptors:
            props.add(SPEC_CONSTANTS_DEFAULTS, "all", byte_array(self.defaults))
        return props


def _reader_functions(module: Module) -> list[str]:
    return [n for n, f in module.functions.items() if f.is_declaration and n.startswith((SCALAR, COMPOSITE))]


def has_spec_constants(module: Module) -> bool:
    """Whether some function of ``module`` reads a specialization constant."""
    readers = _reader_functions(module)
    if not readers:
        return False
    pattern = [f"@{quote_name(r)}(" for r in readers]
    return any(f.body and any(p in f.body for p in pattern) for f in module.functions.values())


@dataclass
class _Call:
    """One read: where it is, what it names, how its result is delivered."""
    indent: str
    result: str | None          # %name of the value (scalar / by-value composite)
    sret: str | None            # the destination pointer operand (sret composite)
    ty: str                     # the constant's LLVM type
    symbol: str
    default: str                # the default value's constant text (typed by ``ty``)
    buffer: str                 # the buffer operand's value text
    buffer_type: str = "ptr"    # its pointer type (``ptr addrspace(4)`` in SPIR modules)
    sret_type: str = "ptr"      # the sret operand's pointer type


def _operand_value(op: str) -> tuple[str, str]:
    """(type, value) of a call operand: ``ptr noundef align 4 %x`` -> (``ptr``, ``%x``)."""
    ty, rest = split_type(op.strip())
    toks = rest.split()
    i = 0
    while i < len(toks):
        word = toks[i]
        if word in _ATTR_WORDS:
            i += 1
        elif word == "align" and i + 1 < len(toks):
            i += 2
        elif re.match(r'(sret|byval|byref|dereferenceable|dereferenceable_or_null|elementtype|noundef)\(', word):
            # attributes with a (possibly spaced) argument: skip to the matching ')'
            depth = 0
            while i < len(toks):
                depth += toks[i].count("(") - toks[i].count(")")
                i += 1
                if depth <= 0:
                    break
        else:
            break
    return ty.strip(), " ".join(toks[i:])


def _first_global(text: str) -> str | None:
    m = re.search(r'@("(?:[^"\\]|\\.)*"|[-a-zA-Z$._0-9]+)', text)
    if m is None:
        return None
    name = m.group(1)
    return name[1:-1] if name.startswith('"') else name


class _Lowering:
    def __init__(self, module: Module, mode: str):
        self.module, self.mode = module, mode
        self.layout = Layout(module.types)
        self.result = SpecConstants()
        self.types: dict[str, str] = {}              # symbolic id -> type (one type per id)
        self.ids: dict[str, list[int]] = {}          # native: symbolic id -> leaf ids
        self.next_id = 0
        self.next_offset = 0
        self.defaults_md: list[str] = []
        self.defaults = bytearray()
        self.new_decls: dict[str, str] = {}
        self.counter = 0

    # -- reading a call ------------------------------------------------------------

    def _string_of(self, op: str, where: str) -> str:
        name = _first_global(op)
        g = self.module.globals.get(name) if name else None
        m = re.search(r'c"((?:[^"\\]|\\[0-9A-Fa-f]{2}|\\\\)*)"', g.line) if g is not None else None
        if m is None:
            raise SpecConstError(f"{where}: the symbolic id operand '{op.strip()[:80]}' is not a constant string")
        raw = bytearray()
        text, i = m.group(1), 0
        while i < len(text):
            if text[i] == "\\":
                raw.append(int(text[i + 1:i + 3], 16) if text[i + 1] != "\\" else 0x5C)
                i += 3 if text[i + 1] != "\\" else 2
            else:
                raw.append(ord(text[i]))
                i += 1
        if raw.endswith(b"\0"):
            raw = raw[:-1]
        try:
            return raw.decode()
        except UnicodeDecodeError:
            raise SpecConstError(f"{where}: the symbolic id is not UTF-8 text") from None

    def _default_of(self, op: str, ty: str, where: str) -> str:
        name = _first_global(op)
        g = self.module.globals.get(name) if name else None
        if g is None or g.is_declaration or g.initializer() is None:
            raise SpecConstError(f"{where}: the specialization_id operand '{op.strip()[:80]}' is not a defined "
                                 f"global variable")
        start, end = g.initializer()
        init = g.line[start:end].strip()
        vt = self.layout.resolve(g.value_type)
        if not (vt.startswith("{") or vt.startswith("<{")):
            raise SpecConstError(f"{where}: @{name} is not a specialization_id (its type '{g.value_type}' is not "
                                 f"a struct holding the default value)")
        fields = split_operands(vt[2:-2] if vt.startswith("<{") else vt[1:-1])
        if not fields:
            raise SpecConstError(f"{where}: @{name} holds no default value")
        held, read = self.layout.resolve(fields[0]), self.layout.resolve(ty)
        if held != read and not (_INTEGER.fullmatch(held) and _INTEGER.fullmatch(read)):
            # (integers of other widths are read as upstream reads them: a bool is an i8 read as i1)
            raise SpecConstError(f"{where}: @{name} holds a default value of type '{fields[0].strip()}', but the "
                                 f"read returns '{ty}'")
        if init in ("zeroinitializer", "undef", "poison"):
            return init
        elems = _aggregate_elements(vt, init)
        if not elems:
            raise SpecConstError(f"{where}: @{name} holds no default value")
        return elems[0][1]

    def read_call(self, line: str, reader: Function, where: str) -> _Call:
        head = _CALL_HEAD.match(line)
        at = line.find(f"@{quote_name(reader.name)}(")
        if head is None or at < 0:
            raise SpecConstError(f"{where}: a use of @{reader.name} that is not a direct call: {line.strip()[:100]}")
        toks = tokens(line[at:])
        paren = next(i for i, t in enumerate(toks) if t[0] == "(")
        end = closing(toks, paren)
        args = split_operands(line[at + toks[paren][2]:at + toks[end - 1][1]])
        sret_param = re.search(r'sret\(([^)]*)\)', reader.params or "")
        composite = reader.name.startswith(COMPOSITE)
        if sret_param is not None:
            if not composite:
                raise SpecConstError(f"{where}: @{reader.name} returns a scalar but takes an sret pointer")
            ty = sret_param.group(1).strip()
            dst_type, dst = _operand_value(args[0]) if args else ("ptr", "")
            rest = args[1:]
        else:
            ty = reader.return_type.strip()
            for attr in ("zeroext ", "signext ", "noundef ", "inreg "):
                ty = ty.replace(attr, "")
            ty = ty.strip()
            dst, dst_type = None, "ptr"
            rest = args
            if ty == "void":
                raise SpecConstError(f"{where}: @{reader.name} returns nothing and has no sret parameter")
            if composite != self.layout.is_aggregate(ty):
                kind = "composite" if composite else "scalar"
                raise SpecConstError(f"{where}: @{reader.name} reads a {kind} specialization constant but "
                                     f"its type is '{ty}'")
        if len(rest) != 3:
            raise SpecConstError(f"{where}: @{reader.name} takes 3 operands (name, specialization_id, buffer) "
                                 f"besides the result, got {len(rest)}")
        if dst is None and head.group(2) is None:
            raise SpecConstError(f"{where}: the result of @{reader.name} is not used as a value: "
                                 f"{line.strip()[:100]}")
        symbol = self._string_of(rest[0], where)
        default = self._default_of(rest[1], ty, where)
        buffer_type, buffer = _operand_value(rest[2])
        known = self.types.setdefault(symbol, ty)
        if self.layout.resolve(known) != self.layout.resolve(ty):
            raise SpecConstError(f"{where}: specialization constant '{symbol}' is read as '{ty}' here and as "
                                 f"'{known}' elsewhere")
        return _Call(head.group(1), head.group(2), dst, ty, symbol, default, buffer, buffer_type, dst_type)

    # -- writing the replacement --------------------------------------------------------

    def fresh(self, body: str) -> str:
        while True:
            self.counter += 1
            name = f"%spec.const.{self.counter}"
            if name + " " not in body and name + "," not in body and name + ")" not in body:
                return name

    def _register(self, call: _Call) -> int | None:
        """First sight of a constant: ids, descriptors, defaults.  Returns its buffer offset (emulation)."""
        if self.mode == "default_values":
            return None
        sym, ty = call.symbol, call.ty
        new = sym not in self.result.descriptors
        if self.mode == "emulation":
            if new:
                size = self.layout.store_size(ty)
                align = self.layout.align(ty)
                offset = self.next_offset
                if offset % align:
                    padding = align - offset % align
                    offset += padding
                    last = next(reversed(self.result.descriptors))
                    prev = self.result.descriptors[last]
                    prev.append((PADDING_ID, prev[0][2], padding))
                    self.defaults_md.append(f"!{{[{padding} x i8] zeroinitializer}}")
                    self.defaults += bytes(padding)
                self.result.descriptors[sym] = [(self.next_id, 0, size)]
                self.result.places[sym] = (offset, size, ty)
                self.next_id += 1
                self.next_offset = offset + size
                self._add_default(call)
            return self.result.places[sym][0]
        if new:
            leaves = self.layout.leaves(ty, call.default)
            self.ids[sym] = list(range(self.next_id, self.next_id + len(leaves)))
            self.next_id += len(leaves)
            self.result.descriptors[sym] = self._native_descriptors(ty, self.ids[sym])
            self._add_default(call)
        return None

    def _native_descriptors(self, ty: str, ids: list[int]) -> list[tuple[int, int, int]]:
        out: list[tuple[int, int, int]] = []
        it = iter(ids)

        def walk(t: str, offset: int) -> int:
            if not self.layout.is_aggregate(t):
                size = self.layout.store_size(t)
                out.append((next(it), offset, size))
                return offset + size
            body = self.layout.resolve(t)
            fields = self.layout.field_offsets(t)
            if body.startswith("{") or body.startswith("<{"):
                end = offset
                for ft, fo in fields:
                    end = walk(ft, offset + fo)
                total = self.layout.size_align(t)[0]
                if offset + total > end:
                    out.append((PADDING_ID, end, offset + total - end))
                return offset + total
            end = offset
            for ft, _ in fields:
                end = walk(ft, end)
            return end

        walk(ty, 0)
        return out

    def _add_default(self, call: _Call) -> None:
        self.defaults_md.append(f"!{{{call.ty} {call.default}}}")
        try:
            self.defaults += self.layout.constant_bytes(call.ty, call.default)
        except LayoutError as err:
            raise SpecConstError(f"specialization constant '{call.symbol}': {err}") from None

    def replacement(self, call: _Call, body: str) -> tuple[list[str], str | None]:
        """The lines replacing one read, and (default_values) the constant to substitute for its result."""
        offset = self._register(call)
        ind = call.indent
        align = self.layout.align(call.ty)
        lines: list[str] = []
        if self.mode == "default_values":
            value = self._typed_default(call)
            if call.sret is not None:
                return [f"{ind}store {call.ty} {value}, {call.sret_type} {call.sret}, align {align}"], None
            return [], value
        if self.mode == "emulation":
            gep = self.fresh(body)
            is_bool = call.ty == "i1"
            target = call.result if call.sret is None and not is_bool else self.fresh(body)
            lines.append(f"{ind}{gep} = getelementptr i8, {call.buffer_type} {call.buffer}, i32 {offset}")
            lines.append(f"{ind}{target} = load {'i8' if is_bool else call.ty}, {call.buffer_type} {gep}, "
                         f"align {align}")
            value = target
            if is_bool:
                value = call.result if call.sret is None else self.fresh(body)
                lines.append(f"{ind}{value} = trunc i8 {target} to i1")
        else:
            value = self._native_value(call.ty, call.default, iter(self.ids[call.symbol]), lines, ind, body,
                                       call.result if call.sret is None else None)
        if call.sret is not None:
            lines.append(f"{ind}store {call.ty} {value}, {call.sret_type} {call.sret}, align {align}")
        return lines, None

    def _typed_default(self, call: _Call) -> str:
        d = call.default
        if call.ty == "i1":                     # the default of a bool is an i8 in memory
            return "false" if d in ("0", "false", "zeroinitializer", "undef", "poison") else "true"
        return d

    def _native_value(self, ty: str, default: str, ids, lines: list[str], ind: str, body: str,
                      name: str | None) -> str:
        target = name or self.fresh(body)
        if not self.layout.is_aggregate(ty):
            d = default
            arg_ty = ty
            if d in ("zeroinitializer", "undef", "poison"):
                d = _zero_of(ty)
            if ty == "i1":                      # the call returns i8, as upstream's, then trunc
                wide = self.fresh(body)
                fn = self._declare("__spirv_SpecConstant", "i8", ["i32", "i8"])
                lines.append(f"{ind}{wide} = call i8 @{fn}(i32 {next(ids)}, i8 {_bool_byte(d)})")
                lines.append(f"{ind}{target} = trunc i8 {wide} to i1")
                return target
            fn = self._declare("__spirv_SpecConstant", ty, ["i32", arg_ty])
            lines.append(f"{ind}{target} = call {ty} @{fn}(i32 {next(ids)}, {ty} {d})")
            return target
        fields = self.layout.field_offsets(ty)
        if default in ("zeroinitializer", "undef", "poison"):
            elems = [(ft, default) for ft, _ in fields]
        else:
            elems = [(et or ft, ev) for (ft, _), (et, ev) in zip(fields, _aggregate_elements(self.layout.resolve(ty),
                                                                                              default))]
        values = [(et, self._native_value(et, ev, ids, lines, ind, body, None)) for et, ev in elems]
        fn = self._declare("__spirv_SpecConstantComposite", ty, [t for t, _ in values])
        args = ", ".join(f"{t} {v}" for t, v in values)
        lines.append(f"{ind}{target} = call {ty} @{fn}({args})")
        return target

    def _declare(self, base: str, ret: str, params: list[str]) -> str:
        name = f"_Z{len(base)}{base}" + "".join(self._mangle(p) for p in params)
        if self.layout.is_aggregate(ret):
            name += "_R" + self._mangle(ret)
        if name not in self.new_decls:
            self.new_decls[name] = f"declare {ret} @{quote_name(name)}({', '.join(params)})"
        return quote_name(name)

    def _mangle(self, ty: str) -> str:
        t = ty.strip()
        if t.startswith("%"):
            name = t[1:]
            return name[1:-1] if name.startswith('"') else name
        simple = {"float": "f", "double": "d", "half": "Dh", "i1": "b", "i8": "a", "i16": "s", "i32": "i",
                  "i64": "x"}
        if t in simple:
            return simple[t]
        if t.startswith("["):
            n, _, e = t[1:-1].partition(" x ")
            return f"A{n.strip()}_" + self._mangle(e)
        if t.startswith("<") and not t.startswith("<{"):
            n, _, e = t[1:-1].partition(" x ")
            return f"Dv{n.strip()}_" + self._mangle(e)
        raise SpecConstError(f"a specialization constant of the unnamed type '{t}' cannot be lowered to "
                             f"__spirv_SpecConstantComposite (name the struct type)")

    # -- the whole module -----------------------------------------------------------------

    def run(self) -> SpecConstants:
        readers = {n: self.module.functions[n] for n in _reader_functions(self.module)}
        if not readers:
            return self.result
        needles = {f"@{quote_name(n)}(": f for n, f in readers.items()}
        for fname, fn in list(self.module.functions.items()):
            if fn.body is None or not any(k in fn.body for k in needles):
                continue
            out_lines: list[str] = []
            substitutions: dict[str, str] = {}
            body = fn.body
            for line in body.split("\n"):
                reader = next((f for k, f in needles.items() if k in line), None)
                if reader is None:
                    out_lines.append(line)
                    continue
                call = self.read_call(line, reader, f"@{fname}")
                try:
                    lines, value = self.replacement(call, body)
                except LayoutError as err:
                    raise SpecConstError(f"@{fname}: specialization constant '{call.symbol}': {err}") from None
                out_lines.extend(lines)
                if value is not None:
                    substitutions[call.result] = value
            new_body = "\n".join(out_lines)
            for name, value in substitutions.items():
                new_body = re.sub(re.escape(name) + r'(?![-a-zA-Z$._0-9])', lambda _m, v=value: v, new_body)
            self.module.functions[fname] = Function(fname, fn.header, new_body)
        self.module.drop(list(readers))
        if self.new_decls:
            self.module.add_entities("\n".join(self.new_decls.values()) + "\n")
        if self.mode != "default_values":
            nodes = [self.module.add_metadata_node([f'!"{_md_string(s)}"'] + [f"i32 {_i32(v)}" for d in descs for v in d])
                     for s, descs in self.result.descriptors.items()]
            self.module.named_metadata[MD_CONSTANTS] = f"!{MD_CONSTANTS} = !{{{', '.join(nodes)}}}"
            defaults = [self.module.add_metadata_node([d[2:-1]]) for d in self.defaults_md]
            self.module.named_metadata[MD_DEFAULTS] = f"!{MD_DEFAULTS} = !{{{', '.join(defaults)}}}"
        self.result.defaults = bytes(self.defaults)
        self.module._changed()
        return self.result


def _i32(v: int) -> int:
    """``v`` as LLVM prints an ``i32`` (signed: the padding id is ``-1``)."""
    return v - (1 << 32) if v >= 1 << 31 else v


def _zero_of(ty: str) -> str:
    return "0.000000e+00" if ty in ("half", "float", "double") else "null" if ty == "ptr" else "0"


def _bool_byte(d: str) -> str:
    return "0" if d in ("0", "false") else "1"


def _md_string(s: str) -> str:
    return escaped_bytes(s.encode())


def lower_spec_constants(module: Module, mode: str) -> SpecConstants:
    """Lower every specialization-constant read of ``module`` (edited in place) in
    ``mode`` (``native``, ``emulation`` or ``default_values``)."""
    if mode not in ("native", "emulation", "default_values"):
        raise SpecConstError(f"unknown specialization constant mode '{mode}'")
    return _Lowering(module, mode).run()


def apply_spec_constants(images: list[Image], spec_const: str | None, default_images: bool) -> list[Image]:
    """``--spec-const`` and ``-generate-device-image-default-spec-consts`` on the
    split images, in upstream's order: each image that reads specialization
    constants is followed by its copy with the defaults folded in (misc
    property ``specConstsReplacedWithDefault``)."""
    from .properties import in_upstream_order
    out: list[Image] = []
    for im in images:
        extra = None
        if default_images and not im.dummy and has_spec_constants(im.module):
            copy = im.module.copy()
            lower_spec_constants(copy, "default_values")
            props = PropertySets()
            for name, entries in im.properties.sets.items():
                for key, (_, value) in entries.items():
                    props.add(name, key, value)
            props.add(MISC_PROPERTIES, REPLACED_WITH_DEFAULT, 1)
            extra = Image(copy, list(im.entry_points), im.key, in_upstream_order(props))
        if spec_const is not None:
            found = lower_spec_constants(im.module, MODES[spec_const])
            if found.descriptors:
                im.properties = in_upstream_order(im.properties, found.properties())
        out.append(im)
        if extra is not None:
            out.append(extra)
    return out
