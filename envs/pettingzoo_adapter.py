"""Adapter from any PettingZoo env (ParallelEnv, or AEC via PettingZoo's converter) to the vector-env rows.

It keeps a fixed agent order; an agent that is gone (dead) keeps its slot with a zero observation, only the
no-op action available and `alive=False`. Action masks are read from dict observations with
"observation"/"action_mask" keys or from infos[agent]["action_mask"]. The global state is `env.state()`
where the env implements it, else the concatenation of all observations (in group order).
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from gymnasium import spaces
from pettingzoo.utils.conversions import aec_to_parallel
from pettingzoo.utils.env import AECEnv, ParallelEnv

from core.errors import UserError
from envs.spec import EnvSpec, check_action_space, group_agents

WIN_KEYS = ("battle_won", "won", "is_success")


class PettingZooAdapter:
    """Steps one PettingZoo env and writes results into one row of a vector env's arrays.

    `row` arguments map array names (see `envs.vec_env.array_layout`) to this env's row of each array.
    """

    def __init__(self, env: ParallelEnv | AECEnv, name: str = "env", noop_action: int = 0) -> None:
        if isinstance(env, AECEnv):
            env = aec_to_parallel(env)
        if not hasattr(env, "possible_agents") or not hasattr(env, "step"):
            raise UserError(f"{name}: factory returned {type(env).__name__}, not a PettingZoo ParallelEnv or AECEnv")
        self.env = env
        self.noop_action = noop_action
        agents = tuple(env.possible_agents)
        self._masked_obs: set[str] = set()
        obs_shapes: dict[str, tuple[int, ...]] = {}
        self._low_high: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        action_spaces = {}
        for agent in agents:
            space = env.observation_space(agent)
            if isinstance(space, spaces.Dict) and "observation" in space.spaces and "action_mask" in space.spaces:
                self._masked_obs.add(agent)
                space = space["observation"]
            if not isinstance(space, spaces.Box):
                raise UserError(f"{name}: agent {agent} has observation space {space}; only Box is supported")
            obs_shapes[agent] = tuple(space.shape)
            action_spaces[agent] = check_action_space(agent, env.action_space(agent))
            if isinstance(action_spaces[agent], spaces.Box):
                self._low_high[agent] = (action_spaces[agent].low, action_spaces[agent].high)
        groups = group_agents(agents, obs_shapes, action_spaces)
        self._state_fn = self._find_state_fn(env)
        state_shape = self._state_shape(env, groups)
        limit = getattr(env, "max_cycles", None) or getattr(getattr(env, "unwrapped", None), "max_cycles", None)
        self.spec = EnvSpec(agents=agents, groups=groups, state_shape=state_shape, name=name,
                            episode_limit=int(limit) if limit else None)
        self._slots = self.spec.agent_slots
        self._discrete = {g.name: g.discrete for g in groups}
        self._ep_return = 0.0
        self._ep_length = 0

    @staticmethod
    def _find_state_fn(env: ParallelEnv):
        state = getattr(env, "state", None)
        if state is None:
            return None
        try:
            env.reset(seed=0)
            value = state()
        except NotImplementedError:
            return None
        return state if value is not None else None

    def _state_shape(self, env: ParallelEnv, groups) -> tuple[int, ...]:
        if self._state_fn is None:
            return (sum(int(np.prod(g.obs_shape)) * g.n_agents for g in groups),)
        return tuple(np.asarray(self._state_fn()).shape)

    # -- writing rows ---------------------------------------------------------------------------------
    def bind(self, row: Mapping[str, np.ndarray]) -> None:
        """Attach this env to its row of the vector env's arrays; per-agent views are resolved once here."""
        self._row = row
        self._views = {p: _RowViews(self.spec, row, p) for p in ("", "final_")}
        self._actions = {a: (row[f"actions/{g}"], i) for a, (g, i) in self._slots.items()}
        self._rewards = {a: (row[f"rewards/{g}"], i) for a, (g, i) in self._slots.items()}
        self._reward_rows = [row[f"rewards/{g.name}"] for g in self.spec.groups]

    def reset(self, seed: int | None) -> None:
        self._start_episode(seed)
        self._row["terminated"][...] = False
        self._row["truncated"][...] = False
        for rewards in self._reward_rows:
            rewards[...] = 0.0

    def step(self) -> None:
        row = self._row
        actions = {}
        for agent in self.env.agents:
            array, i = self._actions[agent]
            if agent in self._low_high:
                low, high = self._low_high[agent]
                actions[agent] = np.clip(array[i], low, high)
            else:
                actions[agent] = int(array[i])
        obs, rewards, terms, truncs, infos = self.env.step(actions)
        for array in self._reward_rows:
            array[...] = 0.0
        for agent, reward in rewards.items():
            array, i = self._rewards[agent]
            array[i] = reward
        self._ep_return += float(sum(rewards.values()))
        self._ep_length += 1
        finished = {a for a in obs if terms.get(a, False) or truncs.get(a, False)}
        live = set(self.env.agents) - finished
        ended = not live
        terminated = ended and not any(truncs.get(a, False) for a in finished)
        row["terminated"][...] = terminated
        row["truncated"][...] = ended and not terminated
        if not ended:
            self._write_obs(obs, infos, live, self._views[""])
            return
        still_alive = {a for a in obs if not terms.get(a, False)}
        self._write_obs(obs, infos, still_alive, self._views["final_"])
        row["episode_return"][...] = self._ep_return
        row["episode_length"][...] = self._ep_length
        row["episode_won"][...] = _won(infos)
        self._start_episode(None)

    def _start_episode(self, seed: int | None) -> None:
        obs, infos = self.env.reset(seed=seed)
        self._ep_return, self._ep_length = 0.0, 0
        self._write_obs(obs, infos, set(self.env.agents), self._views[""])

    def _write_obs(self, obs: Mapping[str, Any], infos: Mapping[str, Any], alive: set[str], views: "_RowViews") -> None:
        """Fill obs, alive, avail (not for final_*) and state of every slot from one PettingZoo result."""
        views.clear(self.noop_action)
        for agent, value in obs.items():
            if agent not in alive:
                continue
            mask = None
            if agent in self._masked_obs:
                mask, value = value["action_mask"], value["observation"]
            elif isinstance(infos.get(agent), Mapping):
                mask = infos[agent].get("action_mask")
            views.obs[agent][...] = value
            alive_row, i = views.alive[agent]
            alive_row[i] = True
            avail = views.avail.get(agent)
            if avail is not None:  # final avail too: double-Q targets of truncated episodes need it
                avail[...] = True if mask is None else np.asarray(mask, dtype=bool)
        if self._state_fn is not None:
            views.state[...] = self._state_fn()
        else:
            views.state[...] = np.concatenate([o.reshape(-1) for o in views.group_obs])

    def close(self) -> None:
        self.env.close()


