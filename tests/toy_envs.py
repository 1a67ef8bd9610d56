"""Small deterministic PettingZoo envs for tests: scripted deaths, masks, termination and truncation."""
from __future__ import annotations

import os
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv


class DeathEnv(ParallelEnv):
    """Agent i dies (terminates) after `lifetimes[i]` steps; the episode truncates at `max_steps`.

    Obs of agent i = [i, t, seed_offset]; reward of agent i at step t = i + t; action masks in the obs dict
    ("observation"/"action_mask") forbid action 2 on odd steps. state() = [t, number alive].
    """

    metadata = {"name": "death_env_v0"}

    def __init__(self, lifetimes: tuple[int, ...] = (2, 5, 100), max_steps: int = 6, fail_at: int | None = None,
                 crash_at: int | None = None) -> None:
        self.possible_agents = [f"unit_{i}" for i in range(len(lifetimes))]
        self.lifetimes = lifetimes
        self.max_steps = max_steps
        self.fail_at, self.crash_at = fail_at, crash_at
        self.agents: list[str] = []
        self.t = 0
        self.offset = 0.0

    OBS_SPACE = spaces.Dict({"observation": spaces.Box(-1e6, 1e6, (3,), np.float32),
                             "action_mask": spaces.Box(0, 1, (3,), np.int8)})

    def observation_space(self, agent):
        return self.OBS_SPACE

    def action_space(self, agent):
        return spaces.Discrete(3)

    def state(self):
        return np.array([self.t, len(self.agents)], np.float32)

    def _obs(self):
        mask = np.array([1, 1, self.t % 2 == 0], np.int8)
        return {a: {"observation": np.array([int(a[5:]), self.t, self.offset], np.float32), "action_mask": mask}
                for a in self.agents}

    def reset(self, seed=None, options=None):
        if seed is not None:
            self.offset = float(seed)
        self.agents = list(self.possible_agents)
        self.t = 0
        return self._obs(), {a: {} for a in self.agents}

    def step(self, actions):
        assert set(actions) == set(self.agents), (actions, self.agents)
        self.t += 1
        if self.fail_at is not None and self.t == self.fail_at:
            raise RuntimeError("scripted failure")
        if self.crash_at is not None and self.t == self.crash_at:
            os._exit(3)
        rewards = {a: float(int(a[5:]) + self.t) for a in self.agents}
        terms = {a: self.t >= self.lifetimes[int(a[5:])] for a in self.agents}
        trunc = self.t >= self.max_steps
        truncs = {a: trunc and not terms[a] for a in self.agents}
        obs = self._obs()
        infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agents = [a for a in self.agents if not (terms[a] or truncs[a])]
        return obs, rewards, terms, truncs, infos


def make_death_env(lifetimes: tuple[int, ...] = (2, 5, 100), max_steps: int = 6, fail_at: int | None = None,
                   crash_at: int | None = None) -> DeathEnv:
    return DeathEnv(lifetimes, max_steps, fail_at, crash_at)
