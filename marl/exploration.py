"""Exploration schedules: epsilon of the value-based agents and COMA (linear over env steps), epsilon-greedy
choice among the available actions, and the policy-gradient learners' run-long schedules (entropy bonus, COMA's
temperature: linear over the run)."""
from __future__ import annotations

from typing import Protocol

import numpy as np


class EpsilonSchedule(Protocol):
    """The config keys of a linear epsilon schedule (annealed by env steps)."""

    epsilon_start: float
    epsilon_finish: float
    epsilon_anneal_steps: int


def annealed_epsilon(cfg: EpsilonSchedule, env_steps: int) -> float:
    """epsilon_start moving linearly to epsilon_finish over the first epsilon_anneal_steps env steps."""
    frac = min(env_steps / max(cfg.epsilon_anneal_steps, 1), 1.0)
    return cfg.epsilon_start + frac * (cfg.epsilon_finish - cfg.epsilon_start)


def linear_schedule(start: float, final: float | None, progress: float) -> float:
    """A coefficient at `progress` (0-1) of the run: `start` throughout, or moving linearly from `start` to
    `final` when `final` is set."""
    return start if final is None else start + (final - start) * progress


def epsilon_greedy(greedy: np.ndarray, avail: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """`greedy` actions [...], each replaced with probability `epsilon` by a uniform choice among its available
    actions (`avail` [..., n_actions] bool)."""
    explore = rng.random(greedy.shape) < epsilon
    random_actions = np.argmax(rng.random(avail.shape) * avail, axis=-1)  # argmax of noise = a uniform choice
    return np.where(explore, random_actions, greedy)
