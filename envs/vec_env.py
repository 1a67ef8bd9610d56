"""The vector-env interface every algorithm consumes, and the array layout behind it.

A vector env steps n_envs copies of an env together and returns a `VecStep` of dict-keyed arrays with a
leading n_envs axis. Internally each agent group's data is stacked ([n_envs, n_agents, ...]) so that one
network call serves the whole group; `VecStep.obs` etc. give per-agent views of the same memory.

Arrays in a `VecStep` are owned by the vector env and overwritten by the next `step`/`reset`: copy what
you keep (the rollout buffers do).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from core.episode_stats import EpisodeStats
from envs.spec import EnvSpec

Allocator = Callable[[tuple[int, ...], np.dtype], np.ndarray]


def array_layout(spec: EnvSpec, n_envs: int) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Names, shapes and dtypes of every array a vector env exposes (and its workers write into)."""
    layout: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
    for g in spec.groups:
        n = (n_envs, g.n_agents)
        layout[f"obs/{g.name}"] = ((*n, *g.obs_shape), np.dtype(np.float32))
        layout[f"final_obs/{g.name}"] = ((*n, *g.obs_shape), np.dtype(np.float32))
        layout[f"alive/{g.name}"] = (n, np.dtype(bool))
        layout[f"final_alive/{g.name}"] = (n, np.dtype(bool))
        layout[f"rewards/{g.name}"] = (n, np.dtype(np.float32))
        layout[f"actions/{g.name}"] = ((*n, *g.action_shape), np.dtype(g.action_dtype))
        if g.discrete:
            layout[f"avail/{g.name}"] = ((*n, g.n_actions), np.dtype(bool))
            layout[f"final_avail/{g.name}"] = ((*n, g.n_actions), np.dtype(bool))
    layout["state"] = ((n_envs, *spec.state_shape), np.dtype(np.float32))
    layout["final_state"] = ((n_envs, *spec.state_shape), np.dtype(np.float32))
    layout["terminated"] = ((n_envs,), np.dtype(bool))
    layout["truncated"] = ((n_envs,), np.dtype(bool))
    layout["episode_return"] = ((n_envs,), np.dtype(np.float64))
    layout["episode_length"] = ((n_envs,), np.dtype(np.int64))
    layout["episode_won"] = ((n_envs,), np.dtype(np.float32))
    return layout


def allocate(layout: Mapping[str, tuple[tuple[int, ...], np.dtype]], allocator: Allocator | None = None
             ) -> dict[str, np.ndarray]:
    """Allocate zeroed arrays for a layout (NumPy by default, or shared memory via `allocator`)."""
    alloc = allocator or (lambda shape, dtype: np.zeros(shape, dtype))
    return {name: alloc(shape, dtype) for name, (shape, dtype) in layout.items()}


