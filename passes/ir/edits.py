"""Edits of a module (``module.py``'s step 3): each replaces whole entities.

Entities are never changed in place (extracted modules and copies share them):
an edit builds a new ``Function`` or ``Global`` from the old one's text and
puts it in the module's tables.  The module functions at the end make the
new entities (a declaration of a definition, a stubbed body, a trimmed
``llvm.used`` list); ``Edits`` holds the module's edit methods.
"""
from __future__ import annotations

import bisect
import re
from typing import Iterable

from .attributes import _ATTR_SPAN, _kept, _render_attributes, attachment_pairs, without_attachments
from .bridge import IRError
from .entities import DISCARDABLE_LINKAGES, _LINKAGES, Function, Global, _after_key, _line_key
from .lexer import attribute_refs, closing, global_refs, rename_global_refs, skip_constant, skip_type, split_operands, tokens


class Edits:
    """``Module``'s edit methods (a mixin: ``Module`` holds the state)."""

    def _changed(self):
        self._users = self._groups_of = None
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
            head = _line_key(g.line)
            words = g.line[len(head) + 3:].split(" ")
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
        self.functions[name] = fn.relinked(" ".join(words))

    def make_internal(self, name: str, drop_comdat: bool = False) -> None:
        """Give a function definition internal linkage and default visibility (as
        LLVM's Internalize does); ``drop_comdat`` also takes it out of its comdat."""
        self.set_linkage(name, "internal")
        fn = self.functions[name]
        h = fn._parsed()
        header = fn.header
        cut = [(s_, e_) for tok, s_, e_ in h.prefix[:h.ret_start] if tok in ("hidden", "protected")]
        if drop_comdat:
            span = fn.tail_parts().get("comdat")
            if span is not None:
                cut.append(span)
        for s_, e_ in sorted(cut, reverse=True):
            header = header[:s_].rstrip(" ") + " " + header[e_:].lstrip(" ")
        self.functions[name] = fn.relinked(header)
        self._changed()

    def add_entities(self, text: str) -> list[str]:
        """Add the globals and functions of ``text`` (LLVM IR lines: definitions
        and declarations in LLVM's printing) after the module's own; returns
        their names.  An entity of the same name is replaced."""
        part = type(self).parse(text, self.name)
        self.globals.update(part.globals)
        self.functions.update(part.functions)
        self._changed()
        return list(part.globals) + list(part.functions)

    def rename_refs_in_globals(self, renames: dict[str, str]) -> list[str]:
        """In the initialisers of the global variables, name ``renames[old]``
        where they name ``old`` (a vtable slot given another function); function
        bodies are left as they are.  Returns the globals changed."""
        users = self.users()
        named = {u for old in renames for u in users.get(old, ())}
        changed = [n for n in self.globals if n in named]
        for n in changed:
            self.globals[n] = Global(n, rename_global_refs(self.globals[n].line, renames))
        if changed:
            self._changed()
        return changed

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
            self._new_md = {_after_key(line): n for n, line in self.metadata.items() if " = !{" in line}
        n = self._new_md.get(body)
        if n is None:
            n = max(self.metadata, default=-1) + 1
            self.metadata[n] = f"!{n} = {body}"
            self._new_md[body] = n
        return f"!{n}"

    def add_metadata_tree(self, operands: list) -> str:
        """``add_metadata_node`` where an operand may be a list: a node of its
        own.  New nodes are numbered in pre-order (the node, then its operands
        left to right), as LLVM's printer numbers an attachment's nodes, and
        identical nodes are shared."""
        if not any(isinstance(op, list) for op in operands):
            return self.add_metadata_node(operands)
        found = self._find_metadata_tree(operands)
        if found is not None:
            return found
        n = max(self.metadata, default=-1) + 1
        self.metadata[n] = ""                   # reserved: its new operands come next
        ops = [self.add_metadata_tree(op) if isinstance(op, list) else op for op in operands]
        body = "!{" + ", ".join(ops) + "}"
        self.metadata[n] = f"!{n} = {body}"
        self._new_md[body] = n
        return f"!{n}"

    def _find_metadata_tree(self, operands: list) -> str | None:
        """The existing node that ``operands`` (lists: nodes) spell, or None."""
        ops = []
        for op in operands:
            if isinstance(op, list):
                op = self._find_metadata_tree(op)
                if op is None:
                    return None
            ops.append(op)
        if not self._new_md:
            self._new_md = {_after_key(line): n for n, line in self.metadata.items() if " = !{" in line}
        n = self._new_md.get("!{" + ", ".join(ops) + "}")
        return None if n is None else f"!{n}"

    def set_function_metadata(self, name: str, kind: str, operands: list | None) -> None:
        """Attach ``!kind !{operands}`` to a function (``None`` removes the
        attachment; an operand that is a list is a node of its own)."""
        fn = self.functions[name]
        ref = None if operands is None else self.add_metadata_tree(operands)
        h = fn.header
        if fn.is_declaration:
            new = without_attachments(h, kind)
            if ref is not None:
                new = new.replace("declare ", f"declare !{kind} {ref} ", 1)
        else:
            at = fn._parsed().params_end
            tail = without_attachments(h[at:], kind)
            if ref is not None:
                tail = tail[:-2] + f" !{kind} {ref} {{"
            new = h[:at] + tail
        self.functions[name] = Function(name, new, fn.body)

    def order_function_attachments(self, name: str, rank) -> None:
        """Put a function's metadata attachments in the order of ``rank(kind)``
        (LLVM prints them sorted by metadata kind ID)."""
        fn = self.functions[name]
        h = fn.header
        if h.count("!") < 4:
            return                  # fewer than two attachments (each is "!kind !N")
        region = h if fn.is_declaration else fn.tail
        pairs = attachment_pairs(region)
        if len(pairs) < 2:
            return                  # (no rank asked: the first ask may look at the whole module)
        ordered = sorted(pairs, key=lambda p: rank(p[0]))
        if ordered == pairs:
            return
        run = "".join(f" !{k} {r}" for k, r in ordered)
        if fn.is_declaration:
            new = without_attachments(h).replace("declare", "declare" + run, 1)
        else:
            at = fn._parsed().params_end
            tail = without_attachments(h[at:])
            new = h[:at] + tail[:-2] + run + " {"
        self.functions[name] = Function(name, new, fn.body)

    def _attribute_group(self, attrs: dict[str, str | None]) -> int:
        text = _render_attributes(attrs)
        n = self._new_attrs.get(text)
        if n is None or self.attribute_groups.get(n) != text:
            texts = list(self.attribute_groups.values())        # (the first equal one, compared in C)
            n = list(self.attribute_groups)[texts.index(text)] if text in texts else None
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
        tail = _ATTR_SPAN.sub(_kept, tail).replace("  ", " ")
        if attrs:
            # canonical position: after unnamed_addr/addrspace, before section/comdat/metadata
            toks, k = tokens(tail), 0
            while k < len(toks) and toks[k][0] in ("unnamed_addr", "local_unnamed_addr", "addrspace"):
                k = closing(toks, k + 1) if toks[k][0] == "addrspace" else k + 1
            place = toks[k - 1][2] if k else 0
            tail = tail[:place] + f" #{self._attribute_group(attrs)}" + tail[place:]
        new = self.functions[name] = Function(name, head + tail, fn.body)
        self._with = {}
        if self._by_group is not None:
            self._regroup(name, fn.attribute_groups, new.attribute_groups)

    def _regroup(self, name: str, before: list[int], after: list[int]) -> None:
        """Move ``name`` in ``_functions_by_group``'s lists from the groups of
        ``before`` to those of ``after``, in module order (as made afresh;
        annotating a few kernels of a big module does not read every
        function's groups again)."""
        if before == after:
            return
        by_group = self._by_group
        for n in before:
            by_group[n].remove(name)
        position = self._positions().__getitem__
        for n in after:
            bisect.insort(by_group.setdefault(n, []), name, key=position)

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


