"""The import rules of the tree (issue 16): how anyone checks the layering.

    passes/support   infrastructure (diagnostics, knobs, outputs, the CLI root): imports nothing else
    device_configs   the aspect table and the device configs: support
    passes/ir        the IR layer: support
    frontend         the kernel language: support, device_configs, passes/ir, the pass registry
                     and manager (to run the device-code checks, ``check-device-code``, on what
                     it emits: the IR passes are the one engine for those rules)
    passes           the pass registry, manager and passes: support, device_configs, passes/ir
    postlink         split, properties, bundles: support, device_configs, passes/ir, passes
    driver           the build pipeline and the commands that run it (``postlink/build.py``,
                     ``postlink/cli.py``): all of the above, the front end included
    runtime          support, device_configs, the IR layer's public API (``minisycl.passes.ir``
                     itself, public names only), the pass registry and manager (to run a pipeline),
                     the bundle format (``postlink.bundle``, ``postlink.propertyset``), the build
                     (``postlink.build``: building from sources needs the whole compiler) — never a
                     pass module or post-link internals

Every import counts, at module level or inside a function, and so does a plug-in:
a command or pass registered as an entry point (``pyproject.toml``, read by
``passes/support/plugins.py``) imports the registry it plugs into (the command
root, ``passes/support/cli.py``; the pass registry, ``minisycl.passes``).  No
exceptions, and no module takes part in an import circle.
"""
import ast
import os
import tomllib
from importlib import metadata

import pytest

from minisycl.passes.callgraph import sccs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = ["frontend", "passes", "postlink", "runtime", "device_configs"]

#: layer -> layers it may import (a layer always imports itself)
ALLOWED = {
    "support": set(),
    "device_configs": {"support"},
    "ir": {"support"},
    # the pass registry and manager only: the front end runs the device-code checks' pipeline
    "frontend": {"support", "device_configs", "ir", "passes:registry"},
    "passes": {"support", "device_configs", "ir"},
    "postlink": {"support", "device_configs", "ir", "passes"},
    "driver": {"support", "device_configs", "ir", "frontend", "passes", "postlink"},
    "runtime": {"support", "device_configs", "ir:public", "passes:registry", "postlink:bundle", "driver:build"},
}
#: the modules of the driver layer (they live in postlink/, the build's last stage)
DRIVER = {"minisycl.postlink.build", "minisycl.postlink.cli"}
#: entry-point group -> the registry its plug-ins import
REGISTRIES = {"minisycl.commands": "minisycl.passes.support.cli", "minisycl.passes": "minisycl.passes"}


def layer(module: str) -> str:
    parts = module.split(".")
    if module in DRIVER:
        return "driver"
    if parts[1] == "passes" and len(parts) > 2 and parts[2] in ("support", "ir"):
        return parts[2]
    return parts[1]


def modules():
    for folder in FOLDERS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
            for f in sorted(files):
                if f.endswith(".py"):
                    path = os.path.join(dirpath, f)
                    rel = os.path.relpath(path, ROOT)[:-3].split(os.sep)
                    if rel[-1] == "__init__":
                        rel = rel[:-1]
                    yield "minisycl." + ".".join(rel), path


def imports(module: str, path: str):
    """(imported module, names taken from it, line) for every import in ``path``."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    package = module if path.endswith("__init__.py") else module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("minisycl"):
                    yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("minisycl"):
                continue
            names = [a.name for a in node.names]
            # ``from . import x`` may name a submodule
            subs = [f"{target}.{n}" for n in names if os.path.exists(_path_of(f"{target}.{n}") or "")]
            if subs:
                for s in subs:
                    yield s, [], node.lineno
                names = [n for n in names if f"{target}.{n}" not in subs]
                if not names:
                    continue
            yield target, names, node.lineno


def _path_of(module: str) -> str | None:
    rel = module.split(".")[1:]
    for candidate in (os.path.join(ROOT, *rel) + ".py", os.path.join(ROOT, *rel, "__init__.py")):
        if os.path.exists(candidate):
            return candidate
    return None


#: packages of device back ends: what they may import of the runtime
BACKENDS = ("minisycl.runtime.cuda",)
BACKEND_INTERFACE = "minisycl.runtime.backend"


def allowed(src: str, target: str, names: list[str]) -> str | None:
    """None when ``src`` may import ``names`` from ``target``; else why not."""
    a, b = layer(src), layer(target)
    for package in BACKENDS:
        if (src == package or src.startswith(package + ".")) and b == "runtime" and target != BACKEND_INTERFACE \
                and not (target == package or target.startswith(package + ".")):
            return f"a device back end ({package}) uses the runtime through {BACKEND_INTERFACE} only"
    if a == b:
        return None
    rules = ALLOWED[a]
    if b in rules:
        return None
    if b == "ir" and "ir:public" in rules:
        if target != "minisycl.passes.ir":
            return "the runtime uses the IR layer's public API (minisycl.passes.ir), not its submodules"
        private = [n for n in names if n.startswith("_")]
        return f"private names {private} of the IR layer" if private else None
    if b == "passes" and "passes:registry" in rules and target in ("minisycl.passes", "minisycl.passes.manager"):
        return None
    if b == "postlink" and "postlink:bundle" in rules and target in ("minisycl.postlink.bundle",
                                                                       "minisycl.postlink.propertyset"):
        return None
    if b == "driver" and "driver:build" in rules and target == "minisycl.postlink.build":
        return None
    return f"layer {a} may not import layer {b}"


def entry_points() -> dict[str, dict[str, str]]:
    """group -> {name: "module:attribute"}: the plug-ins ``pyproject.toml`` registers."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        groups = tomllib.load(fh)["project"]["entry-points"]
    return {g: dict(groups[g]) for g in REGISTRIES}


