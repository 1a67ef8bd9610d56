"""Command line: python scripts/train_single.py --algo dqn --env CartPole-v1 [key=value ...]."""
from __future__ import annotations

import argparse

from core.cli import build_parser, run_main, train_from_args
from single_agent.algos import ALGOS, get_algo
from single_agent.trainer import SingleAgentTrainer

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
    entry = get_algo(args.algo)
    return train_from_args(args, entry.config_class, entry.defaults, SingleAgentTrainer,
                           {"target_return": args.target_reward}, report_wins=False)


def main(argv: list[str] | None = None) -> int:
    return run_main(run, argv)
