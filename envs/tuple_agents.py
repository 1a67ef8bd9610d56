"""Multi-agent gymnasium envs as PettingZoo ParallelEnvs.

lbforaging, rware and many users' own envs are one `gymnasium.Env` whose observation and action spaces are
`Tuple`s with one entry per agent; `step` takes a tuple of actions and returns a list of rewards (or one shared
reward) and one `terminated`/`truncated` flag (or one per agent). `TupleAgentsEnv` names the agents `agent_0`,
`agent_1`, ... in tuple order and speaks the ParallelEnv API that the vector envs adapt, so such an env works
wherever a PettingZoo env does, a user's `module:factory` included.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.wrappers import TimeLimit
from pettingzoo.utils.env import ParallelEnv


def tuple_spaces(env: Any) -> tuple[spaces.Tuple, spaces.Tuple] | None:
    """`env`'s observation and action spaces if it is a gymnasium env with one of each per agent, as Tuples."""
    if not isinstance(env, gymnasium.Env):
        return None
    obs, act = env.observation_space, env.action_space
    if isinstance(obs, spaces.Tuple) and isinstance(act, spaces.Tuple) and len(obs.spaces) == len(act.spaces) > 0:
        return obs, act
    return None


def is_tuple_agents(env: Any) -> bool:
    return tuple_spaces(env) is not None


def _time_limit(env: gymnasium.Env) -> int | None:
    """The steps of a gymnasium TimeLimit around `env` (built by hand or by gymnasium.make), if any."""
    layer: Any = env
    while isinstance(layer, gymnasium.Wrapper):
        if isinstance(layer, TimeLimit):
            return int(layer._max_episode_steps)
        layer = layer.env
    return getattr(env.spec, "max_episode_steps", None)


class TupleAgentsEnv(ParallelEnv):
    """`env`'s agents as `agent_<i>`; `max_cycles` is its episode limit in steps, where it has one (read from a
    gymnasium TimeLimit if not given)."""

    metadata = {"name": "tuple_agents"}

    def __init__(self, env: gymnasium.Env, max_cycles: int | None = None) -> None:
        found = tuple_spaces(env)
        if found is None:
            raise TypeError(f"{type(env).__name__} does not have Tuple observation and action spaces of one length")
        self.env = env
        self.possible_agents = [f"agent_{i}" for i in range(len(found[0].spaces))]
        self.agents = list(self.possible_agents)
        self.observation_spaces = dict(zip(self.possible_agents, found[0].spaces, strict=True))
        self.action_spaces = dict(zip(self.possible_agents, found[1].spaces, strict=True))
        self.max_cycles = max_cycles if max_cycles is not None else _time_limit(env)

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        return self._per_agent(obs), {a: info for a in self.possible_agents}

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        joint = tuple(actions.get(a, 0) for a in self.possible_agents)  # an agent already done sends a no-op
        obs, rewards, terminated, truncated, info = self.env.step(joint)
        terms, truncs = self._per_agent(terminated), self._per_agent(truncated)
        if all(terms[a] or truncs[a] for a in self.agents):
            self.agents = []
        return (self._per_agent(obs), self._per_agent(rewards), terms, truncs,
                {a: info for a in self.possible_agents})

    def _per_agent(self, value: Any) -> dict[str, Any]:
        """One entry per agent from a sequence with one per agent, else the same value for each."""
        if isinstance(value, (Sequence, np.ndarray)) and len(value) == len(self.possible_agents):
            return dict(zip(self.possible_agents, value, strict=True))
        return {a: value for a in self.possible_agents}

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()
