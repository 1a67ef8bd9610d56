"""Command line: python scripts/train_marl.py --algo mappo --env mpe_simple_spread [key=value ...]."""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from core.cli import build_parser, run_main, train_from_args
from envs.registry import resolve
from marl.algos import ALGOS, get_algo
from marl.trainer import MarlTrainer

if TYPE_CHECKING:
    from core.evaluation.play import Side
    from core.tuning.cli import Algorithm
    from envs.vec_env import VecEnv

ENV_HELP = (
    "env: a registered name (mpe_simple_spread, smac_3m, ...) or package.module:factory returning a PettingZoo env.\n"
)


def parser() -> argparse.ArgumentParser:
    return build_parser("train_marl.py", "Train a multi-agent RL algorithm.", ", ".join(ALGOS),
                        "registered env name or package.module:factory", ENV_HELP)


def run(argv: list[str] | None = None) -> dict:
    """Parse arguments, train, and return the run summary (raises UserError on bad input)."""
    args = parser().parse_intermixed_args(argv)
    return train_from_args(args, _lookup, resolve, MarlTrainer)


def _lookup(algo: str) -> tuple[type, dict]:
    entry = get_algo(algo)
    return entry.config_class, entry.defaults


def main(argv: list[str] | None = None) -> int:
    return run_main(run, argv)


def evaluation_side() -> Side[VecEnv]:
    """How `scripts/evaluate.py` plays a saved multi-agent run (core.experiments.trainers)."""
    from marl.saved_policy import MarlSide

    return MarlSide()


def tuning_algorithm(name: str) -> Algorithm:
    """What `scripts/tune.py` needs to tune `name` (core.experiments.trainers)."""
    from core.tuning.cli import Algorithm

    entry = get_algo(name)
    return Algorithm(entry.config_class, entry.defaults, resolve, "scripts/train_marl.py")
