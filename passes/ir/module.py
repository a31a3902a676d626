"""The IR toolkit every pass and the post-link step share.

llvmlite.binding parses, verifies, links and prints LLVM IR but cannot rewrite a
function; llvmlite.ir builds IR but has no parser.  This module edits a module at
the level of its top-level entities on LLVM's own canonical printing
(``../shared/design/architecture.md``, "Working on IR"):

1. ``load`` hands the input (``.ll`` text or ``.bc``) to LLVM, which parses and
   verifies it and prints it canonically; a bad input is an ``IRError``.
2. ``Module.parse`` cuts that text into entities: type definitions, comdats,
   globals, functions, attribute groups, named metadata and metadata nodes.
   Facts about an entity (its references, direct calls, attributes, metadata)
   are computed from its own text the first time they are asked for.
3. Edits replace whole entities (entities are never changed in place, so
   extracted modules can share them).
4. ``Module.verify`` prints the entities and hands them back to LLVM.

``Module.extract`` builds a module from some definitions and the declarations
they need; it reads only those entities and what they reference, so its cost
is proportional to the part, not to the whole module.
"""
from __future__ import annotations

import functools
import re
from typing import Iterable

from .bridge import IRError, in_background, parse_and_verify

__all__ = ["Module", "Function", "Global", "quote_name", "unquote_name", "split_operands",
           "parse_attribute_group", "split_type", "Excluding", "USED_LISTS", "DISCARDABLE_LINKAGES", "INDIRECT_CALL_ATTRS"]


# --- lexical helpers ---------------------------------------------------------------

_NAME = r'(?:"[^"]*"|[-\w$.]+)'
_ENTITY = re.compile(r'^(?:(define [^\n@]*@(' + _NAME + r')\([^\n]*)\n((?:[^}\n][^\n]*\n|\n)*\}\n)'
                     r'|(declare [^\n@]*@(' + _NAME + r')\([^\n]*)\n|([^\s;\n][^\n]*)\n)', re.M)
_REF = re.compile(r'@(' + _NAME + ')')
_STRING_CONST = re.compile(r'c"[^"]*"')
INDIRECT_CALL_ATTRS = re.compile(r'\b(?:call|invoke) [^\n]*?%' + _NAME + r'\([^\n]*\) (#\d+)')
_FN_NAME = re.compile(r'@(' + _NAME + r')\(')
_MD_ATTACH = re.compile(r'!([A-Za-z_.$][-\w.$]*) (!\d+)')
_MD_REF = re.compile(r'!(\d+)')
_COMDAT = re.compile(r'\bcomdat(?:\((\$' + _NAME + r')\))?')
_LOCAL_OR_TYPE = re.compile(r'%(?:"[^"]*"|[-\w$.]+)')
_ATTR_REF = re.compile(r'#(\d+)')
_ATTR_TOKEN = re.compile(r'"[^"]*"(?:="[^"]*")?|[A-Za-z_][\w.]*(?:\([^)]*\))?(?:=\d+)?')
_LINKAGES = frozenset("private internal available_externally linkonce weak common appending extern_weak "
                      "linkonce_odr weak_odr external".split())
DISCARDABLE_LINKAGES = frozenset("private internal available_externally linkonce linkonce_odr".split())
_CALLING_CONVS = frozenset("ccc fastcc coldcc spir_func spir_kernel amdgpu_kernel ptx_kernel ptx_device "
                           "x86_stdcallcc x86_fastcallcc swiftcc tailcc".split())
_KERNEL_CC = frozenset(("spir_kernel", "amdgpu_kernel", "ptx_kernel"))
_GROUP_PLACE = re.compile(r'((?: (?:local_)?unnamed_addr)?(?: addrspace\(\d+\))?)')
_PLAIN_NAME = re.compile(r'[-a-zA-Z$._][-\w$.]*\Z')


def quote_name(name: str) -> str:
    """LLVM's spelling of a global name (``foo`` or ``"a b"``), without the sigil."""
    if _PLAIN_NAME.match(name):
        return name
    return '"' + "".join(ch if 32 <= ord(ch) < 127 and ch not in '"\\' else
                         "".join(f"\\{b:02X}" for b in ch.encode()) for ch in name) + '"'


def unquote_name(token: str) -> str:
    if not token.startswith('"'):
        return token
    raw = token[1:-1]
    if "\\" not in raw:
        return raw
    return re.sub(rb'\\([0-9A-Fa-f]{2})', lambda m: bytes([int(m.group(1), 16)]),
                  raw.encode("latin-1", "backslashreplace")).decode("utf-8", "replace")


def split_operands(text: str) -> list[str]:
    """Split ``a, {b, c}, d`` at top-level commas (brackets and strings respected)."""
    out, depth, start, in_str = [], 0, 0, False
    for i, ch in enumerate(text):
        if ch == '"':
            in_str = not in_str
        elif in_str:
            continue
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    last = text[start:].strip()
    if last:
        out.append(last)
    return out


