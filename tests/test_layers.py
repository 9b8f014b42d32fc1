"""The layers' one-way flow, checked from the code's own imports (docs/ARCHITECTURE.md).

cli -> run -> {probe, analysis, store, present, doc} -> model. Every import counts, also those inside a
function (lazy, for start-up time) or under TYPE_CHECKING: a lazy import is still a dependency."""

from __future__ import annotations

import ast
import os
from collections import defaultdict

import disksleuth

PACKAGE_DIR = os.path.dirname(os.path.abspath(disksleuth.__file__))

# Modules at the top of the package that everything may use: they import nothing above model.
LEAVES = {"errors", "units", "profiles", "outfile", "infile", "serials", "pkg"}
# What each layer may import, besides itself and the leaves.
ALLOWED = {
    "__main__": {"cli"},
    "cli": {"run", "store", "present", "doc", "model"},  # a command never calls probe/ or analysis/ itself
    "run": {"probe", "analysis", "store", "present", "doc", "model"},
    "present": {"analysis", "doc", "model"},
    "store": {"doc", "model"},
    "doc": {"analysis", "model"},
    "probe": {"model"},
    "analysis": {"model"},
    "model": set(),
    **{leaf: {"model"} for leaf in LEAVES},
}


def _modules() -> dict[str, str]:
    found: dict[str, str] = {}
    for folder, _dirs, files in os.walk(PACKAGE_DIR):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, os.path.dirname(PACKAGE_DIR))[:-3].replace(os.sep, ".")
                found[rel.removesuffix(".__init__")] = path
    return found


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "pkg"


def _imports(modules: dict[str, str]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in modules.items():
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from . import x / from .y import z
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                submodules = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules]
                # `from pkg import submodule` depends on the submodule, not on what pkg/__init__ defines
                names = submodules if len(submodules) == len(node.names) else [base, *submodules]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                if name in modules and name != module:
                    graph[module].add(name)
    return graph


def test_no_upward_or_sideways_imports() -> None:
    graph = _imports(_modules())
    wrong = sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if _layer(target) != _layer(module)
        and _layer(target) not in LEAVES | ALLOWED.get(_layer(module), set())
    )
    assert wrong == []


def test_no_import_cycles() -> None:
    graph = _imports(_modules())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(_modules()):
        if module not in index:
            visit(module)
    assert cycles == []


def test_the_check_sees_an_upward_import() -> None:
    """The graph is read right: present/health_view importing probe would be caught."""
    modules = _modules()
    graph = _imports(modules)
    assert "disksleuth.probe.claim" in graph["disksleuth.run.bench"]
    assert "disksleuth.model.run" in graph["disksleuth.present.health_view"]  # a lazy import inside a function