def _as_declaration(ent):
    """The declaration of a definition (itself for a declaration); made once per
    entity (entities never change), as every image that declares it asks."""
    if ent.is_declaration:
        return ent
    if ent._decl is None:
        ent._decl = _declaration_of(ent)
    return ent._decl


def _declaration_of(ent):
    if isinstance(ent, Global):
        if ent.is_alias:
            raise IRError(f"cannot turn alias @{ent.name} into a declaration")
        words, kind, k, toks, at, _ = ent._parsed(whole=True)
        line = ent.line
        pre = line[at:at + toks[k][1]].split()
        if pre and pre[0] in _LINKAGES:
            del pre[0]
        ty_end = skip_type(toks, k + 1)
        init_end = skip_constant(toks, ty_end)
        head = line[:at] + " ".join(["external"] + pre + [kind]) + " " + line[at + toks[k + 1][1]:at + toks[ty_end - 1][2]]
        tail = []
        for part in split_operands(line[at + toks[init_end][1] + 1:]) if init_end < len(toks) and \
                toks[init_end][0] == "," else []:
            if part.startswith(("align ", "section ", "partition ", "addrspace")):
                tail.append(part.split(" #")[0] if not part.startswith(("section", "partition")) else part)
        groups = attribute_refs(line[at + toks[init_end - 1][2]:])
        text = head + "".join(f", {p}" for p in tail) + "".join(f" #{g}" for g in groups)
        return Global(ent.name, text)
    plain = _PLAIN_DEFINE.fullmatch(ent.header)
    if plain is not None and _BODY_ONLY_WORDS.isdisjoint(plain.group(4).split()):
        return Function(ent.name, _plain_declaration(plain), None)
    return Function(ent.name, _declaration_text(ent), None)