PLUGINS = entry_points()
GRAPH = {m: list(imports(m, p)) for m, p in modules()}
for _group, _entries in PLUGINS.items():
    for _target in _entries.values():
        _module = _target.split(":")[0]
        if _module in GRAPH:        # (test_plugins_are_defined_where_registered says when not)
            GRAPH[_module].append((REGISTRIES[_group], [], 0))


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_follow_the_layers(module):
    bad = [f"line {line}: {target}: {why}" for target, names, line in GRAPH[module]
           if (why := allowed(module, target, names))]
    assert bad == []


def test_no_import_circles():
    """Strongly connected components (the call graph's Tarjan) over every import (a package's
    ``__init__`` importing its own submodules is the one edge left out: that is
    how a package re-exports)."""
    def own_submodule(m, t):
        return (_path_of(m) or "").endswith("__init__.py") and t.startswith(m + ".")
    edges = {m: sorted({t for t, _, _ in GRAPH[m] if t in GRAPH and t != m and not own_submodule(m, t)})
             for m in GRAPH}
    circles = [sorted(c) for c in sccs(edges, sorted(edges)) if len(c) > 1]
    assert circles == []


def _defines(module: str, attr: str) -> ast.AST | None:
    with open(_path_of(module) or "", encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    return next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == attr), None)


def _registered_name(node) -> str | None:
    """The name a module gives its command (``@click.command("name")``) or pass (``name = "..."``)."""
    if isinstance(node, ast.FunctionDef):
        for d in node.decorator_list:
            if isinstance(d, ast.Call) and getattr(d.func, "attr", None) == "command" and d.args:
                return d.args[0].value
    if isinstance(node, ast.ClassDef):
        for n in node.body:
            if (isinstance(n, (ast.Assign, ast.AnnAssign)) and isinstance(n.value, ast.Constant)
                    and "name" in [t.id for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                                   if isinstance(t, ast.Name)]):
                return n.value.value
    return None


@pytest.mark.parametrize("group", sorted(REGISTRIES))
def test_plugins_are_defined_where_registered(group):
    """Each entry point names a command or pass its module defines, under the name
    the module gives it: the registry learns nothing the module does not say."""
    bad = []
    for name, target in PLUGINS[group].items():
        module, _, attr = target.partition(":")
        node = _defines(module, attr) if module in GRAPH else None
        if node is None:
            bad.append(f"{name}: {target} is not defined")
        elif _registered_name(node) != name:
            bad.append(f"{name}: {target} calls itself {_registered_name(node)!r}")
    assert bad == []


@pytest.mark.parametrize("group", sorted(REGISTRIES))
def test_installed_plugins_are_the_trees(group):
    """The installed metadata (what the command root and the pass registry read)
    registers what ``pyproject.toml`` does: an install older than the tree fails here."""
    installed = {ep.name: ep.value for ep in metadata.distribution("minisycl").entry_points if ep.group == group}
    assert installed == PLUGINS[group], "reinstall minisycl (pip install -e .)"


def test_the_registries_read_the_entry_points():
    from minisycl.passes import PASSES
    from minisycl.passes.support.cli import commands
    assert PASSES == PLUGINS["minisycl.passes"] and commands() == PLUGINS["minisycl.commands"]


def test_a_missing_registration_is_a_clear_error():
    from minisycl.passes.support import plugins
    from minisycl.passes.support.diagnostics import UserError
    with pytest.raises(UserError, match=r"reinstall it \(pip install -e \.\)"):
        plugins.registered("minisycl.no-such-group")
