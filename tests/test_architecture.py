"""The package's shape (docs/architecture.md): no import cycle, small modules and functions, layers point down.

Imports are read from the source (function-local ones included), so a cycle hidden inside a
function is found too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "robustsvm"

#: the layers of docs/architecture.md, bottom first; a module may import only from its own layer or below.
#: An entry names a top-level module or subpackage, or a module inside a subpackage (``formats.io``); a module
#: takes the layer of its longest entry.
LAYERS = [
    {"_lazy", "exceptions", "_validation", "terms", "priors", "uncertainty", "result"},
    {"model"},
    {"objective", "formats", "formats.fingerprint", "formats.solution_format"},
    {"certificates", "conic", "duals"},
    {"backends"},
    {"distributed"},  # the distributed backends build on the in-memory ones' public modules, never the reverse
    {"solution", "problem", "formats.io", "solve_path"},
    {"estimators", "model_selection", "compare", "pq_model", "datasets", "tabular"},
    {"cli", "plotting", "reproduce", "__main__", "__init__"},
]


def _modules() -> dict[str, Path]:
    out = {}
    for f in ROOT.rglob("*.py"):
        parts = list(f.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The package modules ``name`` imports (anywhere in the file)."""
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            target = base[: len(base) - node.level + 1] if node.level else []
            target = ".".join(target + ([node.module] if node.module else [])) if node.level else node.module or ""
            for alias in node.names:
                cand = f"{target}.{alias.name}"
                found.add(cand if cand in MODULES else target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m for m in found if m in MODULES and m != name and not m.startswith(name + ".")}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _top(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _layer(name: str) -> int:
    parts = name.split(".")[1:] or ["__init__"]
    for n in range(len(parts), 0, -1):
        entry = ".".join(parts[:n])
        for k, layer in enumerate(LAYERS):
            if entry in layer:
                return k
    raise AssertionError(f"module {name} is in no layer of docs/architecture.md")


def test_every_module_has_a_layer():
    for name in MODULES:
        _layer(name)


def test_layers_only_point_down():
    up = [f"{a} -> {b}" for a, deps in GRAPH.items() for b in deps
          if a != "robustsvm" and _top(a) != "__init__" and _layer(b) > _layer(a)]
    assert not up, up


def test_no_import_cycle():
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in GRAPH:
        if v not in index:
            visit(v)
    assert not cycles, cycles


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_and_functions_stay_small(name):
    path = MODULES[name]
    text = path.read_text()
    assert len(text.splitlines()) <= 600, f"{path} has {len(text.splitlines())} lines"
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
                body = body[1:]
            if body:
                n = body[-1].end_lineno - body[0].lineno + 1
                assert n <= 120, f"{path}:{node.lineno} {node.name} has {n} lines"


def test_the_package_root_holds_the_front_only():
    """The root keeps the public front and the one path; every other concept lives in a named subpackage."""
    root_modules = sorted(p.name for p in ROOT.glob("*.py"))
    assert len(root_modules) <= 15, root_modules
