"""Call graphs over a ``Module``: direct calls, reachability, cycles, paths.

A graph is a plain mapping ``name -> [successor names]`` so a pass can add its
own edges (``propagate-aspects`` adds kernel → every function of a
virtual-function set it calls indirectly).  References through constants
(vtables, function pointers) are *not* call edges; ``Module.closure`` follows
those.
"""
from __future__ import annotations

from collections import deque
from typing import Callable, Iterable

from .ir import Module

__all__ = ["CallGraph", "sccs", "find_path", "reachable", "reachable_and_cyclic"]


class CallGraph:
    """Direct calls between the functions of one module (declarations are leaves)."""

    def __init__(self, edges: dict[str, list[str]]):
        self.edges = edges

    @classmethod
    def of(cls, module: Module, skip_bodies: Iterable[str] = ()) -> "CallGraph":
        """``skip_bodies``: functions whose calls are ignored (the ``if_host``
        helpers when looking at device code)."""
        skip = set(skip_bodies)
        funcs = module.functions
        edges = {name: ([] if name in skip else [c for c in fn.calls() if c in funcs])
                 for name, fn in funcs.items()}
        return cls(edges)

    def callees(self, name: str) -> list[str]:
        return self.edges.get(name, [])

    def reachable(self, roots: Iterable[str]) -> list[str]:
        return reachable(self.edges, roots)


def reachable(edges: dict[str, list[str]], roots: Iterable[str]) -> list[str]:
    """Every node reachable from ``roots`` (roots included), in DFS preorder."""
    seen: dict[str, None] = {}
    stack = list(reversed(list(roots)))
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen[n] = None
        stack.extend(reversed([s for s in edges.get(n, ()) if s not in seen]))
    return list(seen)


def reachable_and_cyclic(edges: dict[str, list[str]], roots: Iterable[str]) -> tuple[list[str], bool]:
    """(``reachable(edges, roots)``, whether what it reaches holds a cycle): one
    depth-first walk, which meets a cycle as an edge back to a node still on
    its path.  A caller that reports cycles then needs ``sccs`` only when
    there is one (call graphs of device code have none)."""
    state: dict[str, bool] = {}         # True: on the walk's path; False: finished
    get = edges.get
    cyclic = False
    for root in roots:
        if root in state:
            continue
        state[root] = True
        work = [(root, iter(get(root, ())))]
        while work:
            node, it = work[-1]
            for s in it:
                on_path = state.get(s)
                if on_path is None:
                    state[s] = True
                    succs = get(s)
                    if succs:
                        work.append((s, iter(succs)))
                        break
                    state[s] = False
                elif on_path:
                    cyclic = True
            else:
                state[node] = False
                work.pop()
    return list(state), cyclic


def sccs(edges: dict[str, list[str]], nodes: Iterable[str] | None = None) -> list[list[str]]:
    """Strongly connected components, callees before callers (Tarjan, iterative;
    a node without successors is its own component at once)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in (nodes if nodes is not None else edges):
        if root in index:
            continue
        succs = edges.get(root)
        if not succs:
            index[root] = counter
            counter += 1
            out.append([root])
            continue
        work = [(root, iter(succs))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for succ in it:
                if succ not in index:
                    succs = edges.get(succ)
                    index[succ] = counter
                    counter += 1
                    if not succs:
                        out.append([succ])
                        continue
                    low[succ] = index[succ]
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(succs)))
                    advanced = True
                    break
                if succ in on_stack and index[succ] < low[node]:
                    low[node] = index[succ]
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                if low[node] < low[parent]:
                    low[parent] = low[node]
            if low[node] == index[node]:
                if stack[-1] == node:
                    stack.pop()
                    on_stack.discard(node)
                    out.append([node])
                    continue
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                out.append(comp)
    return out


def find_path(edges: dict[str, list[str]], start: str, goal: Callable[[str], bool]) -> list[str] | None:
    """Shortest path ``[start, ..., g]`` to a node where ``goal(g)``, or ``None``."""
    parent: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        n = queue.popleft()
        if goal(n):
            path = [n]
            while parent[path[-1]] is not None:
                path.append(parent[path[-1]])
            return path[::-1]
        for s in edges.get(n, ()):
            if s not in parent:
                parent[s] = n
                queue.append(s)
    return None
