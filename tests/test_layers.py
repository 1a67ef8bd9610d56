"""Layers import downwards only: core/ imports nothing from envs/, marl/ or single_agent/; envs/ nothing from
marl/ or single_agent/ (also inside functions). Upper layers reach core through entry points instead."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {"core": {"envs", "marl", "single_agent"}, "envs": {"marl", "single_agent"}}


def imported_packages(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


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
