"""`concerto COMMAND [ARGS ...]`: every command line of the project behind one installed command.

Each subcommand is the same program as its script under scripts/ (same flags, `--help`, exit statuses); the
training commands are found through the `concerto.trainers` entry points (core.experiments.trainers), so core
imports neither side.
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import NamedTuple

from core.errors import EXIT_BAD_INPUT, UserError


class Command(NamedTuple):
    summary: str
    example: str
    run: Callable[[list[str]], int]


def _trainer(name: str) -> Callable[[list[str]], int]:
    """The main() of the trainer registered as `name` (a missing or broken one is one error line)."""
    def run(argv: list[str]) -> int:
        from core.experiments.trainers import trainer_main

        try:
            main = trainer_main(name)
        except UserError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        return main(argv)
    return run


def _main_of(module: str, entry: str = "main") -> Callable[[list[str]], int]:
    """`module.<entry>(argv)`, imported only when the command runs (start-up stays cheap)."""
    def run(argv: list[str]) -> int:
        return int(getattr(importlib.import_module(module), entry)(argv))
    return run


COMMANDS = {
    "train": Command("train a multi-agent algorithm", "concerto train --algo mappo --env smac_3m",
                     _trainer("marl")),
    "train-single": Command("train a single-agent algorithm on a gymnasium env",
                            "concerto train-single --algo dqn --env CartPole-v1", _trainer("single_agent")),
    "evaluate": Command("play a trained run again: statistics, GIF or MP4",
                        "concerto evaluate runs/smac_3m/mappo/<run> --gif battle.gif",
                        _main_of("core.evaluation.cli")),
    "experiment": Command("run a grid of algorithms x envs x seeds and report on it",
                          "concerto experiment --algos mappo,qmix --envs smac_3m --seeds 5 --steps 500000",
                          _main_of("core.experiments.cli")),
    "report": Command("(re)write the report of experiment directories (IQM, intervals, plots)",
                      "concerto report experiments/<grid> [--out DIR] [--published FILE]",
                      _main_of("core.experiments.cli", entry="report_main")),
    "tune": Command("tune hyperparameters with Optuna",
                    "concerto tune --algo qmix --env smac_3m --steps 200000 --trials 30", _main_of("core.tuning.cli")),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = ["usage: concerto COMMAND [ARGS ...]   (concerto COMMAND --help for a command's flags)", "",
             "commands:"]
    lines += [f"  {name:<{width}}  {command.summary}" for name, command in COMMANDS.items()]
    lines += ["", "examples:"] + [f"  {command.example}" for command in COMMANDS.values()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from core.startup import prepare_process

    prepare_process()  # before the slow imports
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(usage())
        return 0
    if not argv or argv[0] not in COMMANDS:
        given = f"unknown command {argv[0]!r}" if argv else "a command is required"
        print(f"error: {given}; commands: {', '.join(COMMANDS)} (concerto --help)", file=sys.stderr)
        return EXIT_BAD_INPUT
    from core.cli import Parser

    previous, Parser.command_name = Parser.command_name, f"concerto {argv[0]}"  # its usage names the command
    try:
        return COMMANDS[argv[0]].run(argv[1:])
    finally:
        Parser.command_name = previous


def train_marl() -> int:
    """The `concerto-train-marl` console script: `concerto train`."""
    return main(["train", *sys.argv[1:]])


def train_single() -> int:
    """The `concerto-train-single` console script: `concerto train-single`."""
    return main(["train-single", *sys.argv[1:]])
