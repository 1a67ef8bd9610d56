"""Which training entry point trains each algorithm: the `concerto.trainers` entry-point group.

Each entry names an algorithm registry (a mapping keyed by algorithm name) in a module whose `main(argv) -> int`
is a training command line built on core.cli (it takes --algo, --env, --seed, --steps, --logdir, --resume,
--summary-json, --no-progress, --device and key=value overrides), and whose `evaluation_side()` (a
core.evaluation.play.Side) and `tuning_algorithm(name)` (a core.tuning.cli.Algorithm) let `scripts/evaluate.py`
and `scripts/tune.py` serve its algorithms. Ours, in setup.cfg:

    [options.entry_points]
    concerto.trainers =
        marl = marl.cli:ALGOS
        single_agent = single_agent.cli:ALGOS

A package of your own registers its trainer the same way, and its algorithms can then run in experiments.
The experiment layer finds the trainers here rather than importing marl/ or single_agent/ (core imports neither).
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from importlib import metadata
from types import ModuleType

from core.errors import UnknownNameError, UserError
from core.paths import DISTRIBUTION
from core.user_code import user_code

GROUP = "concerto.trainers"


def training_modules() -> dict[str, str]:
    """Algorithm name -> the module whose main() trains it, over every installed trainer (the first registration
    of a name, in entry-point name order, wins)."""
    modules: dict[str, str] = {}
    for point in sorted(metadata.entry_points(group=GROUP), key=lambda p: p.name):
        with user_code(f"trainer {point.name!r} ({point.value}): loading its entry point failed"):
            registry = point.load()
        if not isinstance(registry, Mapping):
            raise UserError(f"trainer {point.name!r} ({point.value}) is not a mapping of algorithm names")
        for algo in registry:
            modules.setdefault(str(algo), point.module)
    if not modules:
        raise UserError(f"no training entry points are installed (group {GROUP}): pip install concerto-marl, "
                        "or pip install -e . in the project's checkout")
    return modules


def trainer_main(name: str) -> Callable[[list[str]], int]:
    """The `main(argv) -> int` of the trainer registered under `name` (ours: marl, single_agent)."""
    points = {point.name: point for point in metadata.entry_points(group=GROUP)}
    if name not in points:
        raise UserError(f"no trainer {name!r} is installed (group {GROUP}): pip install {DISTRIBUTION}, or pip "
                        "install -e . in the project's checkout")
    with user_code(f"importing the trainer {name!r} ({points[name].value}) failed"):
        main: Callable[[list[str]], int] = importlib.import_module(points[name].module).main
    return main


def trainer_module(algo: str) -> ModuleType:
    """The training module (see above) whose registry holds `algo`; UnknownNameError for an algorithm no installed
    trainer knows. Its `evaluation_side()` and `tuning_algorithm(algo)` serve evaluate and tune."""
    modules = training_modules()
    if algo not in modules:
        raise UnknownNameError(f"unknown algorithm {algo!r}; valid algorithms: {', '.join(sorted(modules))}")
    with user_code(f"importing the trainer of {algo!r} ({modules[algo]}) failed"):
        return importlib.import_module(modules[algo])


def launch_command(module: str, args: list[str]) -> list[str]:
    """The command that runs `module`'s main(args) in a fresh Python (see core.launch)."""
    return [sys.executable, "-m", "core.launch", module, *args]


def launched(argv: list[str]) -> tuple[str, list[str]]:
    """(module, args) of a `launch_command`."""
    assert argv[1:3] == ["-m", "core.launch"] and len(argv) > 3, f"not a launch command: {argv}"
    return argv[3], argv[4:]
