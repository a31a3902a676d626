"""Names of local variables: the block scopes of the body being checked, and
the *boundaries* (the function body, each ``if_device``/``if_host`` block) whose
lambda-like functions capture the outer locals they use."""
from __future__ import annotations

from ..symbols import LocalSym
from .context import Part


class Boundary:
    """A function body or an if_device/if_host block: the unit that captures outer locals."""
    __slots__ = ("captures", "loops", "kind")

    def __init__(self, kind):
        self.kind, self.captures, self.loops = kind, [], 0


class Scopes(Part):
    """Block scopes, with constant-time lookup: ``visible`` maps each name to the
    locals of that name in the open scopes, innermost last; each scope (a dict
    name -> LocalSym) says which entries to drop when it closes.  (Walking the
    scope chain instead costs the nesting depth per name: quadratic for a long
    ``else if`` chain.)"""

    def __init__(self, cx):
        super().__init__(cx)
        self.scopes: list[dict] = []
        self.visible: dict[str, list[LocalSym]] = {}
        self.bounds: list[Boundary] = []

    def enter_function(self) -> Boundary:
        """Start a function body: one scope (its parameters) in a fresh boundary."""
        body = Boundary("function")
        self.bounds = [body]
        self.scopes = []
        self.visible = {}
        self.push()
        return body

    @property
    def boundary(self) -> Boundary:
        return self.bounds[-1]

    def enter_boundary(self, kind) -> Boundary:
        bound = Boundary(kind)
        self.bounds.append(bound)
        return bound

    def leave_boundary(self) -> None:
        self.bounds.pop()

    def push(self) -> None:
        self.scopes.append({})

    def pop(self) -> None:
        visible = self.visible
        for name in self.scopes.pop():
            stack = visible[name]
            stack.pop()
            if not stack:
                del visible[name]

    def declare(self, name, sym: LocalSym) -> None:
        """``sym`` is ``name`` from here to the end of the innermost scope (a
        redefinition in the same scope replaces the first, after its error)."""
        scope = self.scopes[-1]
        if name in scope:
            self.visible[name][-1] = sym
        else:
            self.visible.setdefault(name, []).append(sym)
        scope[name] = sym

    def declared_here(self, name) -> LocalSym | None:
        """The local ``name`` of the innermost scope, if any (redefinition checks)."""
        return self.scopes[-1].get(name)

    def lookup_local(self, name) -> LocalSym | None:
        """The innermost visible local ``name``, recorded as captured by the
        boundaries between its declaration and here."""
        stack = self.visible.get(name)
        if stack is None:
            return None
        sym = stack[-1]
        self.capture(sym)
        return sym

    def capture(self, sym: LocalSym) -> None:
        """Record that the current if_device/if_host blocks use outer local ``sym``
        (work-group memory is a module-level variable: nothing to capture)."""
        if sym.workgroup:
            return
        for b in reversed(self.bounds):
            if b is sym.boundary:
                return
            if sym not in b.captures:
                b.captures.append(sym)
