"""Command line: python scripts/train_single.py --algo dqn --env CartPole-v1 [key=value ...]."""
from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from core.cli import build_parser, run_main, train_from_args
from core.errors import UserError
from core.user_code import import_user_module
from single_agent.algos import ALGOS, get_algo
from single_agent.trainer import SingleAgentTrainer
from single_agent.vec_env import TransitionVecEnv

if TYPE_CHECKING:
    from core.evaluation.play import Side
    from core.experiments.trainers import Algorithm

ENV_HELP = ("env: a gymnasium id (CartPole-v1, Pendulum-v1, ...), or module:EnvId to import a module that "
            "registers it first. --vec subproc is gymnasium's async vector env.\n")


def parser() -> argparse.ArgumentParser:
    p = build_parser("train_single.py", "Train a single-agent RL algorithm on a gymnasium env.", ", ".join(ALGOS),
                     "gymnasium env id", ENV_HELP)
    p.add_argument("--target-reward", type=float, help="stop once the greedy eval return reaches this")
    return p


def run(argv: list[str] | None = None) -> dict:
    """Parse arguments, train, and return the run summary (raises UserError on bad input)."""
    args = parser().parse_intermixed_args(argv)
    return train_from_args(args, _lookup, _import_env_module, SingleAgentTrainer,
                           {"target_return": args.target_reward}, report_wins=False)


def _import_env_module(env: str) -> None:
    """Import the module of a `module:EnvId` name (it registers EnvId) here, so that a module that fails to
    import, raises or exits is reported in one line naming its file; gymnasium then finds it imported."""
    module, sep, env_id = env.partition(":")
    if sep:
        if not module or not env_id:
            raise UserError(f"env {env!r} must look like module:EnvId")
        import_user_module(module, "env", env)


def _lookup(algo: str) -> tuple[type, dict]:
    entry = get_algo(algo)
    return entry.config_class, entry.defaults


def main(argv: list[str] | None = None) -> int:
    return run_main(run, argv)


def evaluation_side() -> Side[TransitionVecEnv]:
    """How `scripts/evaluate.py` plays a saved single-agent run (core.experiments.trainers)."""
    from single_agent.saved_policy import SingleAgentSide

    return SingleAgentSide()


def algorithm(name: str) -> Algorithm:
    """What `scripts/experiment.py` and `scripts/tune.py` check runs of `name` with (core.experiments.trainers)."""
    from core.experiments.trainers import Algorithm

    entry = get_algo(name)
    return Algorithm(entry.config_class, entry.defaults, _check_env, "scripts/train_single.py")


def _check_env(env: str, options: Mapping[str, Any]) -> None:
    """UserError for an env or env options a run would refuse, found by making one env: gymnasium alone knows its
    ids and what their constructors take."""
    TransitionVecEnv(env, 1, **options).close()
