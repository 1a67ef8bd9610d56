"""The simulator's vector-env face: `envs.make_vec("smac_3m", n_envs=256)` steps every battle in one call."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from envs.smac.batch import make_batch
from envs.spec import AgentGroup, EnvSpec
from envs.vec_env import VecEnv, VecStep, allocate, array_layout

GROUP = "agent"


class SMACVecEnv(VecEnv):
    """Natively batched SMAC simulator. Battles that end are reset in the same step; a battle that reaches
    the episode limit is reported as truncated (SMAC itself reports a terminal step; see the README)."""

    def __init__(self, map_name: str, n_envs: int = 1, seed: int | None = None, episode_limit: int | None = None,
                 name: str | None = None, **flags) -> None:
        self.core = make_batch(map_name, n_envs, seed, episode_limit, flags)
        smac_map = self.core.map
        self.n_envs = n_envs
        self.default_seed = seed
        f = self.core.features
        agents = tuple(f"agent_{i}" for i in range(smac_map.n_agents))
        group = AgentGroup(GROUP, agents, (f.obs_size,), spaces.Discrete(f.n_actions))
        self.spec = EnvSpec(agents, (group,), (f.state_size,), name=name or f"smac_{map_name}",
                            episode_limit=self.core.limit)
        self.arrays = allocate(array_layout(self.spec, n_envs))
        self._step = VecStep(self.spec, self.arrays)
        self._returns = np.zeros(n_envs)

    def reset(self, seed: int | None = None) -> VecStep:
        seed = self.default_seed if seed is None else seed
        if seed is not None:
            self.core.seed(seed)
        everything = np.ones(self.n_envs, bool)
        self.core.reset(everything)
        self._returns[:] = 0.0
        for key in ("terminated", "truncated"):
            self.arrays[key][:] = False
        self.arrays[f"rewards/{GROUP}"][:] = 0.0
        self._write_obs(self.core.all, "")
        return self._step

    @property
    def exact_resume(self) -> bool:
        return True

    def state_dict(self) -> dict[str, Any]:
        return {"exact": True, "core": self.core.state_dict(), "returns": self._returns.copy(),
                "arrays": {k: v.copy() for k, v in self.arrays.items()}}

    def load_state_dict(self, state: dict[str, Any], reset_seed: int | None = None) -> tuple[VecStep, bool]:
        if not state["exact"]:
            return super().load_state_dict(state, reset_seed)
        self.core.load_state_dict(state["core"])
        self._returns[...] = state["returns"]
        for key, value in state["arrays"].items():
            self.arrays[key][...] = value
        return self._step, True

    def step(self, actions: Mapping[str, np.ndarray]) -> VecStep:
        self.group_actions(actions, {GROUP: self.arrays[f"actions/{GROUP}"]})
        acts = self.arrays[f"actions/{GROUP}"]
        self.core.check_actions(acts, self.arrays[f"avail/{GROUP}"])
        out = self.core.step(acts)
        arrays = self.arrays
        self._returns += out.reward
        arrays[f"rewards/{GROUP}"][:] = out.reward[:, None]
        done = out.ended | out.timeout
        arrays["terminated"][:] = out.ended
        arrays["truncated"][:] = out.timeout
        idx = np.flatnonzero(done)
        if idx.size:
            self._write_obs(idx, "final_")
            arrays["episode_return"][idx] = self._returns[idx]
            arrays["episode_length"][idx] = self.core.battle.state.steps[idx]
            arrays["episode_won"][idx] = out.won[idx]
            self._returns[idx] = 0.0
            self.core.reset(done)
        self._write_obs(self.core.all, "")
        return self._step

    def _write_obs(self, idx: np.ndarray, prefix: str) -> None:
        everything = idx is self.core.all
        target = self.arrays[f"{prefix}obs/{GROUP}"]
        obs, state, avail = self.core.observe(idx, target if everything else None)
        if not everything:
            target[idx] = obs
        self.arrays[f"{prefix}state"][idx] = state
        self.arrays[f"{prefix}alive/{GROUP}"][idx] = self.core.battle.state.alive[idx, : self.core.n_agents]
        self.arrays[f"{prefix}avail/{GROUP}"][idx] = avail
