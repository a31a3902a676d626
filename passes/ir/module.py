"""The IR toolkit every pass and the post-link step share.

llvmlite.binding parses, verifies, links and prints LLVM IR but cannot rewrite a
function; llvmlite.ir builds IR but has no parser.  This module edits a module at
the level of its top-level entities on LLVM's own canonical printing
(``docs/architecture.md``, "Passes"):

1. ``load`` hands the input (``.ll`` text or ``.bc``) to LLVM, which parses and
   verifies it and prints it canonically; a bad input is an ``IRError``.
2. ``Module.parse`` cuts that text into entities: type definitions, comdats,
   globals, functions, attribute groups, named metadata and metadata nodes.
   Facts about an entity (its references, direct calls, attributes, metadata)
   are computed from its own text the first time they are asked for.
3. Edits replace whole entities (entities are never changed in place, so
   extracted modules can share them).
4. ``Module.verify`` prints the entities and hands them back to LLVM.

The steps live in their own modules: the entities of step 2 in ``entities``
(their attributes and metadata attachments in ``attributes``, indirect call
sites in ``call_sites``), the edits of step 3 in ``edits``, extraction in
``extraction``; this module holds the ``Module`` itself: its tables, cutting
and printing, verification, and the facts passes ask of the whole module.

``Module.extract`` builds a module from some definitions and the declarations
they need; it reads only those entities and what they reference, so its cost
is proportional to the part, not to the whole module.
"""
from __future__ import annotations

import re

from .attributes import _parse_group
from .bridge import close_in_background, in_background, parse_and_verify, verified_bitcode
from .edits import Edits, _filter_used
from .entities import USED_LISTS, Function, Global, _after_key, _line_key
from .extraction import Extraction
from .lexer import _NAME, split_operands, tokens, unquote_name
from .reparse import names_equivalents, parseable_order

__all__ = ["Module"]

# The entity cutter: each top-level entity starts at the beginning of a line
# with its first token (LLVM prints one entity per line, a function body up to
# a line that is just "}"; nothing in a body starts a line with "}").  Before a
# function's name only strings can hold an "@".
# Every repetition is possessive (``*+``): giving back a line or a string could
# never make the match succeed, and a backtracking group keeps a frame per
# iteration (a function of a million lines cost 700 MB to cut; now 120 MB).
# The head is "unrolled" (runs of plain characters between whole strings, not
# one alternation per character): the same language, cut in 60% of the time.
_HEAD = r'[^\n@"]*+(?:"[^"\n]*+"[^\n@"]*+)*+'
_ENTITY = re.compile(r'^(?:(define ' + _HEAD + r'@(' + _NAME + r')\([^\n]*+)\n((?:[^}\n][^\n]*+\n|\n)*+\}\n)'
                     r'|(declare ' + _HEAD + r'@(' + _NAME + r')\([^\n]*+)\n|([^\s;\n][^\n]*+)\n)', re.M)


def _functions_text(functions) -> str:
    """The functions' texts (``Function.text``), a blank line between two, as
    one join of their headers and bodies (half the time of joining each
    function's own text, which copies every body once more first)."""
    functions = list(functions)
    parts = [""] * (2 * len(functions))
    parts[0::2] = [f.header for f in functions]
    parts[1::2] = [f.body or "" for f in functions]
    return "\n".join(parts)


