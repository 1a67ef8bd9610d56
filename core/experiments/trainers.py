"""Which training entry point trains each algorithm: the `concerto.trainers` entry-point group.

Each entry names an algorithm registry (a mapping keyed by algorithm name) in a module whose `main(argv) -> int`
is a training command line built on core.cli (it takes --algo, --env, --seed, --steps, --logdir, --resume,
--summary-json, --no-progress, --device and key=value overrides). Ours, in setup.cfg:

    [options.entry_points]
    concerto.trainers =
        marl = marl.cli:ALGOS
        single_agent = single_agent.cli:ALGOS

A package of your own registers its trainer the same way, and its algorithms can then run in experiments.
The experiment layer finds the trainers here rather than importing marl/ or single_agent/ (core imports neither).
"""
from __future__ import annotations

import sys
from collections.abc import Mapping
from importlib import metadata

from core.errors import UserError
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


def launch_command(module: str, args: list[str]) -> list[str]:
    """The command that runs `module`'s main(args) in a fresh Python (see core.launch)."""
    return [sys.executable, "-m", "core.launch", module, *args]


def launched(argv: list[str]) -> tuple[str, list[str]]:
    """(module, args) of a `launch_command`."""
    assert argv[1:3] == ["-m", "core.launch"] and len(argv) > 3, f"not a launch command: {argv}"
    return argv[3], argv[4:]
