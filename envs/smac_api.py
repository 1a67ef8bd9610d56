"""PettingZoo ParallelEnv over any env with SMAC's API (smac/smacv2 StarCraft2Env, the built-in drop-in).

Observations are dicts {"observation", "action_mask"}; the team reward goes to every agent; an agent whose
only available action is the no-op is dead: it terminates and leaves `agents`. The wrapped env must be built
with continuing_episode=True so that a timeout (info["episode_limit"]) truncates instead of terminating.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

INFO_KEYS = ("battle_won", "dead_allies", "dead_enemies")


class SMACAPIParallelEnv(ParallelEnv):
    metadata: ClassVar[dict[str, Any]] = {"name": "smac_api_v1", "render_modes": ["rgb_array"],
                                          "is_parallelizable": True}

    def __init__(self, env: Any, render_mode: str | None = None, reseed: Callable[[int], None] | None = None
                 ) -> None:
        """`reseed(seed)`, where the wrapped env can restart its random stream, serves reset(seed); without it
        the seed is ignored (smac's env is seeded at construction)."""
        self.env = env
        self.render_mode = render_mode
        self._reseed = reseed
        info = env.get_env_info()
        self.n_agents, self.n_actions = info["n_agents"], info["n_actions"]
        self.episode_limit = info["episode_limit"]
        self.possible_agents = [f"agent_{i}" for i in range(self.n_agents)]
        self.agents: list[str] = []
        self._obs_space = spaces.Dict({
            "observation": spaces.Box(-1.0, 1.0, (info["obs_shape"],), np.float32),
            "action_mask": spaces.Box(0, 1, (self.n_actions,), np.int8)})
        self._action_space = spaces.Discrete(self.n_actions)
        self.state_space = spaces.Box(-np.inf, np.inf, (info["state_shape"],), np.float32)

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._action_space

    def state(self) -> np.ndarray:
        return np.asarray(self.env.get_state(), np.float32)

    def _observe(self) -> tuple[dict, np.ndarray]:
        obs = self.env.get_obs()
        masks = np.asarray(self.env.get_avail_actions(), np.int8)
        return {a: {"observation": np.asarray(obs[i], np.float32), "action_mask": masks[i]}
                for i, a in enumerate(self.possible_agents) if a in self.agents}, masks

    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None and self._reseed is not None:
            self._reseed(seed)
        self.env.reset()
        self.agents = list(self.possible_agents)
        obs, _ = self._observe()
        return obs, {a: {} for a in self.agents}

    def step(self, actions: dict):
        act = [int(actions.get(a, 0)) for a in self.possible_agents]
        reward, terminated, info = self.env.step(act)
        timeout = bool(info.get("episode_limit", False))
        ended = bool(terminated) and not timeout
        acting = list(self.agents)
        obs, masks = self._observe()  # for every agent that acted, including those that just died
        dead = {a: bool(masks[i, 0]) and not masks[i, 1:].any() for i, a in enumerate(self.possible_agents)}
        extra = {k: info[k] for k in INFO_KEYS if k in info}
        rewards = {a: float(reward) for a in acting}
        terms = {a: ended or dead[a] for a in acting}
        truncs = {a: timeout and not terms[a] for a in acting}
        self.agents = [a for a in acting if not (terms[a] or truncs[a])]
        return obs, rewards, terms, truncs, {a: dict(extra) for a in acting}

    def render(self):
        return self.env.render()

    def close(self) -> None:
        self.env.close()
