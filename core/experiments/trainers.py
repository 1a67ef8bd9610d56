"""Which training entry point trains each algorithm: the `concerto.trainers` entry-point group.

Each entry names an algorithm registry (a mapping keyed by algorithm name) in a module whose `main(argv) -> int`
is a training command line built on core.cli (it takes --algo, --env, --seed, --steps, --logdir, --resume,
--summary-json, --no-progress, --device and key=value overrides), whose `algorithm(name)` (an `Algorithm`) lets
`scripts/experiment.py` and `scripts/tune.py` check a run's input before starting it, and whose
`evaluation_side()` (a core.evaluation.play.Side) lets `scripts/evaluate.py` play its runs. Ours, in setup.cfg:

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
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from types import ModuleType
from typing import Any, NamedTuple

from core.errors import UnknownNameError, UserError
from core.paths import DISTRIBUTION
from core.run_config import resolve_config
from core.user_code import user_code

GROUP = "concerto.trainers"


class Algorithm(NamedTuple):
    """What experiments and tuning need from the side that trains an algorithm to check a run's input."""

    config_class: type
    variant: Mapping[str, Any]  # the config values that define the variant (marl.algos.AlgoEntry.defaults)
    check_env: Callable[[str, Mapping[str, Any]], object]  # UserError for an env (with options) it cannot make
    train_script: str  # the training command a tuned config is for


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
    trainer knows. Its `algorithm(algo)` and `evaluation_side()` serve experiment, tune and evaluate."""
    modules = training_modules()
    if algo not in modules:
        raise UnknownNameError(f"unknown algorithm {algo!r}; valid algorithms: {', '.join(sorted(modules))}")
    with user_code(f"importing the trainer of {algo!r} ({modules[algo]}) failed"):
        return importlib.import_module(modules[algo])


def installed_algorithm(name: str) -> Algorithm:
    """What the installed trainer whose registry holds `name` says about it."""
    algorithm: Algorithm = trainer_module(name).algorithm(name)
    return algorithm


def check_run(algo: str, env: str, algorithm: Algorithm, config_file: str | None = None,
              cli_train: Mapping[str, Any] | None = None, overrides: Sequence[str] = ()) -> None:
    """Raise UserError for input a run of `algo` on `env` would refuse as it starts (its config layers and
    overrides, the env's name and options), so that commands starting many runs refuse it before the first."""
    _, _, env_options = resolve_config(algo, env, algorithm.config_class, algorithm.variant, config_file,
                                       cli_train, list(overrides))
    algorithm.check_env(env, env_options)


def launch_command(module: str, args: list[str]) -> list[str]:
    """The command that runs `module`'s main(args) in a fresh Python (see core.launch)."""
    return [sys.executable, "-m", "core.launch", module, *args]


def launched(argv: list[str]) -> tuple[str, list[str]]:
    """(module, args) of a `launch_command`."""
    assert argv[1:3] == ["-m", "core.launch"] and len(argv) > 3, f"not a launch command: {argv}"
    return argv[3], argv[4:]
