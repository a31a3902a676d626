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


class Scope(dict):
    """One block's names (name -> LocalSym), inside ``boundary``."""
    __slots__ = ("boundary",)


class Scopes(Part):
    def __init__(self, cx):
        super().__init__(cx)
        self.scopes: list[Scope] = []
        self.bounds: list[Boundary] = []

    def enter_function(self) -> Boundary:
        """Start a function body: one scope (its parameters) in a fresh boundary."""
        body = Boundary("function")
        self.bounds = [body]
        self.scopes = []
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
        s = Scope()
        s.boundary = self.bounds[-1]
        self.scopes.append(s)

    def pop(self) -> None:
        self.scopes.pop()

    def declare(self, name, sym: LocalSym) -> None:
        self.scopes[-1][name] = sym

    def declared_here(self, name) -> LocalSym | None:
        """The local ``name`` of the innermost scope, if any (redefinition checks)."""
        return self.scopes[-1].get(name)

    def lookup_local(self, name) -> LocalSym | None:
        """The innermost visible local ``name``, recorded as captured by the
        boundaries between its declaration and here."""
        for scope in reversed(self.scopes):
            sym = scope.get(name)
            if sym is not None:
                self.capture(sym)
                return sym
        return None

    def capture(self, sym: LocalSym) -> None:
        """Record that the current if_device/if_host blocks use outer local ``sym``."""
        for b in reversed(self.bounds):
            if b is sym.boundary:
                return
            if sym not in b.captures:
                b.captures.append(sym)
