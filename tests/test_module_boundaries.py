"""Module boundaries, read from the source (ast, nothing imported): no module of arenalite or
of the site builder uses another module's private names, and the metric modules and the
site builder are in no import circle (imports inside functions count too)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"arenalite": ROOT / "pkg" / "arenalite", "sitebuild": ROOT / "sitebuild"}


def modules(folder: Path) -> dict[str, tuple[ast.Module, list[str]]]:
    """Dotted module name → (its syntax tree, the package its relative imports start from)."""
    out = {}
    for path in sorted(folder.rglob("*.py")):
        parts = list(path.relative_to(folder.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        out[".".join(parts)] = (ast.parse(path.read_text(encoding="utf-8")),
                                parts if is_package else parts[:-1])
    return out


def imports(tree: ast.Module, base: list[str], known: set[str]):
    """(imported module, imported name or None, the name it is bound to, line) for each
    import of a known module; the name is None when a whole module is imported."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            head = base[:len(base) - node.level + 1] if node.level else []
            target = ".".join(head + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in known:
                    yield sub, None, alias.asname or alias.name, node.lineno
                elif target in known:
                    yield target, alias.name, alias.asname or alias.name, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    yield alias.name, None, alias.asname or alias.name, node.lineno


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(component)
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in stack:
                low[node] = min(low[node], index[child])
    return found


ALL = {name: parsed for folder in PACKAGES.values() for name, parsed in modules(folder).items()}
GRAPH = {name: {m for m, _, _, _ in imports(tree, base, set(ALL)) if m != name}
         for name, (tree, base) in ALL.items()}


def test_no_module_imports_or_reads_another_modules_private_names() -> None:
    offences = []
    for name, (tree, base) in ALL.items():
        bound = {}
        for module, imported, alias, line in imports(tree, base, set(ALL)):
            if module == name:
                continue
            if imported is None:
                bound[alias] = module
            elif private(imported):
                offences.append(f"{name}:{line} imports {module}.{imported}")
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in bound and private(node.attr)):
                offences.append(f"{name}:{node.lineno} reads {bound[node.value.id]}.{node.attr}")
    assert offences == []


@pytest.mark.parametrize("module", ["arenalite.metrics", "arenalite.subgroup",
                                    "arenalite.metric_core", "arenalite.browser",
                                    *sorted(m for m in ALL if m.startswith("sitebuild"))])
def test_module_is_in_no_import_circle(module: str) -> None:
    assert [sorted(c) for c in circles(GRAPH) if module in c] == []


def test_no_import_circle_anywhere() -> None:
    assert [sorted(c) for c in circles(GRAPH)] == []


def test_the_metric_cores_import_neither_metrics_nor_the_audit() -> None:
    assert GRAPH["arenalite.metric_core"] == set()
    assert "arenalite.metrics" not in GRAPH["arenalite.subgroup"]


def test_the_site_builder_is_not_in_the_wheel() -> None:
    """The wheel is what Pyodide installs: ``pkg/`` only, so sitebuild/ adds nothing to it."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["tool"]["setuptools"]["packages"]["find"]["where"] == ["pkg"]
    assert not (ROOT / "pkg" / "sitebuild").exists()


MODELS = ROOT / "pkg" / "arenalite" / "models"
MODEL_PACKAGES = sorted(f"arenalite.models.{p.name}" for p in MODELS.iterdir()
                        if (p / "__init__.py").is_file())
"""The checkpoint model packages under models/ (tabicl, tabpfn, tabfm, ...)."""


def _package_of(module: str) -> str | None:
    return next((p for p in MODEL_PACKAGES if module == p or module.startswith(p + ".")), None)


def test_no_model_package_imports_another() -> None:
    """What two models share lives in a shared module of models/ (ops, safetensors,
    state_dict, checkpoint_cache, yeo_johnson, wrapper_*: docs/ARCHITECTURE.md), so that a
    model is its own package and its registry entry."""
    assert {"arenalite.models.tabicl", "arenalite.models.tabpfn"} <= set(MODEL_PACKAGES)
    offences = sorted(f"{name} imports {target}" for name in ALL if _package_of(name)
                      for target in GRAPH[name]
                      if _package_of(target) not in (None, _package_of(name)))
    assert offences == []


def test_the_shared_model_modules_import_no_model_package() -> None:
    """models/__init__.py (the registry's dispatch), the shared modules and the CLI reach a
    checkpoint model only through the functions its registry entry names."""
    shared = [name for name in ALL if name.startswith("arenalite.") and not _package_of(name)]
    offences = sorted(f"{name} imports {target}" for name in shared for target in GRAPH[name]
                      if _package_of(target))
    assert offences == []
