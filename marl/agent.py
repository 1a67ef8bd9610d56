"""What the runners, the evaluation and the trainer expect of a multi-agent agent: the seams, typed.

Every agent acts for all of an env's groups at once from dict-keyed inputs ({group name: [n_envs, n_agents, ...]})
and carries recurrent states per group as an (actor, critic) pair of [n_envs, n_agents, hidden] tensors (hidden
0 for MLP policies; value-based agents carry their one state twice).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, Generic, Literal, NamedTuple, Protocol, TypeVar

import numpy as np
import torch

from core.run_state import RunState
from envs.spec import EnvSpec
from marl.episode_batch import EpisodeBatch
from marl.exploration import EpsilonSchedule, annealed_epsilon

Hidden = tuple[torch.Tensor, torch.Tensor]
"""A group's recurrent states (actor, critic), each [n_envs, n_agents, hidden]."""


class GroupAction(NamedTuple):
    """What `act` returns for one group."""

    actions: torch.Tensor  # [n_envs, n_agents, *action_shape]
    hidden: Hidden  # the recurrent states after this step
    logp: torch.Tensor | None = None  # log-probabilities of `actions` (actor-critic agents)
    value: torch.Tensor | None = None  # the critic's (normalised) values, when asked for


class Policy(Protocol):
    """Anything that acts in a multi-agent vector env (the learners, RandomAgent)."""

    spec: EnvSpec

    def initial_hidden(self, n_envs: int) -> dict[str, Hidden]:
        """Zero recurrent states per group for `n_envs` envs."""
        ...

    def act(self, obs: Mapping[str, np.ndarray], avail: Mapping[str, np.ndarray | None], state: np.ndarray,
            hidden: Mapping[str, Hidden], starts: np.ndarray, deterministic: bool = False,
            with_value: bool = True) -> dict[str, GroupAction]:
        """One step for every group: greedy if `deterministic`, else exploring. `starts` [n_envs] marks envs whose
        observation begins an episode (their recurrent states are reset first)."""
        ...


class Agent(Policy, Protocol):
    """The agent: a policy that trains (its config, device, checkpointable state). Every learner is one: those
    trained from rollouts (marl.onpolicy.ActorCriticAgent) and those trained from whole episodes (EpisodeAgent)."""

    cfg: Any
    device: torch.device

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


Learner = Agent  # the name before issue 42; kept for user code that imports it (README, "Where new things go")


def zero_hidden(spec: EnvSpec, n_envs: int, size: int, device: torch.device) -> dict[str, Hidden]:
    """Zero recurrent states (actor, critic) of `size` units for every group (size 0: an MLP policy)."""
    return {g.name: (torch.zeros(n_envs, g.n_agents, size, device=device),
                     torch.zeros(n_envs, g.n_agents, size, device=device)) for g in spec.groups}


class EpisodeAgentConfig(EpsilonSchedule, Protocol):
    """The config keys EpisodeRunner and EpisodeAgent read (COMAConfig, ValueDecompositionConfig)."""

    rollout_steps: int
    max_episode_len: int
    policy: Literal["mlp", "gru"]
    rnn_hidden: int


C = TypeVar("C", bound=EpisodeAgentConfig)


class EpisodeAgent(ABC, Generic[C]):
    """Base of the agents trained from whole episodes (COMA, IQL/VDN/QMIX; see marl.episodes): one recurrent
    state per agent (carried in both halves of Hidden) and exploration with an epsilon annealed by env steps."""

    spec: EnvSpec
    cfg: C
    device: torch.device
    run: RunState

    @property
    def epsilon(self) -> float:
        return annealed_epsilon(self.cfg, self.run.clock.env_steps)

    def initial_hidden(self, n_envs: int) -> dict[str, Hidden]:
        return zero_hidden(self.spec, n_envs, self.cfg.rnn_hidden if self.cfg.policy == "gru" else 0, self.device)

    @abstractmethod
    def act(self, obs: Mapping[str, np.ndarray], avail: Mapping[str, np.ndarray | None], state: np.ndarray,
            hidden: Mapping[str, Hidden], starts: np.ndarray, deterministic: bool = False,
            with_value: bool = True) -> dict[str, GroupAction]:
        """As Policy.act (`with_value` is ignored: these agents have no state-value critic)."""

    @abstractmethod
    def update(self, batch: EpisodeBatch) -> dict[str, float]:
        """One gradient step on whole episodes; returns metrics."""

    @abstractmethod
    def state_dict(self) -> dict[str, Any]: ...

    @abstractmethod
    def load_state_dict(self, state: dict[str, Any]) -> None: ...
