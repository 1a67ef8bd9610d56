#!/usr/bin/env python
"""Tune an algorithm's hyperparameters with Optuna:
python scripts/tune.py --algo qmix --env smac_3m --trials 30 --steps 200000 --seeds 3 (see --help)."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

if TYPE_CHECKING:
    from core.tuning.cli import Algorithm


def algorithm_of(name: str) -> Algorithm:
    """What tuning needs from the side (multi-agent or single-agent) that trains `name`."""
    from core.errors import UnknownNameError
    from core.tuning.cli import Algorithm
    from marl.algos import ALGOS as MARL_ALGOS
    from single_agent.algos import ALGOS as SINGLE_ALGOS

    if name in MARL_ALGOS:
        from envs.registry import resolve

        marl = MARL_ALGOS[name]
        return Algorithm(marl.config_class, marl.defaults, resolve, "scripts/train_marl.py")
    if name in SINGLE_ALGOS:
        from single_agent.vec_env import TransitionVecEnv

        single = SINGLE_ALGOS[name]
        return Algorithm(single.config_class, single.defaults, lambda env: TransitionVecEnv(env, 1).close(),
                         "scripts/train_single.py")
    raise UnknownNameError(f"unknown algorithm {name!r}; valid algorithms: "
                           f"{', '.join(sorted({*MARL_ALGOS, *SINGLE_ALGOS}))}")


def main(argv: list[str] | None = None) -> int:
    from core.tuning.cli import main as tune_main

    return tune_main(argv, algorithm_of)


if __name__ == "__main__":
    from core.signals import exit_on_signal_at_startup

    exit_on_signal_at_startup()  # before the slow imports
    sys.exit(main())
