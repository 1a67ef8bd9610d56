"""Layers import downwards only: core/ imports nothing from envs/, marl/ or single_agent/; envs/ nothing from
marl/ or single_agent/ (also inside functions). Upper layers reach core through entry points instead. No file
imports itself through others: an import cycle means a shared piece wants a module of its own."""
from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {"core": {"envs", "marl", "single_agent"}, "envs": {"marl", "single_agent"}}
PACKAGES = ("core", "envs", "marl", "single_agent")


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, module: str) -> Iterator[tuple[str, ...]]:
    """For each name that `path` (module `module`) imports, at module level or inside functions, the modules it
    may be, most specific first (`from a import b`: a.b if b is a module, else a); relative imports resolved."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from ((alias.name,) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parents = package.split(".")[:len(package.split(".")) - node.level + 1] if package else []
                base = ".".join([*parents, *([node.module] if node.module else [])])
            yield from ((f"{base}.{alias.name}", base) for alias in node.names)


def imported_packages(path: Path) -> set[str]:
    return {candidates[-1].split(".")[0] for candidates in imports(path, module_name(path, path.parent))}


def import_graph(root: Path, packages: Iterable[str]) -> dict[str, set[str]]:
    """Module -> the modules of `packages` under `root` that it imports (a package's __init__ only where a name
    is taken from it, not for reaching its submodules)."""
    files = {module_name(p, root): p for package in packages for p in sorted((root / package).rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        found = (next((m for m in candidates if m in files), None) for candidates in imports(path, module))
        graph[module] = {target for target in found if target is not None and target != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The groups of modules that import each other, directly or through others."""
    def reachable(start: str) -> set[str]:
        seen: set[str] = set()
        todo = list(graph[start])
        while todo:
            if (module := todo.pop()) not in seen:
                seen.add(module)
                todo.extend(graph[module])
        return seen

    reach = {module: reachable(module) for module in graph}
    return sorted({tuple(sorted(m for m in reach[module] if module in reach[m]))
                   for module in graph if module in reach[module]})


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_imports_nothing_above_it(layer):
    offenders = {str(p.relative_to(ROOT)): sorted(imported_packages(p) & FORBIDDEN[layer])
                 for p in sorted((ROOT / layer).rglob("*.py"))}
    assert {p: names for p, names in offenders.items() if names} == {}
    assert len(offenders) > 5  # the walk found the layer's modules


def test_the_check_sees_imports_inside_functions(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from marl.algos import ALGOS\n    import single_agent.cli\n")
    assert imported_packages(module) == {"marl", "single_agent"}


def test_no_module_imports_itself_through_others():
    graph = import_graph(ROOT, PACKAGES)
    assert cycles(graph) == []
    assert len(graph) > 100 and sum(map(len, graph.values())) > 300  # the walk found modules and their imports


def test_the_cycle_check_sees_relative_and_function_level_imports(tmp_path):
    files = {"__init__.py": "from pkg.c import C\n",  # re-exports: reaching pkg.c is no import of pkg
             "a.py": "from pkg.b import helper\n",
             "b.py": "def helper():\n    from . import a\n",
             "c.py": "from pkg import b\nC = 1\n"}
    (tmp_path / "pkg").mkdir()
    for name, text in files.items():
        (tmp_path / "pkg" / name).write_text(text)
    graph = import_graph(tmp_path, ["pkg"])
    assert graph == {"pkg": {"pkg.c"}, "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}, "pkg.c": {"pkg.b"}}
    assert cycles(graph) == [("pkg.a", "pkg.b")]