def _close_paren(text: str, open_at: int) -> int:
    """Index of the parenthesis closing the one at ``open_at``."""
    close = text.find(")", open_at)
    if close > 0 and text.find("(", open_at + 1, close) < 0 and text.find('"', open_at, close) < 0:
        return close                        # the common case: no nested parentheses
    depth, in_str = 0, False
    for i in range(open_at, len(text)):
        ch = text[i]
        if ch == '"':
            in_str = not in_str
        elif in_str:
            continue
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
    raise IRError(f"unbalanced parentheses in: {text[:80]}")


@functools.lru_cache(maxsize=4096)
def _parse_group(text: str) -> tuple:
    return tuple(parse_attribute_group(text).items())


def parse_attribute_group(text: str) -> dict[str, str | None]:
    """``noinline "k"="v" "flag"`` → ``{"noinline": None, "k": "v", "flag": ""}``.

    Enum attributes map to ``None``; string attributes to their (unescaped) value.
    """
    out: dict[str, str | None] = {}
    for tok in _ATTR_TOKEN.findall(text):
        if tok.startswith('"'):
            key, _, value = tok.partition("=")
            out[unquote_name(key)] = unquote_name(value) if value else ""
        else:
            out[tok] = None
    return out


def _render_attributes(attrs: dict[str, str | None]) -> str:
    """LLVM's printing of an attribute group: enum attributes first (in the order
    given, which is LLVM's own when they came from its printing), then string
    attributes sorted by key, as ``AttributeSet`` orders them."""
    parts = []
    ordered = [k for k, v in attrs.items() if v is None] + sorted(k for k, v in attrs.items() if v is not None)
    for key in ordered:
        value = attrs[key]
        if value is None:
            parts.append(key)
        else:
            q = '"' + quote_name(key).strip('"') + '"'
            parts.append(q if value == "" else f'{q}="{quote_name(value).strip(chr(34))}"')
    return " ".join(parts)


# --- entities --------------------------------------------------------------------


class Function:
    """One function definition or declaration, as LLVM printed it.

    ``header`` is the ``define ...{`` / ``declare ...`` line; ``body`` the rest
    of a definition (up to and including the closing ``}``), ``None`` for a
    declaration.  Everything else is derived from these two strings on demand.
    """

    __slots__ = ("name", "header", "body", "_info", "_groups", "_md", "_refs", "_calls", "_icall_attrs")
    kind = "function"

    def __init__(self, name: str, header: str, body: str | None):
        self.name, self.header, self.body = name, header, body
        self._info = self._groups = self._md = self._refs = self._calls = self._icall_attrs = None

    @property
    def is_declaration(self) -> bool:
        return self.body is None

    def text(self) -> str:
        return self.header + "\n" + (self.body or "")

    def _parse_header(self):
        """(prefix words, params, tail, attribute groups, metadata attachments)."""
        if self._info is None:
            h = self.header
            at = h.index("@")           # nothing before the name has an "@"
            opening = h.index('"', at + 2) + 1 if h[at + 1] == '"' else h.index("(", at)
            close = _close_paren(h, opening)
            words, params, tail = h[:at].split(), h[opening:close + 1], h[close + 1:]
            groups = [int(n) for n in _ATTR_REF.findall(tail)] if "#" in tail else []
            md_text = tail if self.body is not None else h[:at]
            md = dict(_MD_ATTACH.findall(md_text)) if "!" in md_text else {}
            self._info = (words, params, tail, groups, md)
        return self._info

    @property
    def prefix_words(self) -> list[str]:
        """Words before the name: ``define``/``declare``, linkage, calling convention, return type..."""
        return self._parse_header()[0]

    @property
    def params(self) -> str:
        return self._parse_header()[1]

    @property
    def tail(self) -> str:
        """What follows the parameter list: attributes, comdat, metadata, ``{``."""
        return self._parse_header()[2]

    @property
    def attribute_groups(self) -> list[int]:
        if self._groups is None:
            h = self.header
            # without quoted names, a "#" can only be a function attribute group
            self._groups = [int(n) for n in _ATTR_REF.findall(h)] if '"' not in h else self._parse_header()[3]
        return self._groups

    @property
    def metadata(self) -> dict[str, str]:
        """Function metadata attachments: kind → ``!N``."""
        if self._md is None:
            h = self.header
            # without quoted names, "!kind !N" can only be an attachment
            self._md = (dict(_MD_ATTACH.findall(h)) if "!" in h else {}) if '"' not in h else self._parse_header()[4]
        return self._md

    @property
    def linkage(self) -> str:
        h = self.header
        start = h.index(" ") + 1                   # the word after define/declare
        second = h[start:h.find(" ", start)]
        return second if second in _LINKAGES else "external"

    @property
    def calling_conv(self) -> str:
        for w in self.prefix_words:
            if w in _CALLING_CONVS or w.startswith("cc"):
                return w
        return "ccc"

    @property
    def is_kernel(self) -> bool:
        h = self.header
        return h.find("_kernel ", 0, h.index("@")) >= 0 and not _KERNEL_CC.isdisjoint(self.prefix_words)

    @property
    def return_type(self) -> str:
        """The return type as printed (``void``, ``i32``, ``{ i32, ptr }`` ...)."""
        h = self.header
        before = h[:_FN_NAME.search(h).start()].rstrip()
        # the last "word" before the name, unless it is a bracketed literal type
        if before.endswith(("}", "]", ">")):
            closer = before[-1]
            opener = {"}": "{", "]": "[", ">": "<"}[closer]
            depth = 0
            for i in range(len(before) - 1, -1, -1):
                if before[i] == closer:
                    depth += 1
                elif before[i] == opener:
                    depth -= 1
                    if depth == 0:
                        return before[i - 1 if i > 0 and before[i - 1] == "<" else i:]
        return before.rsplit(" ", 1)[-1]

    def refs(self) -> list[str]:
        """Names of the globals and functions this function mentions (ordered, unique)."""
        if self._refs is None:
            body = self.body or ""
            names = _REF.findall(body)
            if self.header.count("@") > 1 and "@" in self.tail:     # personality, prefix and prologue data
                names = _REF.findall(self.tail) + names
            self._refs = _names(names, '@"' in body or '@"' in self.header, self.name)
        return self._refs

    def calls(self) -> list[str]:
        """Direct callees, in order of first call (a name followed by ``(`` is a
        call: constant expressions never put a global right before a parenthesis)."""
        if self._calls is None:
            body = self.body or ""
            self._calls = _names(_FN_NAME.findall(body), '@"' in body)
        return self._calls

    def indirect_call_attribute_groups(self) -> list[int]:
        """Attribute groups on indirect call sites (how ``"virtual-call"`` is found)."""
        if self._icall_attrs is None:
            self._icall_attrs = [] if self.body is None or "#" not in self.body else \
                [int(g[1:]) for g in INDIRECT_CALL_ATTRS.findall(self.body)]
        return self._icall_attrs


