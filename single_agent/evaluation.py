"""Greedy evaluation of a single-agent learner over exactly N episodes."""
from __future__ import annotations

import numpy as np

from core.evaluation import EpisodeTally
from single_agent.vec_env import TransitionVecEnv


def evaluate(agent, env: TransitionVecEnv, n_episodes: int, seed: int | None = None,
             deterministic: bool = True) -> dict[str, float]:
    """eval/... metrics of `n_episodes` episodes (split evenly over the env's copies)."""
    tally = EpisodeTally(env.n_envs, n_episodes)
    env.reset(seed=seed)
    while tally.running:
        tr = env.step(agent.env_action(agent.act(env.obs, explore=not deterministic, rng=np.random.default_rng())))
        if tr.finished is not None:
            done = tr.terminated | tr.truncated
            tally.record(done, tr.finished.returns, tr.finished.lengths, tr.finished.wins)
    return tally.metrics()
