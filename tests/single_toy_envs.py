"""Small gymnasium envs for the single-agent tests (registered on import)."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class ConstantEnv(gym.Env):
    """One state, reward 1 per step. Discrete: action 1 terminates, action 0 continues. Box: never terminates.

    With a TimeLimit and gamma 0.9, correct handling gives Q(s, continue) = V(s) = 10 (truncation bootstraps)
    and Q(s, stop) = 1 (termination does not).
    """

    def __init__(self, continuous: bool = False) -> None:
        self.observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (1,), np.float32) if continuous else spaces.Discrete(2)
        self.continuous = continuous

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return np.array([0.5, -0.5], np.float32), {}

    def step(self, action):
        terminated = (not self.continuous) and int(action) == 1
        return np.array([0.5, -0.5], np.float32), 1.0, terminated, False, {}


class DictObsEnv(gym.Env):
    """Dict observations {"pos": Box(2), "flag": Discrete(3)}; reward 1 when the action matches the flag."""

    def __init__(self) -> None:
        self.observation_space = spaces.Dict({"pos": spaces.Box(-1, 1, (2,), np.float32), "flag": spaces.Discrete(3)})
        self.action_space = spaces.Discrete(3)
        self.flag = 0

    def _obs(self):
        return {"pos": self.np_random.uniform(-1, 1, 2).astype(np.float32), "flag": self.flag}

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.flag = int(self.np_random.integers(3))
        return self._obs(), {}

    def step(self, action):
        reward = float(int(action) == self.flag)
        self.flag = int(self.np_random.integers(3))
        return self._obs(), reward, False, False, {}


gym.register("ConcertoConstant-v0", entry_point=f"{__name__}:ConstantEnv", max_episode_steps=5)
gym.register("ConcertoConstantBox-v0", entry_point=f"{__name__}:ConstantEnv", max_episode_steps=5,
             kwargs={"continuous": True})
gym.register("ConcertoDict-v0", entry_point=f"{__name__}:DictObsEnv", max_episode_steps=20)
