"""PettingZoo ParallelEnv face of the simulator (passes pettingzoo.test.parallel_api_test).

Observations are dicts {"observation": SMAC obs, "action_mask": int8 mask} (PettingZoo's convention);
agents that die leave `agents` (terminated); a timeout truncates everyone left; infos carry SMAC's
battle_won, dead_allies and dead_enemies.
"""
from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from envs.smac.single import SingleBattle


class SMACParallelEnv(ParallelEnv):
    metadata = {"name": "smac_v1", "render_modes": ["rgb_array"], "is_parallelizable": True}

    def __init__(self, map_name: str = "3m", seed: int | None = None, episode_limit: int | None = None,
                 render_mode: str | None = None, **flags) -> None:
        self.battle = SingleBattle(map_name, seed, episode_limit, **flags)
        self.map_name = map_name
        self.render_mode = render_mode
        self.possible_agents = [f"agent_{i}" for i in range(self.battle.n_agents)]
        self.agents: list[str] = []
        f = self.battle.core.features
        self._obs_space = spaces.Dict({"observation": spaces.Box(-1.0, 1.0, (f.obs_size,), np.float32),
                                       "action_mask": spaces.Box(0, 1, (f.n_actions,), np.int8)})
        self._action_space = spaces.Discrete(f.n_actions)
        self.state_space = spaces.Box(-np.inf, np.inf, (f.state_size,), np.float32)

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._action_space

    def state(self) -> np.ndarray:
        return self.battle.state.copy()

    def _obs_infos(self, extra: dict | None = None) -> tuple[dict, dict]:
        obs = {a: {"observation": self.battle.obs[int(a[6:])].copy(),
                   "action_mask": self.battle.avail[int(a[6:])].astype(np.int8)} for a in self.agents}
        return obs, {a: dict(extra or {}) for a in self.agents}

    def reset(self, seed: int | None = None, options: dict | None = None):
        self.battle.reset(seed)
        self.agents = list(self.possible_agents)
        return self._obs_infos()

    def step(self, actions: dict):
        act = np.zeros(self.battle.n_agents, np.int64)
        for agent, action in actions.items():
            act[int(agent[6:])] = int(action)
        out = self.battle.step(act)
        alive = self.battle.alive
        info = {"battle_won": bool(out.won[0]), "dead_allies": int(out.dead_allies[0]),
                "dead_enemies": int(out.dead_enemies[0])}
        ended, timeout = bool(out.ended[0]), bool(out.timeout[0])
        rewards = {a: float(out.reward[0]) for a in self.agents}
        terms = {a: ended or not alive[int(a[6:])] for a in self.agents}
        truncs = {a: timeout and not terms[a] for a in self.agents}
        obs, infos = self._obs_infos(info)
        self.agents = [a for a in self.agents if not (terms[a] or truncs[a])]
        return obs, rewards, terms, truncs, infos

    def render(self):
        from envs.smac.render import render_frame

        return render_frame(self.battle.core, 0)

    def close(self) -> None:
        pass
