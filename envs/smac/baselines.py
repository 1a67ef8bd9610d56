"""Win rates of fixed baseline policies on the simulator, the yardstick of its fidelity (SMAC_SPEC.md §7a).

Policies: "heuristic" is the SMAC paper's heuristic as SMAC runs it (`heuristic_ai=True`: raw attack orders on
the nearest enemy, kept until it dies); "heuristic_rest" is the same policy within the available actions
(`HeuristicPolicy.act`); "random" draws uniformly among the available actions; "stop" only stops.
"""
from __future__ import annotations

from typing import Literal

import numpy as np

from envs.smac.heuristic import HeuristicPolicy
from envs.smac.vec_env import GROUP, SMACVecEnv

Policy = Literal["heuristic", "heuristic_rest", "random", "stop"]
POLICIES: tuple[Policy, ...] = ("heuristic", "heuristic_rest", "random", "stop")


def win_rate(map_name: str, policy: Policy, episodes: int, seed: int = 0, n_envs: int = 100) -> tuple[float, float]:
    """(win rate, mean return) of `policy` over exactly `episodes` episodes (the first to finish); `map_name` is
    a SMAC map or a generated smaclite_* scenario."""
    if policy not in POLICIES:
        raise ValueError(f"unknown baseline policy {policy!r}; valid: {', '.join(POLICIES)}")
    venv = SMACVecEnv(map_name, n_envs=min(n_envs, episodes), seed=seed, heuristic_ai=policy == "heuristic")
    heuristic = HeuristicPolicy(venv.core.battle) if policy == "heuristic_rest" else None
    rng = np.random.default_rng(seed)
    step = venv.reset()
    won: list[float] = []
    returns: list[float] = []
    while len(won) < episodes:
        avail = step.group_avail[GROUP]
        assert avail is not None  # SMAC's actions are discrete
        if policy == "random":
            actions = np.argmax(rng.random(avail.shape) * avail, axis=-1)
        elif heuristic is not None:
            actions = heuristic.act(avail)
        else:
            actions = np.where(avail[..., 1], 1, 0)  # stop (also the ignored input under heuristic_ai)
        step = venv.step({GROUP: actions})
        done = step.done
        won += step.episode_won[done].tolist()
        returns += step.episode_return[done].tolist()
        if heuristic is not None:
            heuristic.reset(done)
    return float(np.mean(won[:episodes])), float(np.mean(returns[:episodes]))
