"""A PettingZoo ParallelEnv face of a natively batched vector env: one env of a batch of one (`envs.make` on
names that only have a vector form, such as `vmas_<scenario>`)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from envs.vec_env import VecEnv, VecStep


class VecParallelEnv(ParallelEnv):
    """Steps `vec_factory(n_envs=1, seed=seed, **options)`; an episode's last step returns its final
    observations and empties `agents`, and the next `reset` starts a new one."""

    metadata = {"name": "vec_parallel", "render_modes": ["rgb_array"]}

    def __init__(self, vec_factory: Callable[..., VecEnv], seed: int | None = None, render_mode: str | None = None,
                 **options: Any) -> None:
        self.vec = vec_factory(n_envs=1, seed=seed, **options)
        self.render_mode = render_mode
        spec = self.vec.spec
        self.possible_agents = list(spec.agents)
        self.agents = list(self.possible_agents)
        slots = spec.agent_slots
        self.observation_spaces = {a: spaces.Box(-np.inf, np.inf, spec.group(slots[a][0]).obs_shape, np.float32)
                                   for a in self.possible_agents}
        self.action_spaces = {a: spec.group(slots[a][0]).action_space for a in self.possible_agents}
        self.state_space = spaces.Box(-np.inf, np.inf, spec.state_shape, np.float32)
        self._last: VecStep | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        self._last = self.vec.reset(seed=seed)
        self.agents = list(self.possible_agents)
        return {a: obs[0].copy() for a, obs in self._last.obs.items()}, {a: {} for a in self.possible_agents}

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        step = self._last = self.vec.step({a: np.asarray(actions[a])[None] for a in self.possible_agents})
        done = bool(step.done[0])
        obs = step.final_obs if done else step.obs
        if done:
            self.agents = []
        everyone = self.possible_agents
        return ({a: obs[a][0].copy() for a in everyone}, {a: float(r[0]) for a, r in step.rewards.items()},
                {a: bool(step.terminated[0]) for a in everyone}, {a: bool(step.truncated[0]) for a in everyone},
                {a: {} for a in everyone})

    def state(self) -> np.ndarray:
        assert self._last is not None, "reset() first"
        return (self._last.final_state if not self.agents else self._last.state)[0].copy()

    def render(self) -> np.ndarray:
        """The env's frame, where its vector env draws one (`render()`: an RGB array)."""
        draw = getattr(self.vec, "render", None)
        if draw is None:
            raise NotImplementedError(f"{type(self.vec).__name__} does not render")
        return draw()

    def close(self) -> None:
        self.vec.close()