def _names(tokens: list[str], quoted: bool, drop: str | None = None) -> list[str]:
    """Name tokens as unique names in order of appearance, without ``drop``."""
    if quoted:
        tokens = [unquote_name(t) for t in tokens]
    if len(tokens) > 1:
        tokens = list(dict.fromkeys(tokens))
    if drop is not None and drop in tokens:
        tokens.remove(drop)
    return tokens


class Global:
    """One global variable, alias or ifunc line, as LLVM printed it."""

    __slots__ = ("name", "line", "_refs")
    kind = "global"

    def __init__(self, name: str, line: str):
        self.name, self.line, self._refs = name, line, None

    def text(self) -> str:
        return self.line + "\n"

    def _words(self) -> list[str]:
        return self.line.split(" = ", 1)[1].split(" ", 8)

    @property
    def linkage(self) -> str:
        w = self._words()[0]
        return w if w in _LINKAGES else "external"

    @property
    def is_declaration(self) -> bool:
        return self.linkage in ("external", "extern_weak") and self._words()[0] in ("external", "extern_weak")

    @property
    def is_alias(self) -> bool:
        return not {"alias", "ifunc"}.isdisjoint(self._words()[:8])

    def _type_and_rest(self) -> tuple[str, str]:
        """(value type, what follows it) for a variable."""
        rest = self.line.split(" = ", 1)[1]
        m = re.search(r'\b(?:global|constant) ', rest)
        return split_type(rest[m.end():])

    @property
    def value_type(self) -> str:
        return self._type_and_rest()[0]

    @property
    def attribute_groups(self) -> list[int]:
        m = re.search(r' #(\d+)$', self.line)
        return [int(m.group(1))] if m else []

    def refs(self) -> list[str]:
        if self._refs is None:
            rest = self.line.split(" = ", 1)[1]
            if 'c"' in rest:
                rest = _STRING_CONST.sub("", rest)
            seen = dict.fromkeys(unquote_name(t) for t in _REF.findall(rest))
            seen.pop(self.name, None)
            self._refs = list(seen)
        return self._refs

    def calls(self) -> list[str]:
        return []


def split_type(text: str) -> tuple[str, str]:
    """Split one LLVM type off the front of ``text``: ``("{ i32, ptr }", " zeroinitializer, align 8")``."""
    if text[:1] in "{[<":
        depth = 0
        for i, ch in enumerate(text):
            if ch in "{[<":
                depth += 1
            elif ch in "}]>":
                depth -= 1
                if depth == 0:
                    return text[:i + 1], text[i + 1:]
        raise IRError(f"unbalanced type: {text[:60]}")
    if text.startswith('%"'):
        end = text.index('"', 2) + 1
        return text[:end], text[end:]
    m = re.match(r'[^\s,]+(?: addrspace\(\d+\))?', text)
    return m.group(0), text[m.end():]


# --- the module ------------------------------------------------------------------


