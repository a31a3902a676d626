"""Extraction (``module.py``'s ``Module.extract`` and ``Module.closure``): a module from a part of another.

``closure`` finds what a set of roots reaches; ``extract`` builds a module from
some definitions and the declarations they need, with the metadata nodes,
comdats, types and attribute groups they use.  Both read only those entities
and what they reference, so the cost is proportional to the part, not to the
whole module (post-link extracts one image per kernel or source).
"""
from __future__ import annotations

from bisect import bisect_left
from typing import Iterable, Self

from .edits import _as_declaration, _filter_used, _stubbed
from .entities import USED_LISTS, Function, _after_key, _joined, blockaddress_targets
from .lexer import attribute_refs, global_refs, metadata_refs, type_refs


class Extraction:
    """``Module``'s extraction methods (a mixin: ``Module`` holds the state)."""

    def closure(self, roots: Iterable[str], skip_bodies_of: Iterable[str] = ()) -> list[str]:
        """Every function and global reachable from ``roots`` through references
        (calls, constants, initialisers, personality and prefix data), not
        looking inside the bodies of the functions in ``skip_bodies_of`` (they
        are reached, what they reference is not followed).  A definition brings
        its whole comdat group, and a function whose blocks are addressed
        (``blockaddress``) is followed even when skipped: both must stay defined
        with their users, as in LLVM's GlobalDCE.  Order: discovery order
        (deterministic).  The ``llvm.used`` lists are not followed."""
        opaque, not_opaque = _membership_pair(skip_bodies_of)
        functions, globals_ = self.functions, self.globals
        partners = self._comdat_partners()
        seen: dict[str, None] = {}
        addressed: set[str] = set()
        expanded: set[str] = set()
        stack = [r for r in reversed(list(roots)) if r in functions or r in globals_]
        pop, push = stack.pop, stack.append
        while stack:
            name = pop()
            if name in expanded:
                continue
            seen[name] = None
            if name in opaque and name not in not_opaque and name not in addressed or name in USED_LISTS:
                continue            # what a skipped body reaches is not followed
            expanded.add(name)
            ent = functions.get(name)
            if ent is None:
                ent = globals_[name]
            refs = ent.refs()
            if partners:
                more = partners.get(name)
                if more:
                    refs = refs + more
            if refs:
                for t in ent.blockaddress_targets():
                    addressed.add(t)
                    if t in seen and t not in expanded:
                        push(t)
                for r in reversed(refs):
                    if r not in expanded and (r in functions or r in globals_):
                        push(r)
        return list(seen)

    def _comdat_partners(self) -> dict[str, list[str]]:
        """Definition → the other definitions of its comdat group, for groups of
        more than one (one look at every header that mentions a comdat,
        remembered until the next edit)."""
        if self._groups_of is None:
            groups: dict[str, list[str]] = {}
            if self.comdats:
                for ent in list(self.globals.values()) + list(self.functions.values()):
                    head = ent.header if isinstance(ent, Function) else ent.line
                    if "comdat" in head and not ent.is_declaration:
                        c = ent.comdat()
                        if c is not None:
                            groups.setdefault(c, []).append(ent.name)
            self._groups_of = {n: [m for m in members if m != n]
                               for members in groups.values() if len(members) > 1 for n in members}
        return self._groups_of

    def extract(self, names: Iterable[str], *, declare: Iterable[str] = (), stub: Iterable[str] = (),
                name: str | None = None, closed: bool = False) -> Self:
        """A new module with the definitions of ``names`` and a declaration of
        everything they reference but which is not among them.

        ``declare``: functions to keep only as declarations; ``stub``: functions
        whose body becomes ``ret void`` / ``ret <ty> undef``.  The ``llvm.used``
        lists keep only members that are defined in the result.  ``closed``:
        the caller knows that ``names`` already holds everything they reference
        (a ``closure`` whose skipped functions are stubbed).  Cost is
        proportional to the extracted entities.
        """
        stub = _fast_membership(stub)
        # 1. the named entities, then declarations of what they mention (one
        #    level: a declaration mentions nothing)
        chosen = self._chosen(names, declare, stub)
        blob, closed = self._keep_addressed(chosen, stub, closed)
        in_blob = len(chosen)               # (what is added below is new declarations, in order)
        if not closed:
            for n, ent in list(chosen.items()):
                if n not in USED_LISTS:
                    self._declare_missing(ent.refs(), chosen)
        # metadata the part uses, and declarations of the values it names
        nodes = self._metadata_nodes(blob)
        facts = self._md_facts
        self._declare_missing([r for n in nodes for r in facts[n][1]], chosen)
        declared = list(chosen.values())[in_blob:]     # the declarations not in ``blob`` yet
        # 2. keep module order (sorting the part, not walking the whole module)
        out = self._in_order(chosen)
        out.name = name or self.name
        out.header = list(self.header)
        out.named_metadata = dict(self.named_metadata)
        out.metadata = {n: self.metadata[n] for n in sorted(nodes)}
        self._copy_support(out, blob + "\n" + _joined(declared) if declared else blob)
        return out

    def _chosen(self, names: Iterable[str], declare, stub) -> dict[str, object]:
        """``extract``'s named entities (declared or stubbed as asked), by name."""
        functions, globals_ = self.functions, self.globals
        declare, not_declared = _membership_pair(declare)
        chosen: dict[str, object] = {}
        for n in names:
            ent = functions.get(n)
            if ent is not None:
                if n in declare and n not in not_declared:
                    ent = _as_declaration(ent)
                elif n in stub and ent.body is not None:
                    ent = _stubbed(ent)
            else:
                ent = globals_.get(n)
                if ent is None:
                    continue
            chosen[n] = ent
        return chosen

    def _keep_addressed(self, chosen: dict, stub, closed: bool) -> tuple[str, bool]:
        """A function whose blocks a kept definition addresses keeps its body:
        ``chosen`` with those definitions, and (the joined text of ``chosen``,
        whether it is still closed).  The joined text is the one place the
        part's metadata, attribute groups and types are read from, so each
        definition put back adds all its text (header too: its attachments,
        attributes and parameter types), and what its own body addresses is
        put back in turn."""
        blob = _joined(chosen.values())
        new = blob
        functions = self.functions
        while "blockaddress" in new:
            restored = []
            for t in blockaddress_targets(new):
                fn = functions.get(t)
                if fn is not None and not fn.is_declaration and chosen.get(t) is not fn:
                    chosen[t] = fn              # (declared or stubbed until now, or not chosen)
                    restored.append(fn)
            if not restored:
                break
            new = _joined(restored)
            blob += "\n" + new
            closed = False
        return blob, closed

    def _in_order(self, chosen: dict) -> Self:
        """A new module with the entities of ``chosen`` in this module's order
        (sorting the part, not walking the whole module); the ``llvm.used``
        lists keep only the members defined among them."""
        out = type(self)()
        position = self._positions().__getitem__
        order = sorted(chosen, key=position)
        first = bisect_left(order, len(self.globals), key=position)     # globals come first, then functions
        out.functions = {n: chosen[n] for n in order[first:]}
        for n in order[:first]:
            ent = chosen[n]
            if n in USED_LISTS:
                ent = _filter_used(ent, {k for k, v in chosen.items() if not v.is_declaration})
                if ent is None:
                    continue
            out.globals[n] = ent
        return out

    def _declare_missing(self, refs: Iterable[str], chosen: dict) -> None:
        """Add to ``chosen`` a declaration of each of ``refs`` it lacks."""
        functions, globals_ = self.functions, self.globals
        for r in refs:
            if r not in chosen:
                dep = functions.get(r) or globals_.get(r)
                if dep is not None:
                    chosen[r] = _as_declaration(dep)

    def _metadata_nodes(self, blob: str) -> set[int]:
        """Numbers of the metadata nodes reachable from the entities whose text
        is ``blob`` and from the named metadata (which every part keeps)."""
        if self._named_nodes is None:
            roots = [m for line in self.named_metadata.values() for m in metadata_refs(line)]
            self._named_nodes = self._reachable_nodes(roots, set())
        return self._reachable_nodes(metadata_refs(blob), set(self._named_nodes))

    def _reachable_nodes(self, roots, nodes: set[int]) -> set[int]:
        """``nodes`` with every node reachable from ``roots`` added (existing ones only)."""
        facts, metadata = self._md_facts, self.metadata
        work = [r for r in roots if r not in nodes]
        while work:
            n = work.pop()
            if n in nodes:
                continue
            f = facts.get(n)
            if f is None:
                line = metadata.get(n)
                if line is None:
                    continue
                body = _after_key(line)
                f = facts[n] = (metadata_refs(body), global_refs(body))
            nodes.add(n)
            work.extend(m for m in f[0] if m not in nodes)
        return nodes

    def _positions(self) -> dict[str, int]:
        """Entity name → place in printing order (globals first), computed once."""
        key = (len(self.globals), len(self.functions))
        if self._order is None or self._order[0] != key:
            pos = dict(zip(self.globals, range(len(self.globals))))
            pos.update(zip(self.functions, range(len(pos), len(pos) + len(self.functions))))
            self._order = (key, pos)
        return self._order[1]

    def _copy_support(self, out: Self, blob: str) -> None:
        """Copy the comdats, types and attribute groups that the entities of
        ``out`` use (one scan of ``blob``, their joined text, for each kind)."""
        # comdats
        if self.comdats and "comdat" in blob:
            for ent in list(out.globals.values()) + list(out.functions.values()):
                if not ent.is_declaration:
                    key = ent.comdat()
                    if key is not None and key in self.comdats:
                        out.comdats[key] = self.comdats[key]
        # attribute groups
        groups = set(attribute_refs(blob))
        out.attribute_groups = {n: self.attribute_groups[n] for n in sorted(groups) if n in self.attribute_groups}
        # types (transitively; the metadata's too: it may name typed constants)
        if self.types:
            md_text = "\n".join(out.metadata.values())
            if len(self.types) <= 16 and not any(t in blob or t in md_text for t in self.types):
                return      # a first look for the few names (scanning every "%" token of the part is the cost)
            used = set(type_refs(blob) + type_refs(md_text)) & self.types.keys()
            work = list(used)
            while work:
                for u in type_refs(_after_key(self.types[work.pop()])):
                    if u in self.types and u not in used:
                        used.add(u)
                        work.append(u)
            out.types = {k: line for k, line in self.types.items() if k in used}


def _membership_pair(names):
    """``names`` as (``base``, ``removed``): a name is in ``names`` when it is in
    ``base`` and not in ``removed`` (a ``DifferenceView`` taken apart, so a hot
    loop tests it with two C-level lookups, not a Python call)."""
    if isinstance(names, DifferenceView):
        return names.base, names.removed
    return _fast_membership(names), ()


def _fast_membership(names):
    """Names as something with fast ``in``: sets, dicts and views are used as they
    are (so a per-image filter over a big set costs nothing to pass)."""
    return names if hasattr(names, "__contains__") and not isinstance(names, (list, tuple, str)) else set(names)


class DifferenceView:
    """``base - removed`` for ``in`` tests, without copying ``base``: the names
    of ``base`` that are not in ``removed``."""

    __slots__ = ("base", "removed")

    def __init__(self, base, removed):
        self.base, self.removed = base, set(removed)

    def __contains__(self, name) -> bool:
        return name in self.base and name not in self.removed