class _RowViews:
    """Views of one env's row for one prefix ("" = current, "final_" = end of episode), per agent."""

    def __init__(self, spec: EnvSpec, row: Mapping[str, np.ndarray], prefix: str) -> None:
        slots = spec.agent_slots
        self.group_obs = [row[f"{prefix}obs/{g.name}"] for g in spec.groups]
        self.group_alive = [row[f"{prefix}alive/{g.name}"] for g in spec.groups]
        self.group_avail = [row[f"{prefix}avail/{g.name}"] for g in spec.groups if g.discrete]
        self.obs = {a: row[f"{prefix}obs/{g}"][i] for a, (g, i) in slots.items()}
        self.alive = {a: (row[f"{prefix}alive/{g}"], i) for a, (g, i) in slots.items()}
        self.avail = {a: row[f"{prefix}avail/{g}"][i] for a, (g, i) in slots.items() if f"{prefix}avail/{g}" in row}
        self.state = row[f"{prefix}state"]

    def clear(self, noop_action: int) -> None:
        """Every slot dead: zero obs, not alive, only the no-op available."""
        for obs in self.group_obs:
            obs[...] = 0.0
        for alive in self.group_alive:
            alive[...] = False
        for avail in self.group_avail:
            avail[...] = False
            avail[:, noop_action] = True


def _won(infos: Mapping[str, Any]) -> float:
    """1.0/0.0 from the first win flag found in any agent's info, NaN if the env reports none."""
    for info in infos.values():
        if isinstance(info, Mapping):
            for key in WIN_KEYS:
                if key in info:
                    return float(bool(info[key]))
    return float("nan")
