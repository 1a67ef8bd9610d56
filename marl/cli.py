"""Command line: python scripts/train_marl.py --algo mappo --env mpe_simple_spread [key=value ...]."""
from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from core.cli import build_parser, run_main, train_from_args
from envs.registry import check_env_options, make_vec, resolve
from marl.algos import ALGOS, get_algo
from marl.trainer import MarlTrainer

if TYPE_CHECKING:
    from core.evaluation.play import Side
    from core.experiments.trainers import Algorithm
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


def algorithm(name: str) -> Algorithm:
    """What `scripts/experiment.py` and `scripts/tune.py` check runs of `name` with (core.experiments.trainers)."""
    from core.experiments.trainers import Algorithm

    entry = get_algo(name)
    return Algorithm(entry.config_class, entry.defaults, _check_env, "scripts/train_marl.py")


def _check_env(env: str, options: Mapping[str, Any]) -> None:
    """UserError for an env name or env options a run would refuse, found by making one copy of the env without
    resetting it (milliseconds): a factory taking **kwargs, as mpe_* and smac_* do, checks its options only then."""
    check_env_options(options)
    make_vec(env, 1, "sync", **options).close()