def _declaration_text(ent: Function) -> str:
    """The header of a function definition's declaration, read through the lexer."""
    h = ent._parsed()
    header = ent.header
    toks = h.prefix
    first = 2 if len(toks) > 2 and toks[1][0] in _LINKAGES and toks[1][0] != "extern_weak" else 1
    pre = header[toks[first][1]:toks[h.ret_start][1]] if first < h.ret_start else ""
    tail = header[h.params_end:]
    parts = ent.tail_parts() if any(k in tail for k in _BODY_ONLY) else {}
    for key in _BODY_ONLY:                  # what only a body may have
        if key in parts:
            s_, e_ = parts[key]
            tail = tail.replace(header[s_:e_], "", 1)
    tail = without_attachments(tail)           # like Function::deleteBody, which clears metadata
    tail = tail[:-1] if tail.endswith("{") else tail
    tail = " ".join(tail.split())
    ret_to_name = header[toks[h.ret_start][1]:h.name_end]
    return "declare " + pre + ret_to_name + _unnamed(ent.params) + (" " + tail if tail else "")


#: the clauses of a function header that only a definition may have
_BODY_ONLY = ("comdat", "prefix", "prologue", "personality")
_BODY_ONLY_WORDS = frozenset(_BODY_ONLY)
#: the header of most definitions, which ``_plain_declaration`` declares without
#: the lexer (so every virtual function declared in an image costs 2 us, not 12):
#: plain words, the return type (one word) and name, parameters of plain words
#: and a name each, then plain words, attribute groups and attachments
_PLAIN_DEFINE = re.compile(
    r'define ((?:[a-z_][a-z0-9_]* )*)([a-z_][a-z0-9_]* @[-a-zA-Z$._0-9]+)'
    r'\(((?:[a-z_][a-z0-9_]* )+%[-a-zA-Z$._0-9]+(?:, (?:[a-z_][a-z0-9_]* )+%[-a-zA-Z$._0-9]+)*)?\)'
    r'((?: [a-z0-9_]+| #[0-9]+| ![-a-zA-Z$._][-a-zA-Z$._0-9]* ![0-9]+)*) \{')


#: a plain parameter's name (the last token before a comma or the end)
_PLAIN_PARAM_NAME = re.compile(r' %[-a-zA-Z$._0-9]+(?=, |$)')
_PLAIN_ATTACHMENT = re.compile(r' ![-a-zA-Z$._][-a-zA-Z$._0-9]* ![0-9]+')


def _plain_declaration(m: re.Match) -> str:
    """``_declaration_of``'s text for a header ``_PLAIN_DEFINE`` matched (the
    same bytes as its general way: tests/passes/test_plain_declarations.py)."""
    pre = m.group(1)                        # the words before the return type, a space after each
    first, _, rest = pre.partition(" ")
    if first in _LINKAGES and first != "extern_weak":
        pre = rest
    params = m.group(3)
    tail = m.group(4)
    if "!" in tail:                         # (no string, no comment: nothing for the lexer to skip)
        tail = _PLAIN_ATTACHMENT.sub("", tail)
    return "declare " + pre + m.group(2) + "(" + (_PLAIN_PARAM_NAME.sub("", params) if params else "") + ")" + tail


#: a parameter of plain words and its name (``ptr noundef %p``): the name is its last token
_PLAIN_PARAM = re.compile(r'(?:[a-z_][a-z0-9_]* )+%[-a-zA-Z$._0-9]+')


def _unnamed(params: str) -> str:
    """A parameter list without parameter names, as LLVM prints a declaration's."""
    if "%" not in params:
        return params
    out = []
    for p in split_operands(params[1:-1]):
        if _PLAIN_PARAM.fullmatch(p):
            out.append(p[:p.rindex(" %")])
            continue
        toks = tokens(p)
        if len(toks) > 1 and toks[-1][0][0] == "%":
            p = p[:toks[-1][1]].rstrip()
        out.append(p)
    return "(" + ", ".join(out) + ")"


def _stubbed(fn: Function) -> Function:
    """``ret void`` / ``ret <ty> undef`` as the whole body; like upstream's
    deleteBody + new block, the function's metadata goes with the old body."""
    ret = fn.return_type
    body = "entry:\n  ret void\n}\n" if ret == "void" else f"entry:\n  ret {ret} undef\n}}\n"
    h = fn.header
    at = fn._parsed().params_end
    return Function(fn.name, h[:at] + without_attachments(h[at:]).replace("  ", " "), body)


def _filter_used(g: Global, keep) -> Global | None:
    """``@llvm.used`` / ``@llvm.compiler.used`` with only the members whose
    globals are all in ``keep``, edited element by element (any element type,
    ``addrspacecast`` members and the rest of the line as they were); None if
    no member is left."""
    span = g.initializer()
    if span is None:
        return g
    s, e = span
    line = g.line
    members = split_operands(line[s + 1:e - 1])
    kept = [m for m in members if all(r in keep for r in global_refs(m))]
    if not kept:
        return None
    if len(kept) == len(members):
        return g
    ts, te = g._type_span()
    ty = line[ts:te]
    toks = tokens(ty)                           # [N x T]
    new_ty = ty[:toks[1][1]] + str(len(kept)) + ty[toks[1][2]:]
    return Global(g.name, line[:ts] + new_ty + line[te:s] + "[" + ", ".join(kept) + "]" + line[e:])
