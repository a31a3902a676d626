"""What each device image holds (upstream's dependency graph, ``ModuleCopier``
and the clean-up of ``ModuleDesc::cleanup``).

Algorithm:
  1. Shared by every image of one split (``SplitContext.of``): the members of
     ``@llvm.compiler.used`` that stay (``device_globals.trim_compiler_used``),
     the candidates of each indirect-call type, what Internalize keeps besides
     the entry points (``"referenced-indirectly"`` and virtual functions), and
     the extra roots of the ``<GLOBAL>`` image.
  2. An image's roots: its entry points and what is left of
     ``@llvm.compiler.used``.  The copier image (``grouping``, step 5: the
     ``-split=none`` image, or the last one of that split) is the module as
     upstream's ``ModuleCopier`` keeps it after Internalize and GlobalDCE: its
     roots also hold every global variable that is not discardable (so a
     module without entry points still gives its globals) and every
     ``"referenced-indirectly"`` function (virtual functions excepted in the
     JIT flow: they live in their own images) that no other image of the
     split holds already.
  3. The image holds everything its roots reach through references, copied
     into each image that needs it; a function making an indirect call also
     reaches every defined ``"referenced-indirectly"`` function (kernels
     excepted) of the call's function type (``reachable``).  Virtual
     functions outlined elsewhere (``outlining``) are opaque: declared, not
     followed.  Device globals leave the image's ``@llvm.compiler.used``.
  4. Internalize (``internalize``): a defined function that is not one of the
     image's entry points and is neither ``"indirectly-callable"`` nor
     ``"referenced-indirectly"`` becomes ``internal``.  So a SYCL_EXTERNAL
     function is external only in the image where it is an entry point.
     Globals keep their linkage.
  5. GlobalDCE, as upstream's ``ModuleDesc::cleanup`` runs it on every image
     (split or not: its ``ModuleCopier`` cleans the ``-split=none`` image too):
     an entry point of discardable linkage (``linkonce_odr``, ``internal``, ...)
     that nothing else in the image references is deleted, with what only it
     reached, and is no entry point of the image any more
     (``live_entry_points``).  Virtual functions are exempt: upstream makes
     them external first.  Older upstream versions left the ``-split=none``
     module untouched; the newer behaviour wins (README).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..passes.ir import DISCARDABLE_LINKAGES, USED_LISTS, DifferenceView, Module, function_type, indirect_call_types
from .device_globals import trim_compiler_used
from .outlining import outlined_elsewhere
from ..passes.support.ir_contract import DEVICE_GLOBAL_SIZE, REFERENCED_INDIRECTLY

__all__ = ["SplitContext", "image_module", "live_entry_points", "reachable", "indirect_callees", "internalize", "KeptExternal"]


@dataclass
class SplitContext:
    """Step 1: what every image of one split of ``module`` shares."""
    module: Module
    jit: bool
    virtual: dict                       # "indirectly-callable" functions -> their set
    device_globals: set[str]
    compiler_used: list[str]            # what stays of @llvm.compiler.used
    indirect_callees: dict[str, list[str]]
    preserved: set[str]                 # kept external by Internalize, besides the entry points
    global_roots: list[str]             # the copier image's further roots

    @classmethod
    def of(cls, module: Module, virtual, jit: bool) -> "SplitContext":
        dgs = set(module.globals_with(DEVICE_GLOBAL_SIZE))
        dead, used = trim_compiler_used(module, dgs)
        by_type = indirect_callees(module)
        # what upstream's Internalize keeps (and so GlobalDCE too), besides the entry points
        preserved = set(module.functions_with(REFERENCED_INDIRECTLY)) | set(virtual)
        copier_roots = [n for n, g in module.globals.items()
                        if g.linkage not in DISCARDABLE_LINKAGES and n not in ("llvm.used", "llvm.compiler.used")
                        and n not in dead]
        # (in the JIT flow the virtual functions live in their set images: declared
        # here only where something refers to them, as StripDeadPrototypes leaves it)
        # (one of discardable linkage is kept by Internalize as it is, then deleted
        # by GlobalDCE when nothing uses it: no root)
        copier_roots += [n for n in module.functions if n in preserved and not module.functions[n].is_declaration
                         and not (jit and n in virtual) and module.functions[n].linkage not in DISCARDABLE_LINKAGES]
        return cls(module, jit, virtual, dgs, used, by_type, preserved, copier_roots)


def image_module(ctx: SplitContext, key: str, members: list[str], stub, copier: bool = False,
                 held=frozenset()) -> Module:
    """Steps 2 and 3: the module of the image of group ``key`` (entry points
    ``members``); ``stub``: functions whose bodies are emptied (AOT filtering);
    ``copier``: the image also holds what upstream's ``ModuleCopier`` keeps,
    but for the names in ``held`` (in another image of the split already)."""
    module = ctx.module
    outlined = outlined_elsewhere(ctx.virtual, members, ctx.jit)
    extra = ctx.compiler_used + ([r for r in ctx.global_roots if r not in held] if copier else [])
    names = reachable(module, members + extra, outlined, ctx.indirect_callees)
    droppable = _discardable_entry_points(ctx, members)
    if droppable:       # step 5: only what the other roots reach keeps them
        live = set(reachable(module, [m for m in members if m not in droppable] + extra, outlined,
                             ctx.indirect_callees))
        if not droppable <= live:
            names = [n for n in names if n in live]
    # (``names`` is closed under references, but for the opaque functions, which
    # become declarations, and the used lists, which reference only what they keep:
    # extract need not look for what they reference again)
    part = module.extract(names + (["llvm.compiler.used"] if ctx.compiler_used else []), declare=outlined,
                          stub=stub, name=key, closed=True)
    if any(used in part.globals for used in USED_LISTS):     # (most images have neither list)
        part.filter_used_lists(DifferenceView(part.globals.keys() | part.functions.keys(), ctx.device_globals))
    return part


def _discardable_entry_points(ctx: SplitContext, members: list[str]) -> set[str]:
    """The entry points of step 5 that GlobalDCE may delete: discardable
    linkage, not virtual functions."""
    functions = ctx.module.functions
    return {m for m in members if functions[m].linkage in DISCARDABLE_LINKAGES and m not in ctx.virtual}


def live_entry_points(part: Module, members: list[str]) -> list[str]:
    """``members`` that ``part`` still defines (step 5 may have deleted some)."""
    functions = part.functions
    return [m for m in members if m in functions and not functions[m].is_declaration]


def indirect_callees(module: Module) -> dict[str, list[str]]:
    """Function type → the defined ``"referenced-indirectly"`` functions of that
    type (kernels excepted: they cannot be called), the candidates of an
    indirect call in upstream's dependency graph."""
    out: dict[str, list[str]] = {}
    for name in module.functions_with(REFERENCED_INDIRECTLY):
        fn = module.functions[name]
        if not fn.is_declaration and not fn.is_kernel:
            out.setdefault(function_type(fn), []).append(name)
    return out


