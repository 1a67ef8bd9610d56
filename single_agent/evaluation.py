"""Greedy evaluation of a single-agent learner over exactly N episodes."""
from __future__ import annotations

import numpy as np

from core.evaluation.episodes import EpisodeTally, Evaluation
from single_agent.vec_env import TransitionVecEnv


def evaluate(agent, env: TransitionVecEnv, n_episodes: int, seed: int | None = None,
             deterministic: bool = True) -> Evaluation:
    """eval/... metrics of `n_episodes` episodes (split evenly over the env's copies)."""
    tally = EpisodeTally(env.n_envs, n_episodes)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while tally.running:
        tr = env.step(agent.env_action(agent.act(env.obs, explore=not deterministic, rng=rng)))
        if tr.finished is not None:
            done = tr.terminated | tr.truncated
            tally.record(done, tr.finished.returns, tr.finished.lengths, tr.finished.wins)
    return tally.result()


class RandomPolicy:
    """Uniformly random actions (a baseline with the learners' `act` / `env_action` interface)."""

    def __init__(self, action_space, seed: int | None = None) -> None:
        self.space = action_space
        self.rng = np.random.default_rng(seed)

    def act(self, obs, explore: bool = True, rng: np.random.Generator | None = None) -> np.ndarray:
        n = len(next(iter(obs.values())) if isinstance(obs, dict) else obs)
        if hasattr(self.space, "n"):
            return self.space.start + self.rng.integers(0, self.space.n, n)
        return self.rng.uniform(self.space.low, self.space.high, (n, *self.space.shape)).astype(np.float32)

    def env_action(self, action: np.ndarray) -> np.ndarray:
        return action
