"""Adapter from any PettingZoo env (ParallelEnv, or AEC via PettingZoo's converter) to the vector-env rows; a
multi-agent gymnasium env (Tuple spaces, one entry per agent) is first made a ParallelEnv (`tuple_agents`).

It keeps a fixed agent order; an agent that is gone (dead) keeps its slot with a zero observation, only the
no-op action available and `alive=False`. Action masks are read from dict observations with
"observation"/"action_mask" keys or from infos[agent]["action_mask"]. The global state is `env.state()`
where the env implements it, else the concatenation of all observations (in group order).

What the env returns is checked against what it declared, since numpy would otherwise broadcast a scalar or a
length-1 array into an observation row without complaint: shapes and numeric types of observations, masks
and states (EnvContractError), an alive agent with no available action, and NaN/inf in observations, states
and rewards (NonFiniteError). Whole rows are checked with one numpy call per group.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import (
    Callable,
    Mapping,  # not typing's: isinstance against it is several times slower
)
from typing import Any, NoReturn

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo.utils.conversions import aec_to_parallel
from pettingzoo.utils.env import AECEnv, ParallelEnv

from core.errors import NonFiniteError
from core.user_code import user_code
from envs.spec import AgentGroup, EnvContractError, EnvSpec, check_action_space, group_agents
from envs.tuple_agents import TupleAgentsEnv, is_tuple_agents

WIN_KEYS = ("battle_won", "won", "is_success")
NUMERIC_KINDS = "biuf"  # numpy dtype kinds an observation, mask, state or reward may have


class PettingZooAdapter:
    """Steps one PettingZoo env and writes results into one row of a vector env's arrays.

    `row` arguments map array names (see `envs.vec_env.array_layout`) to this env's row of each array.
    """

    def __init__(self, env: ParallelEnv | AECEnv | gymnasium.Env, name: str = "env", noop_action: int = 0) -> None:
        self.name = name
        self.noop_action = noop_action
        with user_code(f"env {name}: setting it up failed"):  # the env's own methods run here
            self._setup(env)
        self._slots = self.spec.agent_slots
        self._ep_return = 0.0
        self._ep_length = 0

    def _setup(self, given: ParallelEnv | AECEnv | gymnasium.Env) -> None:
        env: ParallelEnv = given  # checked below
        if isinstance(given, AECEnv):
            env = aec_to_parallel(given)
        elif is_tuple_agents(given):
            env = TupleAgentsEnv(given)
        if not hasattr(env, "possible_agents") or not hasattr(env, "step"):
            raise EnvContractError(f"env {self.name}: factory returned {type(env).__name__}, not a PettingZoo "
                                   "ParallelEnv or AECEnv, nor a gymnasium env with Tuple observation and action "
                                   "spaces (one entry per agent)")
        self.env = env
        # an env whose agents all get the team reward says so (team_reward = True): its episode return counts
        # that reward once (the mean over agents), not once per agent
        self._team_reward = bool(getattr(env, "team_reward", False))
        agents = tuple(env.possible_agents)
        if not agents:  # before any of the env's methods run (they tend to fail on it first)
            raise EnvContractError(f"env {self.name} has no agents (possible_agents is empty)")
        self._masked_obs: set[str] = set()
        obs_shapes: dict[str, tuple[int, ...]] = {}
        self._low_high: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        action_spaces: dict[str, spaces.Discrete | spaces.Box] = {}
        for agent in agents:
            space = env.observation_space(agent)
            if isinstance(space, spaces.Dict) and "observation" in space.spaces and "action_mask" in space.spaces:
                self._masked_obs.add(agent)
                space = space["observation"]
            if not isinstance(space, spaces.Box):
                raise EnvContractError(f"env {self.name}: agent {agent} has observation space {space}; only Box "
                                       "is supported")
            obs_shapes[agent] = tuple(space.shape)
            action_space = action_spaces[agent] = check_action_space(agent, env.action_space(agent))
            if isinstance(action_space, spaces.Box):
                self._low_high[agent] = (action_space.low, action_space.high)
        groups = group_agents(agents, obs_shapes, action_spaces)
        self._state_fn, state = self._find_state(env)
        state_shape = ((sum(int(np.prod(g.obs_shape)) * g.n_agents for g in groups),) if state is None
                       else tuple(self._checked(state, None, None, "state").shape))
        self.spec = EnvSpec(agents=agents, groups=groups, state_shape=state_shape, name=self.name,
                            episode_limit=self._episode_limit(env))

    @staticmethod
    def _find_state(env: ParallelEnv) -> tuple[Callable[[], Any] | None, Any]:
        """The env's `state` method and its value after a reset, or (None, None) if it has none."""
        state = getattr(env, "state", None)
        if state is None:
            return None, None
        try:
            env.reset(seed=0)
            value = state()
        except NotImplementedError:
            return None, None
        return (state, value) if value is not None else (None, None)

    def _episode_limit(self, env: ParallelEnv) -> int | None:
        limit = getattr(env, "max_cycles", None) or getattr(getattr(env, "unwrapped", None), "max_cycles", None)
        if limit is None:
            return None
        if isinstance(limit, bool) or not isinstance(limit, numbers.Integral):
            raise EnvContractError(f"env {self.name}: max_cycles must be an integer, got {limit!r}")
        return int(limit)

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
            array, i = self._actions[agent] if agent in self._actions else self._stranger(agent, "env.agents")
            if agent in self._low_high:
                low, high = self._low_high[agent]
                actions[agent] = np.clip(array[i], low, high)
            else:
                actions[agent] = int(array[i])
        obs, rewards, terms, truncs, infos = self._mappings(self.env.step(actions), "step()",
                                                            ("observations", "rewards", "terminations",
                                                             "truncations", "infos"))
        total = self._write_rewards(rewards)
        self._ep_return += total / max(len(rewards), 1) if self._team_reward else total
        self._ep_length += 1
        finished = {a for a in obs if terms.get(a, False) or truncs.get(a, False)}
        live = set(self.env.agents) - finished
        ended = not live
        # truncated only where an agent ran out of time without terminating (gymnasium: termination wins)
        terminated = ended and not any(truncs.get(a, False) and not terms.get(a, False) for a in finished)
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
        obs, infos = self._mappings(self.env.reset(seed=seed), "reset()", ("observations", "infos"))
        self._ep_return, self._ep_length = 0.0, 0
        self._write_obs(obs, infos, set(self.env.agents), self._views[""])

    def _write_rewards(self, rewards: Mapping[str, Any]) -> float:
        """Write every agent's reward; returns their sum."""
        for array in self._reward_rows:
            array[...] = 0.0
        total = 0.0
        for agent, reward in rewards.items():
            array, i = self._rewards[agent] if agent in self._rewards else self._stranger(agent, "rewards")
            if type(reward) is not float and (isinstance(reward, bool) or not isinstance(reward, numbers.Real)):
                reward = self._checked(reward, (), agent, "reward").item()
            with np.errstate(over="ignore"):  # a reward beyond float32's range becomes inf: caught below
                array[i] = reward
            total += reward
        for group, array in zip(self.spec.groups, self._reward_rows, strict=True):
            self._check_finite(group, array, "reward")
        return total

    def _write_obs(self, obs: Mapping[str, Any], infos: Mapping[str, Any], alive: set[str], views: _RowViews) -> None:
        """Fill obs, alive, avail and state of every slot from one PettingZoo result, checking each against the
        env's spaces."""
        missing = alive - obs.keys()
        if missing:
            raise EnvContractError(f"env {self.name}: agent {sorted(missing)[0]} is alive (in env.agents) but has "
                                   "no observation")
        views.clear(self.noop_action)
        masked = False
        for agent, value in obs.items():
            if agent not in alive:
                if agent not in self._slots:  # a dead agent's obs is ignored, a stranger's not
                    self._stranger(agent, "observations")
                continue
            mask = None
            if agent in self._masked_obs:
                if not _is_mapping(value) or "observation" not in value or "action_mask" not in value:
                    raise EnvContractError(f"env {self.name}: the observation of agent {agent} must be a dict with "
                                           f"'observation' and 'action_mask' (its space says so), got {value!r}")
                mask, value = value["action_mask"], value["observation"]
            elif _is_mapping(infos.get(agent)):
                mask = infos[agent].get("action_mask")
            target = views.obs[agent] if agent in views.obs else self._stranger(agent, "observations")
            target[...] = self._checked(value, target.shape, agent, "observation")
            alive_row, i = views.alive[agent]
            alive_row[i] = True
            avail = views.avail.get(agent)
            if avail is not None:  # final avail too: double-Q targets of truncated episodes need it
                if mask is None:
                    avail[...] = True
                else:
                    avail[...] = self._checked(mask, avail.shape, agent, "action mask")
                    masked = True
        for group, group_obs in zip(self.spec.groups, views.group_obs, strict=True):
            self._check_finite(group, group_obs, "observation")
        if masked:
            for group, group_avail in views.discrete:
                choices = group_avail.any(-1)
                if not choices.all():  # dead agents always have the no-op: a row without any is an alive agent's
                    raise EnvContractError(f"env {self.name}: the action mask of agent "
                                           f"{group.agents[int(np.argmin(choices))]} has no available action, but "
                                           "the agent is alive")
        if self._state_fn is not None:
            views.state[...] = self._checked(self._state_fn(), views.state.shape, None, "state")
            if not math.isfinite(views.state.sum()) and not np.isfinite(views.state).all():
                bad = views.state[~np.isfinite(views.state)][0]
                raise NonFiniteError(f"env {self.name} returned a non-finite state ({bad})")
        else:
            views.state[...] = np.concatenate([o.reshape(-1) for o in views.group_obs])

    def _checked(self, value: Any, shape: tuple[int, ...] | None, agent: str | None, field: str) -> np.ndarray:
        """`value` as an array, if it is numeric and has the declared `shape` (None: any)."""
        try:
            array = np.asarray(value)
        except (ValueError, TypeError):  # ragged nested lists
            array = np.asarray(None)
        if array.dtype.kind in NUMERIC_KINDS and (shape is None or array.shape == shape):
            return array
        whose = f"{field} of agent {agent}" if agent is not None else field
        if array.dtype.kind not in NUMERIC_KINDS:
            raise EnvContractError(f"env {self.name}: the {whose} is not numeric: {type(value).__name__} "
                                   f"{_short(value)}")
        raise EnvContractError(f"env {self.name}: the {whose} has shape {array.shape}, but the env declared {shape}")

    def _check_finite(self, group: AgentGroup, rows: np.ndarray, field: str) -> None:
        """NonFiniteError naming the first agent of `group` whose row of `rows` holds NaN or inf."""
        if math.isfinite(rows.sum()) or np.isfinite(rows).all():  # one reduction when all is well
            return
        bad = ~np.isfinite(rows.reshape(group.n_agents, -1))
        k = int(np.argmax(bad.any(1)))
        raise NonFiniteError(f"env {self.name} returned a non-finite {field} for agent {group.agents[k]} "
                             f"({rows.reshape(group.n_agents, -1)[k][bad[k]][0]})")

    def _stranger(self, agent: Any, source: str) -> NoReturn:
        raise EnvContractError(f"env {self.name}: {source} names agent {agent!r}, which is not one of "
                               f"possible_agents ({', '.join(self.spec.agents)})")

    def _mappings(self, result: Any, method: str, names: tuple[str, ...]) -> tuple[Mapping[str, Any], ...]:
        """`result` unpacked, if it is a tuple of len(names) dicts keyed by agent."""
        if not isinstance(result, (tuple, list)) or len(result) != len(names):
            raise EnvContractError(f"env {self.name}: {method} must return ({', '.join(names)}), got "
                                   f"{type(result).__name__}")
        for name, value in zip(names, result, strict=True):
            if not _is_mapping(value):
                raise EnvContractError(f"env {self.name}: {method} returned {name} as {type(value).__name__}, not "
                                       "a dict keyed by agent")
        return tuple(result)

    def close(self) -> None:
        self.env.close()


def _is_mapping(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)  # the ABC check costs ~0.3 us; most are dicts


def _short(value: Any, limit: int = 60) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _RowViews:
    """Views of one env's row for one prefix ("" = current, "final_" = end of episode), per agent."""

    def __init__(self, spec: EnvSpec, row: Mapping[str, np.ndarray], prefix: str) -> None:
        slots = spec.agent_slots
        self.group_obs = [row[f"{prefix}obs/{g.name}"] for g in spec.groups]
        self.group_alive = [row[f"{prefix}alive/{g.name}"] for g in spec.groups]
        self.discrete = [(g, row[f"{prefix}avail/{g.name}"]) for g in spec.groups if g.discrete]
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
        for _, avail in self.discrete:
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