class Module:
    """A module as a list of top-level entities (see the module docstring)."""

    def __init__(self):
        self.header: list[str] = []
        self.types: dict[str, str] = {}          # "%name" token -> line
        self.comdats: dict[str, str] = {}        # "$name" token -> line
        self.globals: dict[str, Global] = {}
        self.functions: dict[str, Function] = {}
        self.attribute_groups: dict[int, str] = {}   # N -> text between the braces
        self.named_metadata: dict[str, str] = {}     # name -> line
        self.metadata: dict[int, str] = {}           # N -> line
        self.name = "<module>"
        self._type_regex = None
        self._new_md: dict[str, int] = {}
        self._new_attrs: dict[str, int] = {}
        self._users: dict[str, set[str]] | None = None
        self._with: dict[str, dict] = {}
        self._by_group: dict[int, list[str]] | None = None
        self._order = None
        self._early = None

    # -- reading ------------------------------------------------------------------

    @classmethod
    def parse(cls, text: str, name: str = "<module>") -> "Module":
        """Cut LLVM's canonical printing of a module into entities (no validation:
        use ``load`` or ``parse_text`` for untrusted input)."""
        mod = cls()
        mod.name = name
        if not text.endswith("\n"):
            text += "\n"
        functions, globals_ = mod.functions, mod.globals
        for header, fname, body, decl, dname, line in _ENTITY.findall(text):
            if header:
                if fname[0] == '"':
                    fname = unquote_name(fname)
                functions[fname] = Function(fname, header, body)
                continue
            if decl:
                if dname[0] == '"':
                    dname = unquote_name(dname)
                functions[dname] = Function(dname, decl, None)
                continue
            c0 = line[0]
            if c0 == "@":
                gname = unquote_name(line[1:line.index(" = ")])
                globals_[gname] = Global(gname, line)
            elif c0 == "%":
                mod.types[line[:line.index(" = ")]] = line
            elif c0 == "$":
                mod.comdats[line[:line.index(" = ")]] = line
            elif c0 == "!":
                key = line[:line.index(" = ")]
                if key[1:].isdigit():
                    mod.metadata[int(key[1:])] = line
                else:
                    mod.named_metadata[key[1:]] = line
            elif line.startswith("attributes #"):
                num, _, rest = line[len("attributes #"):].partition(" = ")
                mod.attribute_groups[int(num)] = rest.strip()[1:-1].strip()
            else:
                mod.header.append(line)
        return mod

    def text(self) -> str:
        """This module's IR text: entities in LLVM's order and layout, the
        numbers of attribute groups and metadata nodes as they are (not compacted)."""
        sections = [
            "".join(line + "\n" for line in self.header),
            "".join(line + "\n" for line in self.types.values()),
            "\n".join(line + "\n" for line in self.comdats.values()),
            "".join(g.line + "\n" for g in self.globals.values()),
            "\n".join(f.text() for f in self.functions.values()),
            "".join(f"attributes #{n} = {{ {a} }}\n" for n, a in self.attribute_groups.items()),
            "".join(line + "\n" for line in self.named_metadata.values()),
            "".join(self.metadata[n] + "\n" for n in sorted(self.metadata)),
        ]
        return "\n".join(s for s in sections if s)

    __str__ = text

    def verify(self, text: str | None = None):
        """Hand the module to LLVM: parse and verify in a fresh context
        (``text``: ``self.text()``, when the caller has it already).

        A failure here means a pass produced bad IR; it is raised as
        ``RuntimeError`` with LLVM's message (an internal error, not the user's).
        """
        early, self._early = self._early, None
        text = self.text() if text is None else text
        ref, problem = early[1].result() if early is not None and early[0] == text else \
            parse_and_verify(text, self.name)
        if problem is not None:
            raise RuntimeError(problem)
        return ref

    def verify_soon(self) -> None:
        """Start ``verify`` of the module as it is now on a second thread, where
        LLVM works (llvmlite lets go of the GIL) while Python goes on; a later
        ``verify`` of the unchanged module takes that result."""
        text = self.text()
        self._early = (text, in_background(parse_and_verify, text, self.name))

    def replace_with(self, other: "Module") -> None:
        """Become ``other`` (a pass that rebuilds the module still edits it in place)."""
        self.__dict__.update(other.__dict__)

    def entity(self, name: str):
        return self.functions.get(name) or self.globals.get(name)

    def function_attributes(self, fn: Function | str) -> dict[str, str | None]:
        """All attributes of a function (from its attribute groups)."""
        fn = self.functions[fn] if isinstance(fn, str) else fn
        return self._attributes(fn.attribute_groups)

    def global_attributes(self, g: Global | str) -> dict[str, str | None]:
        g = self.globals[g] if isinstance(g, str) else g
        return self._attributes(g.attribute_groups)

    def attributes_of_group(self, n: int) -> dict[str, str | None]:
        return dict(_parse_group(self.attribute_groups.get(n, "")))

    def _attributes(self, groups: list[int]) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for n in groups:
            out.update(_parse_group(self.attribute_groups.get(n, "")))
        return out

    def attribute_index(self, key: str) -> dict[int, str | None]:
        """Attribute group number → value of attribute ``key``, for the groups that have it."""
        out = {}
        for n, text in self.attribute_groups.items():
            if key in text:
                for k, v in _parse_group(text):
                    if k == key:
                        out[n] = v
        return out

    def functions_with(self, key: str) -> dict[str, str | None]:
        """Function name → value of attribute ``key``, for the functions that have it
        (module order).  One look at each attribute group, then the functions of
        the groups that have it; remembered until the next edit."""
        out = self._with.get(key)
        if out is None:
            index = self.attribute_index(key)
            by_group = self._functions_by_group() if index else {}
            hits = [(name, value) for n, value in index.items() for name in by_group.get(n, ())]
            if len(index) > 1:
                position = self._positions()
                hits.sort(key=lambda hit: position[hit[0]])
            out = self._with[key] = dict(hits)
        return out

    def _functions_by_group(self) -> dict[int, list[str]]:
        """Attribute group number → the functions that use it, in module order."""
        out = self._by_group
        if out is None:
            out = self._by_group = {}
            for name, fn in self.functions.items():
                for n in fn.attribute_groups:
                    out.setdefault(n, []).append(name)
        return out

    def globals_with(self, key: str) -> dict[str, str | None]:
        index = self.attribute_index(key)
        if not index:
            return {}
        return {name: index[n] for name, g in self.globals.items() for n in g.attribute_groups if n in index}

    def metadata_operands(self, ref: str | int) -> list[str]:
        """Operands of metadata node ``!N`` (``ref`` is ``"!N"`` or ``N``), as printed."""
        n = int(ref[1:]) if isinstance(ref, str) else ref
        line = self.metadata.get(n)
        if line is None:
            return []
        body = line.split(" = ", 1)[1]
        if body.startswith("distinct "):
            body = body[len("distinct "):]
        if not body.startswith("!{"):
            return [body]
        return split_operands(body[2:-1])

    def metadata_ints(self, ref: str | None) -> list[int]:
        """The integers of node ``!N``: ``i32 N`` / ``i64 N`` operands, or the last
        operand of ``!{!"name", i32 N}`` pairs (how aspects are listed)."""
        out = []
        for op in self.metadata_operands(ref) if ref else ():
            if op.startswith("!") and op[1:].isdigit():
                inner = self.metadata_operands(op)
                op = inner[-1] if inner else ""
            parts = op.split()
            if len(parts) == 2 and parts[0] in ("i8", "i16", "i32", "i64"):
                try:
                    out.append(int(parts[1]))
                except ValueError:
                    continue
        return out

    def filter_used_lists(self, keep) -> None:
        """Keep only the members of ``@llvm.used`` / ``@llvm.compiler.used`` that are
        in ``keep``; a list left empty is removed."""
        for used in USED_LISTS:
            g = self.globals.get(used)
            if g is None or all(r in keep for r in g.refs()):
                continue
            new = _filter_used(g, keep)
            if new is None:
                del self.globals[used]
            else:
                self.globals[used] = new

    def function_metadata(self, fn: Function | str, kind: str) -> list[str] | None:
        """Operands of the ``!kind`` attachment of a function, or ``None``."""
        fn = self.functions[fn] if isinstance(fn, str) else fn
        ref = fn.metadata.get(kind)
        return None if ref is None else self.metadata_operands(ref)

    def named_metadata_operands(self, name: str) -> list[list[str]]:
        """The nodes a named metadata lists, each as its operand list."""
        line = self.named_metadata.get(name)
        if line is None:
            return []
        refs = split_operands(line.split(" = ", 1)[1][2:-1])
        return [self.metadata_operands(r) for r in refs]

    def strong_definitions(self) -> list[str]:
        """Definitions with plain external linkage: the ones that clash when two
        modules that both have them are linked (``llvm.*`` lists excepted)."""
        return [name for name, ent in list(self.functions.items()) + list(self.globals.items())
                if not ent.is_declaration and ent.linkage == "external" and not name.startswith("llvm.")]

    def users(self) -> dict[str, set[str]]:
        """name → names of the functions and globals that mention it (whole module)."""
        if self._users is None:
            users: dict[str, set[str]] = {}
            for ent in list(self.functions.values()) + list(self.globals.values()):
                for r in ent.refs():
                    users.setdefault(r, set()).add(ent.name)
            self._users = users
        return self._users

    # -- extraction ---------------------------------------------------------------

    def closure(self, roots: Iterable[str], opaque: Iterable[str] = ()) -> list[str]:
        """Every function and global reachable from ``roots`` through references,
        not looking inside the bodies of ``opaque`` functions.  Order: discovery
        order (deterministic).  The ``llvm.used`` lists are not followed."""
        opaque = _as_set(opaque)
        functions, globals_ = self.functions, self.globals
        seen: dict[str, None] = {}
        stack = [r for r in reversed(list(roots)) if r in functions or r in globals_]
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen[name] = None
            if name in opaque or name in USED_LISTS:
                continue            # what an opaque body reaches is not followed
            ent = functions.get(name) or globals_[name]
            refs = ent.refs()
            if refs:
                stack.extend(r for r in reversed(refs) if r not in seen and (r in functions or r in globals_))
        return list(seen)

    def extract(self, names: Iterable[str], *, declare: Iterable[str] = (), stub: Iterable[str] = (),
                name: str | None = None, closed: bool = False) -> "Module":
        """A new module with the definitions of ``names`` and a declaration of
        everything they reference but which is not among them.

        ``declare``: functions to keep only as declarations; ``stub``: functions
        whose body becomes ``ret void`` / ``ret <ty> undef``.  The ``llvm.used``
        lists keep only members that are defined in the result.  ``closed``:
        the caller knows that ``names`` already holds everything they reference
        (a ``closure`` whose opaque functions are stubbed).  Cost is
        proportional to the extracted entities.
        """
        out = Module()
        out.name = name or self.name
        out.header = list(self.header)
        declare, stub = _as_set(declare), _as_set(stub)
        functions, globals_ = self.functions, self.globals
        # 1. the named entities, then declarations of what they mention (one
        #    level: a declaration mentions nothing)
        chosen: dict[str, object] = {}
        for n in names:
            ent = functions.get(n)
            if ent is not None:
                if n in declare:
                    ent = _as_declaration(ent)
                elif n in stub and ent.body is not None:
                    ent = _stubbed(ent)
            else:
                ent = globals_.get(n)
                if ent is None:
                    continue
            chosen[n] = ent
        for n, ent in list(chosen.items()) if not closed else ():
            if n in USED_LISTS:
                continue
            for r in ent.refs():
                if r not in chosen:
                    dep = functions.get(r) or globals_.get(r)
                    if dep is not None:
                        chosen[r] = _as_declaration(dep)
        # 2. keep module order (sorting the part, not walking the whole module)
        order = sorted(chosen, key=self._positions().__getitem__)
        out.functions = {n: chosen[n] for n in order if n in functions}
        for n in order:
            if n in globals_:
                ent = chosen[n]
                if n in USED_LISTS:
                    ent = _filter_used(ent, {k for k, v in chosen.items() if not v.is_declaration})
                    if ent is None:
                        continue
                out.globals[n] = ent
        self._copy_support(out)
        return out

    def _positions(self) -> dict[str, int]:
        """Entity name → place in printing order (globals first), computed once."""
        key = (len(self.globals), len(self.functions))
        if self._order is None or self._order[0] != key:
            pos = {n: i for i, n in enumerate(self.globals)}
            base = len(pos)
            pos.update((n, base + i) for i, n in enumerate(self.functions))
            self._order = (key, pos)
        return self._order[1]

    def _copy_support(self, out: "Module") -> None:
        """Copy the comdats, types, attribute groups and metadata that the
        entities of ``out`` use (one scan of their joined text for each kind)."""
        texts = [g.line for g in out.globals.values()]
        for f in out.functions.values():
            texts.append(f.header)
            if f.body is not None:
                texts.append(f.body)
        blob = "\n".join(texts)
        # comdats
        if self.comdats and "comdat" in blob:
            for ent in list(out.globals.values()) + list(out.functions.values()):
                if ent.is_declaration:
                    continue
                head = ent.line if isinstance(ent, Global) else ent.header
                if " comdat" in head:
                    m = _COMDAT.search(head if isinstance(ent, Global) or '"' not in head else ent.tail)
                    if m:
                        key = m.group(1) or "$" + quote_name(ent.name)
                        if key in self.comdats:
                            out.comdats[key] = self.comdats[key]
        # attribute groups
        groups = {int(n) for n in set(_ATTR_REF.findall(blob))}
        out.attribute_groups = {n: self.attribute_groups[n] for n in sorted(groups) if n in self.attribute_groups}
        # types (transitively)
        if self.types:
            used = set(_LOCAL_OR_TYPE.findall(blob)) & self.types.keys()
            work = list(used)
            while work:
                for u in _LOCAL_OR_TYPE.findall(self.types[work.pop()].split(" = ", 1)[1]):
                    if u in self.types and u not in used:
                        used.add(u)
                        work.append(u)
            out.types = {k: line for k, line in self.types.items() if k in used}
        # metadata: named metadata always, plus every node reachable
        out.named_metadata = dict(self.named_metadata)
        nodes = {int(n) for n in set(_MD_REF.findall(blob))}
        for line in out.named_metadata.values():
            nodes.update(int(n) for n in _MD_REF.findall(line))
        work = list(nodes)
        while work:
            line = self.metadata.get(work.pop())
            if line is None:
                continue
            for m in _MD_REF.findall(line, line.index(" = ")):
                m = int(m)
                if m not in nodes:
                    nodes.add(m)
                    work.append(m)
        out.metadata = {n: self.metadata[n] for n in sorted(nodes) if n in self.metadata}

    def _types_rx(self):
        if self._type_regex is None:
            keys = sorted(self.types, key=len, reverse=True)
            self._type_regex = re.compile("|".join(re.escape(k) + r'(?![-\w$.])' for k in keys))
        return self._type_regex

    # -- edits (each replaces whole entities) -------------------------------------

    def _changed(self):
        self._users = None
        self._with, self._by_group = {}, None
        self._order = None

    def make_declaration(self, name: str) -> None:
        """Delete a function's body or a global's initialiser: it becomes an
        external declaration."""
        if name in self.functions:
            self.functions[name] = _as_declaration(self.functions[name])
        else:
            self.globals[name] = _as_declaration(self.globals[name])
        self._changed()

    def set_linkage(self, name: str, linkage: str) -> None:
        """Give a function or global definition another linkage (``external`` prints none)."""
        if name in self.globals:
            g = self.globals[name]
            head, rest = g.line.split(" = ", 1)
            words = rest.split(" ")
            if words[0] in _LINKAGES:
                del words[0]
            if linkage != "external":
                words.insert(0, linkage)
            self.globals[name] = Global(name, f"{head} = {' '.join(words)}")
            return
        fn = self.functions[name]
        words = fn.header.split(" ")
        if len(words) > 1 and words[1] in _LINKAGES:
            del words[1]
        if linkage != "external":
            words.insert(1, linkage)
        self.functions[name] = Function(name, " ".join(words), fn.body)

    def stub_body(self, name: str) -> None:
        """Replace a function's body with ``ret void`` (or ``ret <ty> undef``)."""
        self.functions[name] = _stubbed(self.functions[name])
        self._changed()

    def drop(self, names: Iterable[str]) -> list[str]:
        """Remove functions/globals and then whatever only they kept alive
        (discardable-linkage definitions and declarations nobody mentions any
        more).  Returns every removed name."""
        users = {k: set(v) for k, v in self.users().items()}
        work = list(names)
        removed: list[str] = []
        while work:
            n = work.pop()
            ent = self.entity(n)
            if ent is None or n in removed:
                continue
            removed.append(n)
            self.functions.pop(n, None)
            self.globals.pop(n, None)
            for r in ent.refs():
                u = users.get(r)
                if u is not None:
                    u.discard(n)
                dep = self.entity(r)
                if dep is not None and not u and (dep.is_declaration or dep.linkage in DISCARDABLE_LINKAGES):
                    work.append(r)
        if removed:
            self.filter_used_lists(set(self.functions) | set(self.globals))
        self._changed()
        return removed

    def add_metadata_node(self, operands: list[str]) -> str:
        """Add ``!{ops}`` (reusing an identical uniqued node, as LLVM does) and return ``!N``."""
        body = "!{" + ", ".join(operands) + "}"
        if not self._new_md:        # index the module's own nodes once
            self._new_md = {line[line.index(" = ") + 3:]: n for n, line in self.metadata.items()
                            if " = !{" in line}
        n = self._new_md.get(body)
        if n is None:
            n = max(self.metadata, default=-1) + 1
            self.metadata[n] = f"!{n} = {body}"
            self._new_md[body] = n
        return f"!{n}"

    def set_function_metadata(self, name: str, kind: str, operands: list[str] | None) -> None:
        """Attach ``!kind !{operands}`` to a function (``None`` removes the attachment)."""
        fn = self.functions[name]
        ref = None if operands is None else self.add_metadata_node(operands)
        h = fn.header
        m = _FN_NAME.search(h)
        if fn.is_declaration:
            pre, post = h[:m.start()], h[m.start():]
            pre = re.sub(r' !' + re.escape(kind) + r' !\d+', "", pre)
            if ref is not None:
                pre = pre.replace("declare ", f"declare !{kind} {ref} ", 1)
            new = pre + post
        else:
            close = _close_paren(h, m.end() - 1)
            tail = re.sub(r' !' + re.escape(kind) + r' !\d+', "", h[close + 1:])
            if ref is not None:
                tail = tail[:-2] + f" !{kind} {ref} {{"
            new = h[:close + 1] + tail
        self.functions[name] = Function(name, new, fn.body)

    def set_named_metadata(self, name: str, nodes: list[list[str]]) -> None:
        refs = [self.add_metadata_node(ops) for ops in nodes]
        self.named_metadata[name] = f"!{name} = !{{{', '.join(refs)}}}"

    def _attribute_group(self, attrs: dict[str, str | None]) -> int:
        text = _render_attributes(attrs)
        n = self._new_attrs.get(text)
        if n is None or self.attribute_groups.get(n) != text:
            n = next((k for k, t in self.attribute_groups.items() if t == text), None)
            if n is None:
                n = max(self.attribute_groups, default=-1) + 1
                self.attribute_groups[n] = text
            self._new_attrs[text] = n
        return n

    def replace_attribute_group(self, n: int, attrs: dict[str, str | None]) -> None:
        """Give attribute group ``#n`` new contents: every user of the group
        (functions and call sites) gets them."""
        self.attribute_groups[n] = _render_attributes(attrs)
        self._with = {}             # who uses #n is unchanged: _by_group stays

    def set_function_attributes(self, name: str, attrs: dict[str, str | None]) -> None:
        """Replace all function attributes of ``name`` (one attribute group)."""
        fn = self.functions[name]
        h, tail = fn.header, fn.tail
        head = h[:len(h) - len(tail)]
        tail = _ATTR_REF.sub("", tail).replace("  ", " ")
        if attrs:
            # canonical position: after unnamed_addr/addrspace, before section/comdat/metadata
            mm = _GROUP_PLACE.match(tail)
            tail = tail[:mm.end()] + f" #{self._attribute_group(attrs)}" + tail[mm.end():]
        self.functions[name] = Function(name, head + tail, fn.body)
        self._with, self._by_group = {}, None

    def update_function_attributes(self, name: str, add: dict[str, str | None] | None = None,
                                   remove: Iterable[str] = ()) -> None:
        """Add and remove function attributes (no-op when nothing changes)."""
        before = self.function_attributes(name)
        attrs = dict(before)
        for k in remove:
            attrs.pop(k, None)
        attrs.update(add or {})
        if attrs != before:
            self.set_function_attributes(name, attrs)