class Module(Extraction, Edits):
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
        self._new_md: dict[str, int] = {}
        self._new_attrs: dict[str, int] = {}
        self._users: dict[str, set[str]] | None = None
        self._with: dict[str, dict] = {}
        self._by_group: dict[int, list[str]] | None = None
        self._order = None
        self._early = None
        self._groups_of = None
        self._named_nodes: set[int] | None = None      # nodes the named metadata reaches
        self._md_facts: dict[int, tuple] = {}           # node -> (nodes, globals) it names

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
                gname = unquote_name(_line_key(line)[1:])
                globals_[gname] = Global(gname, line)
            elif c0 == "%":
                mod.types[_line_key(line)] = line
            elif c0 == "$":
                mod.comdats[_line_key(line)] = line
            elif c0 == "!":
                key = _line_key(line)
                if key[1:].isdigit():
                    mod.metadata[int(key[1:])] = line
                else:
                    mod.named_metadata[key[1:]] = line
            elif line.startswith("attributes #"):
                toks = tokens(line[:40])            # attributes #N = { ... }
                rest = line[toks[2][2]:]
                mod.attribute_groups[int(toks[1][0][1:])] = rest.strip()[1:-1].strip()
            else:
                mod.header.append(line)
        return mod

    def text(self) -> str:
        """This module's IR text: entities in LLVM's order and layout, the
        numbers of attribute groups and metadata nodes as they are (not compacted)."""
        variables = "\n".join([g.line for g in self.globals.values()]) + "\n" if self.globals else ""
        functions = _functions_text(self.functions.values())
        after = ""
        if names_equivalents(variables) or names_equivalents(functions):     # LLVM's order would not parse back
            before, fns, moved = parseable_order(self.globals, self.functions)
            variables = "".join(g.line + "\n" for g in before)
            functions = _functions_text(fns)
            after = "".join(g.line + "\n" for g in moved)
        metadata = self.metadata
        sections = [                        # (each line and its newline in one join: no string per line)
            "\n".join(self.header) + "\n" if self.header else "",
            "\n".join(self.types.values()) + "\n" if self.types else "",
            "\n\n".join(self.comdats.values()) + "\n" if self.comdats else "",
            variables,
            functions,
            after,
            "".join([f"attributes #{n} = {{ {a} }}\n" for n, a in self.attribute_groups.items()]),
            "\n".join(self.named_metadata.values()) + "\n" if self.named_metadata else "",
            "\n".join([metadata[n] for n in sorted(metadata)]) + "\n" if metadata else "",
        ]
        return "\n".join([s for s in sections if s])

    __str__ = text

    def verify(self, text: str | None = None):
        """Hand the module to LLVM: parse and verify in a fresh context
        (``text``: ``self.text()``, when the caller has it already).

        A failure here means a pass produced bad IR; it is raised as
        ``RuntimeError`` with LLVM's message (an internal error, not the user's).
        """
        early, self._early = self._early, None
        text = self.text() if text is None else text
        if early is not None and early[0] == text and not early[2]:
            ref, problem = early[1].result()
        else:
            ref, problem = parse_and_verify(text, self.name)
        if problem is not None:
            raise RuntimeError(problem)
        return ref

    def bitcode(self, text: str | None = None) -> bytes:
        """``verify``, then LLVM's bitcode of the module (taken from
        ``start_verification(bitcode=True)`` when the module is unchanged:
        the same text, or, without ``text``, the same entities)."""
        early = self._early
        if early is not None and early[2] and (early[3] == self._state() if text is None else early[0] == text):
            self._early = None
            data, problem = early[1].result()
            if problem is not None:
                raise RuntimeError(problem)
            return data
        if early is not None:               # a verification started: take its module
            ref = self.verify(self.text() if text is None else text)
            data = ref.as_bitcode()
            close_in_background(ref)
            return data
        # LLVM's module closed here: handing each of many small modules' close to
        # the verifier thread (post-link's images) cost more than the close itself
        data, problem = verified_bitcode(self.text() if text is None else text, self.name)
        if problem is not None:
            raise RuntimeError(problem)
        return data

    @property
    def started(self) -> bool:
        """Whether a ``start_verification`` is under way (its result not yet taken)."""
        return self._early is not None

    def start_verification(self, bitcode: bool = False, worker=None) -> None:
        """Start ``verify`` of the module as it is now on a second thread, where
        LLVM works (llvmlite lets go of the GIL) while Python goes on; a later
        ``verify`` of the unchanged module takes that result.  ``bitcode``:
        the thread also writes the bitcode and lets go of LLVM's module at
        once, for a later ``bitcode`` (the post-link step starts each image so
        while it goes on with the next); ``worker`` (a ``BitcodeWorker``, with
        ``bitcode``): it does that work instead of the thread."""
        text = self.text()
        if bitcode:
            job = worker.submit(text, self.name) if worker is not None else \
                in_background(verified_bitcode, text, self.name)
        else:
            job = in_background(parse_and_verify, text, self.name)
        self._early = (text, job, bitcode, self._state())

    def _state(self) -> tuple:
        """What ``text()`` and LLVM's name of the module are made of: entities
        never change (an edit puts a new one in), so an equal state is an equal
        text, found without printing the module again."""
        return (self.name, tuple(self.header), tuple(self.types.items()), tuple(self.comdats.items()),
                tuple(self.globals.items()), tuple(self.functions.items()), tuple(self.attribute_groups.items()),
                tuple(self.named_metadata.items()), tuple(self.metadata.items()))

    def take_contents_of(self, other: "Module") -> None:
        """Become ``other``: this object takes its contents (a pass that
        rebuilds the module still edits the manager's module in place)."""
        self.__dict__.update(other.__dict__)

    def copy(self) -> "Module":
        """The same module as a new object: editing the copy leaves this one as
        it is.  Entities are values that edits replace, never change, so the
        copy shares them and only the containers are new (cost: one dict copy
        per kind of entity); the copy computes its facts afresh, but for
        who uses each attribute group and the entities' order."""
        out = Module()
        out.name = self.name
        out.header = list(self.header)
        out.types, out.comdats = dict(self.types), dict(self.comdats)
        out.globals, out.functions = dict(self.globals), dict(self.functions)
        out.attribute_groups = dict(self.attribute_groups)
        out.named_metadata, out.metadata = dict(self.named_metadata), dict(self.metadata)
        if self._by_group is not None:      # (who uses which group, and the order: the same)
            out._by_group = {n: list(users) for n, users in self._by_group.items()}
        out._order = self._order
        return out

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
        body = _after_key(line)
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
        refs = split_operands(_after_key(line)[2:-1])
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
