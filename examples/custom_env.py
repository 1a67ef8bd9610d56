"""A user's own PettingZoo ParallelEnv, trainable without touching the package:

    python scripts/train_marl.py --algo mappo --env examples.custom_env:make_env --steps 20000

or registered under a name from user code:

    import envs
    from examples.custom_env import make_env
    envs.register("signal_game", make_env, n_agents=3)

Signal game: every step all agents see the same random signal (one of `n_signals`) and score 1 together
when every agent picks the action equal to the signal. One action is forbidden each step (its index is
given in infos[agent]["action_mask"]), and the signal never equals the forbidden action.
"""
from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv


class SignalGame(ParallelEnv):
    metadata = {"name": "signal_game_v0", "render_modes": []}

    def __init__(self, n_agents: int = 2, n_signals: int = 4, max_steps: int = 10) -> None:
        self.possible_agents = [f"player_{i}" for i in range(n_agents)]
        self.agents: list[str] = []
        self.n_signals, self.max_steps = n_signals, max_steps
        self._obs_space = spaces.Box(0.0, 1.0, (n_signals,), np.float32)
        self._action_space = spaces.Discrete(n_signals)
        self._rng = np.random.default_rng()
        self._t = 0
        self._signal = 0
        self._forbidden = 0

    def observation_space(self, agent: str) -> spaces.Box:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._action_space

    def state(self) -> np.ndarray:
        out = np.zeros(2 * self.n_signals, np.float32)
        out[self._signal] = 1.0
        out[self.n_signals + self._forbidden] = 1.0
        return out

    def _draw(self) -> tuple[dict, dict]:
        self._forbidden = int(self._rng.integers(self.n_signals))
        self._signal = int((self._forbidden + 1 + self._rng.integers(self.n_signals - 1)) % self.n_signals)
        obs = np.zeros(self.n_signals, np.float32)
        obs[self._signal] = 1.0
        mask = np.ones(self.n_signals, np.int8)
        mask[self._forbidden] = 0
        return {a: obs.copy() for a in self.agents}, {a: {"action_mask": mask.copy()} for a in self.agents}

    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.agents = list(self.possible_agents)
        self._t = 0
        return self._draw()

    def step(self, actions: dict):
        if any(actions[a] == self._forbidden for a in self.agents):
            raise ValueError(f"action {self._forbidden} is masked this step")
        reward = float(all(actions[a] == self._signal for a in self.agents))
        self._t += 1
        truncated = self._t >= self.max_steps
        rewards = {a: reward for a in self.agents}
        terms = {a: False for a in self.agents}
        truncs = {a: truncated for a in self.agents}
        obs, infos = self._draw()
        if truncated:
            self.agents = []
        return obs, rewards, terms, truncs, infos


def make_env(n_agents: int = 2, n_signals: int = 4, max_steps: int = 10) -> SignalGame:
    """Factory for --env examples.custom_env:make_env (keyword arguments come from env.KEY=VALUE)."""
    return SignalGame(n_agents, n_signals, max_steps)