USED_LISTS = ("llvm.used", "llvm.compiler.used")


def _as_set(names):
    """Names as something with fast ``in``: sets, dicts and views are used as they
    are (so a per-image filter over a big set costs nothing to pass)."""
    return names if hasattr(names, "__contains__") and not isinstance(names, (list, tuple, str)) else set(names)


class Excluding:
    """The names of ``base`` that are not in ``removed``, without copying ``base``."""

    __slots__ = ("base", "removed")

    def __init__(self, base, removed):
        self.base, self.removed = base, set(removed)

    def __contains__(self, name) -> bool:
        return name in self.base and name not in self.removed


def _as_declaration(ent):
    if ent.is_declaration:
        return ent
    if isinstance(ent, Global):
        if ent.is_alias:
            raise IRError(f"cannot turn alias @{ent.name} into a declaration")
        head, rest = ent.line.split(" = ", 1)
        m = re.search(r'\b(global|constant) ', rest)
        pre = rest[:m.start()].split()
        pre = [w for w in pre if w not in _LINKAGES]
        ty, after = split_type(rest[m.end():])
        tail = []
        for part in split_operands(after.split(",", 1)[1]) if "," in after else []:
            if part.startswith(("align ", "section ")):
                tail.append(part)
        attrs = re.search(r' (#\d+)$', ent.line)
        line = f"{head} = external {' '.join(pre + [m.group(1)])} {ty}" + "".join(f", {p}" for p in tail) + \
            (f" {attrs.group(1)}" if attrs else "")
        return Global(ent.name, line)
    h = ent.header
    m = _FN_NAME.search(h)
    words = [w for w in ent.prefix_words[1:] if w not in _LINKAGES or w == "extern_weak"]
    tail = re.sub(r' comdat(?:\(\$' + _NAME + r'\))?', "", ent.tail)
    tail = re.sub(r' (?:personality|prefix|prologue) \S+ \S+', "", tail)
    tail = _MD_ATTACH.sub("", tail)        # like Function::deleteBody, which clears metadata
    tail = tail[:-1].rstrip() if tail.endswith("{") else tail.rstrip()
    header = " ".join(["declare"] + words + [h[m.start():m.end() - 1] + _unnamed(ent.params) + tail])
    return Function(ent.name, header, None)


