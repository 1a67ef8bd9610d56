"""PettingZoo and gymnasium envs that fail on purpose, for the run-guarantee tests (gymnasium ones register on
import: `--env tests.fault_envs:ConcertoFaulty-v0`)."""
from __future__ import annotations

import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from tests.toy_envs import DeathEnv


class HangingEnv(DeathEnv):
    """DeathEnv whose `hang_at`-th step (counted over the env's life) never returns; `marker` is written first."""

    def __init__(self, hang_at: int, marker: str = "") -> None:
        super().__init__(lifetimes=(50, 50), max_steps=10)
        self.hang_at, self.marker, self.calls = hang_at, marker, 0

    def step(self, actions):
        self.calls += 1
        if self.calls == self.hang_at:
            if self.marker:
                Path(self.marker).touch()
            time.sleep(3600)
        return super().step(actions)


def hanging_env(hang_at: int = 5, marker: str = "") -> HangingEnv:
    return HangingEnv(hang_at, marker)


class FaultyEnv(gym.Env):
    """CartPole-like stand-in whose `fault_at`-th step (counted over the env's life) returns a NaN reward
    (`fault="nan_reward"`), raises (`"raise"`) or never returns (`"hang"`)."""

    def __init__(self, fault: str = "nan_reward", fault_at: int = 50) -> None:
        self.observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.fault, self.fault_at, self.calls = fault, fault_at, 0

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.calls += 1
        reward = 1.0
        if self.calls == self.fault_at:
            if self.fault == "raise":
                raise ValueError("scripted env failure")
            if self.fault == "hang":
                time.sleep(3600)
            reward = float("nan")
        return np.zeros(2, np.float32), reward, False, False, {}


gym.register("ConcertoFaulty-v0", entry_point=f"{__name__}:FaultyEnv", max_episode_steps=20)