class VecStep:
    """The result of `reset`/`step`: views of the vector env's arrays.

    Group-stacked (what algorithms use): `group_obs[g]` [n_envs, n_g, *obs], `group_avail[g]`
    [n_envs, n_g, n_actions] (None for Box actions), `group_alive[g]`, `group_rewards[g]` [n_envs, n_g].
    Per agent (the documented contract): `obs`, `avail_actions`, `alive`, `rewards` dicts of
    agent -> [n_envs, ...]. Global: `state` [n_envs, *state], `terminated`, `truncated` [n_envs].
    For envs where `done` is true this step, `final_obs`/`final_state`/`final_alive`/`final_avail` hold the last
    observation of the episode that ended (the returned obs already belong to the next episode), and
    `episode_return`/`episode_length`/`episode_won` describe it (`episode_won` is NaN where the env has no wins).
    """

    def __init__(self, spec: EnvSpec, arrays: Mapping[str, np.ndarray]) -> None:
        self.spec = spec
        self.arrays = arrays
        names = [g.name for g in spec.groups]
        self.group_obs = {g: arrays[f"obs/{g}"] for g in names}
        self.group_avail = {g: arrays.get(f"avail/{g}") for g in names}
        self.group_alive = {g: arrays[f"alive/{g}"] for g in names}
        self.group_rewards = {g: arrays[f"rewards/{g}"] for g in names}
        self.final_group_obs = {g: arrays[f"final_obs/{g}"] for g in names}
        self.final_group_alive = {g: arrays[f"final_alive/{g}"] for g in names}
        self.final_group_avail = {g: arrays.get(f"final_avail/{g}") for g in names}
        self.state = arrays["state"]
        self.final_state = arrays["final_state"]
        self.terminated = arrays["terminated"]
        self.truncated = arrays["truncated"]
        self.episode_return = arrays["episode_return"]
        self.episode_length = arrays["episode_length"]
        self.episode_won = arrays["episode_won"]

    @property
    def done(self) -> np.ndarray:
        return self.terminated | self.truncated

    def finished(self) -> EpisodeStats | None:
        """Return, length and win flag of the episodes that ended this step (None if none did)."""
        done = self.done
        if not done.any():
            return None
        return EpisodeStats(self.episode_return[done].copy(), self.episode_length[done].copy(),
                            self.episode_won[done].copy())

    def _per_agent(self, grouped: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {a: grouped[g][:, i] for a, (g, i) in self.spec.agent_slots.items()}

    def _per_agent_optional(self, grouped: Mapping[str, np.ndarray | None]) -> dict[str, np.ndarray | None]:
        """`_per_agent` for groups whose array may be absent (None for each of their agents)."""
        return {a: None if (x := grouped[g]) is None else x[:, i] for a, (g, i) in self.spec.agent_slots.items()}

    @property
    def obs(self) -> dict[str, np.ndarray]:
        return self._per_agent(self.group_obs)

    @property
    def avail_actions(self) -> dict[str, np.ndarray | None]:
        return self._per_agent_optional(self.group_avail)

    @property
    def alive(self) -> dict[str, np.ndarray]:
        return self._per_agent(self.group_alive)

    @property
    def rewards(self) -> dict[str, np.ndarray]:
        return self._per_agent(self.group_rewards)

    @property
    def final_obs(self) -> dict[str, np.ndarray]:
        return self._per_agent(self.final_group_obs)


class VecEnv(ABC):
    """n_envs copies of a multi-agent env stepped together, with same-step auto-reset."""

    spec: EnvSpec
    n_envs: int

    @abstractmethod
    def reset(self, seed: int | None = None) -> VecStep:
        """Reset every env (env i gets seed + i when a seed is given)."""

    @abstractmethod
    def step(self, actions: Mapping[str, np.ndarray]) -> VecStep:
        """Step with actions keyed by group ([n_envs, n_g, ...]) or by agent ([n_envs, ...])."""

    @property
    def exact_resume(self) -> bool:
        """Whether `state_dict` captures every env whole (a resumed run then continues bit for bit)."""
        return False

    def state_dict(self) -> dict[str, Any]:
        """What `load_state_dict` needs to continue; {"exact": False} where the envs cannot save their state."""
        return {"exact": False}

    def load_state_dict(self, state: dict[str, Any], reset_seed: int | None = None) -> tuple[VecStep, bool]:
        """Continue from `state`: (the current step, True) exactly where it was saved, or, where the state was
        not saved whole, (the first step of new episodes reset with `reset_seed`, False)."""
        return self.reset(seed=reset_seed), False

    def close(self) -> None:  # noqa: B027 - a no-op default: most vectorised envs hold nothing to release
        """Release resources (worker processes, files)."""

    def __enter__(self) -> VecEnv:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def group_actions(self, actions: Mapping[str, np.ndarray], out: Mapping[str, np.ndarray]) -> None:
        """Write actions keyed by group or by agent into the group-stacked `out` arrays."""
        groups = {g.name for g in self.spec.groups}
        if set(actions) == groups:
            for name, value in actions.items():
                out[name][...] = value
            return
        slots = self.spec.agent_slots
        if set(actions) != set(slots):
            raise ValueError(f"actions must be keyed by every group {sorted(groups)} or every agent {sorted(slots)};"
                             f" got {sorted(actions)}")
        for agent, value in actions.items():
            g, i = slots[agent]
            out[g][:, i] = value