def reachable(module: Module, roots: list[str], opaque, by_type: dict[str, list[str]]) -> list[str]:
    """``Module.closure`` plus upstream's indirect-call edges: a function that
    makes an indirect call reaches every candidate of the call's type.

    Then upstream's clean-up: Internalize leaves a ``"referenced-indirectly"``
    function as it is, so GlobalDCE deletes one of discardable linkage
    (``internal``, ``linkonce_odr``, ...) that nothing live uses, with what
    only it reached; the non-discardable ones the closure took in stay, as
    roots of their own."""
    names = module.closure(roots, skip_bodies_of=opaque)
    if not by_type:
        return names
    seen, looked, joined = set(names), set(), []
    while True:
        extra = []
        for n in names:
            fn = module.functions.get(n)
            if n in looked or fn is None or fn.is_declaration or n in opaque:
                continue
            looked.add(n)
            for sig in sorted(indirect_call_types(fn.body or "")):
                extra.extend(c for c in by_type.get(sig, ()) if c not in seen and c not in extra)
        if not extra:
            break
        joined += extra
        more = [n for n in module.closure(extra, skip_bodies_of=opaque) if n not in seen]
        seen.update(more)
        names = names + more
    if all(module.functions[c].linkage not in DISCARDABLE_LINKAGES for c in joined):
        return names
    preserved = module.functions_with(REFERENCED_INDIRECTLY)
    kept = [n for n in names if n in preserved and n not in opaque and not module.functions[n].is_declaration
            and module.functions[n].linkage not in DISCARDABLE_LINKAGES]
    return module.closure(list(roots) + kept, skip_bodies_of=opaque)


class KeptExternal:
    """What Internalize keeps external in one image: its entry points and the
    split's preserved functions, without building their union per image."""

    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = set(a), b

    def __contains__(self, name) -> bool:
        return name in self.a or name in self.b


_INTERNALIZABLE = frozenset(("external", "weak", "weak_odr", "linkonce", "linkonce_odr"))


def _keeps_linkage(fn, name: str, keep: set[str]) -> bool:
    """Whether ``internalize`` leaves function ``fn`` as it is: kept by name, a
    linkage it does not take (internal already, ``available_externally``...), or
    ``dllexport``."""
    return fn.linkage not in _INTERNALIZABLE or name in keep or " dllexport " in fn.header


def internalize(part: Module, keep: set[str]) -> list[str]:
    """Upstream's Internalize step of ``ModuleDesc::cleanup`` on one image: every
    defined function not in ``keep`` with an external-ish linkage (``external``,
    ``weak``, ``weak_odr``, ``linkonce``, ``linkonce_odr``; not
    ``available_externally`` nor ``dllexport``) becomes ``internal`` with default
    visibility.  A comdat that only this function uses is dropped; one shared
    with an entity that stays external keeps its members external, as LLVM's
    pass does.  Returns the internalized names."""
    comdat_of = {}
    for name, ent in list(part.functions.items()) + list(part.globals.items()) if part.comdats else ():
        if ent.is_declaration:
            continue
        key = ent.comdat()
        if key is not None:
            comdat_of[name] = key

    def stays_external(name):
        fn = part.functions.get(name)
        return fn is None or _keeps_linkage(fn, name, keep)
    external_comdats = {k for n, k in comdat_of.items() if stays_external(n)}
    done = []
    for name, fn in list(part.functions.items()):
        if fn.body is None or _keeps_linkage(fn, name, keep) or comdat_of.get(name) in external_comdats:
            continue
        key = comdat_of.get(name)
        alone = key is not None and sum(1 for k in comdat_of.values() if k == key) == 1
        part.make_internal(name, drop_comdat=alone)
        if alone:
            part.comdats.pop(key, None)
        done.append(name)
    return done