_PARAM_NAME = re.compile(r' %' + _NAME + r'\Z')


def _unnamed(params: str) -> str:
    """A parameter list without parameter names, as LLVM prints a declaration's."""
    if "%" not in params:
        return params
    return "(" + ", ".join(_PARAM_NAME.sub("", p) for p in split_operands(params[1:-1])) + ")"


def _stubbed(fn: Function) -> Function:
    """``ret void`` / ``ret <ty> undef`` as the whole body; like upstream's
    deleteBody + new block, the function's metadata goes with the old body."""
    ret = fn.return_type
    body = "entry:\n  ret void\n}\n" if ret == "void" else f"entry:\n  ret {ret} undef\n}}\n"
    h = fn.header
    close = _close_paren(h, _FN_NAME.search(h).end() - 1)
    return Function(fn.name, h[:close + 1] + _MD_ATTACH.sub("", h[close + 1:]).replace("  ", " "), body)


def _filter_used(g: Global, keep: set[str]) -> Global | None:
    members = [r for r in g.refs() if r in keep]
    if not members:
        return None
    head, rest = g.line.split(" = ", 1)
    items = ", ".join(f"ptr @{quote_name(r)}" for r in members)
    line = f'{head} = appending global [{len(members)} x ptr] [{items}], section "llvm.metadata"'
    return Global(g.name, line)


