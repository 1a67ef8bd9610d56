"""Static description of a multi-agent env as the algorithms see it: agents, groups, shapes."""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from gymnasium import spaces

from core.errors import UserError


class EnvContractError(UserError):
    """An env's declaration or output contradicts the env contract (its spaces, its agents); the message names
    the env, the agent and the field."""


@dataclass(frozen=True)
class AgentGroup:
    """Agents with identical observation and action spaces; their data is stacked [n_envs, n_agents, ...]."""

    name: str
    agents: tuple[str, ...]
    obs_shape: tuple[int, ...]
    action_space: spaces.Discrete | spaces.Box

    @property
    def n_agents(self) -> int:
        return len(self.agents)

    @property
    def discrete(self) -> bool:
        return isinstance(self.action_space, spaces.Discrete)

    @property
    def n_actions(self) -> int:
        """Number of discrete actions, or the flat size of a Box action."""
        space = self.action_space
        if isinstance(space, spaces.Discrete):
            return int(space.n)
        return int(np.prod(space.shape))

    @property
    def action_shape(self) -> tuple[int, ...]:
        space = self.action_space
        return () if isinstance(space, spaces.Discrete) else tuple(space.shape)

    @property
    def action_dtype(self) -> type:
        return np.int64 if self.discrete else np.float32


@dataclass(frozen=True)
class EnvSpec:
    """Agents in a fixed order, split into groups, plus the global state's shape."""

    agents: tuple[str, ...]
    groups: tuple[AgentGroup, ...]
    state_shape: tuple[int, ...]
    name: str = "env"
    episode_limit: int | None = None  # the most steps an episode can last, where the env says

    def __post_init__(self) -> None:
        if not self.agents:
            raise EnvContractError(f"env {self.name} has no agents (possible_agents is empty)")
        if self.episode_limit is not None and self.episode_limit < 1:
            raise EnvContractError(f"env {self.name}: the episode limit must be at least 1 step, got "
                                   f"{self.episode_limit} (set by its episode_limit / max_cycles option)")

    def group(self, name: str) -> AgentGroup:
        for group in self.groups:
            if group.name == name:
                return group
        raise KeyError(name)

    @property
    def agent_slots(self) -> dict[str, tuple[str, int]]:
        """agent -> (group name, index inside the group)."""
        return {a: (g.name, i) for g in self.groups for i, a in enumerate(g.agents)}


def check_action_space(agent: str, space: spaces.Space) -> spaces.Discrete | spaces.Box:
    """Accept Discrete (starting at 0) and bounded-or-not Box action spaces; reject the rest clearly."""
    if isinstance(space, spaces.Discrete):
        if int(space.start) != 0:
            raise EnvContractError(f"agent {agent}: Discrete action spaces must start at 0 (start={space.start})")
        if int(space.n) < 1:
            raise EnvContractError(f"agent {agent}: its Discrete action space has no actions")
        return space
    if isinstance(space, spaces.Box):
        if int(np.prod(space.shape)) < 1:
            raise EnvContractError(f"agent {agent}: its Box action space has shape {space.shape}, no values")
        return space
    raise EnvContractError(f"agent {agent}: unsupported action space {space}; use Discrete or Box")


def group_agents(
    agents: tuple[str, ...],
    obs_shapes: dict[str, tuple[int, ...]],
    action_spaces: Mapping[str, spaces.Discrete | spaces.Box],
) -> tuple[AgentGroup, ...]:
    """Group agents whose obs shape and action space are identical, keeping first-appearance order.

    A group is named after its first agent with a trailing `_<number>` removed (agent_0 -> agent).
    """
    buckets: dict[tuple, list[str]] = {}
    for agent in agents:
        key = (obs_shapes[agent], _space_key(action_spaces[agent]))
        buckets.setdefault(key, []).append(agent)
    groups, used = [], set()
    for members in buckets.values():
        base = re.sub(r"_?\d+$", "", members[0]) or members[0]
        name, k = base, 1
        while name in used:
            k += 1
            name = f"{base}{k}"
        used.add(name)
        first = members[0]
        groups.append(AgentGroup(name, tuple(members), obs_shapes[first], action_spaces[first]))
    return tuple(groups)


def _space_key(space: spaces.Discrete | spaces.Box) -> tuple:
    if isinstance(space, spaces.Discrete):
        return ("discrete", int(space.n))
    return ("box", tuple(space.shape), space.low.tobytes(), space.high.tobytes())
