"""Whole episodes as the episode learners take them (COMA, IQL/VDN/QMIX): one typed, time-major batch.

The episode replay buffer stores flat string-keyed fields (their names are checkpoint keys, so they stay);
`episode_batch` reads them once, where the buffer is sampled, so a learner names fields that mypy checks.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import torch

from envs.spec import EnvSpec

Field = tuple[tuple[int, ...], np.dtype, bool]
"""An episode buffer field: (per-step shape, dtype, per_state: also recorded after the last step)."""


def episode_fields(spec: EnvSpec) -> dict[str, Field]:
    """The episode buffer's fields for `spec`'s (discrete) groups."""
    fields: dict[str, Field] = {
        "state": (spec.state_shape, np.dtype(np.float32), True),
        "reward": ((), np.dtype(np.float32), False), "terminated": ((), np.dtype(bool), False)}
    for g in spec.groups:
        n = g.n_agents
        fields[f"obs/{g.name}"] = ((n, *g.obs_shape), np.dtype(np.float32), True)
        fields[f"avail/{g.name}"] = ((n, g.n_actions), np.dtype(bool), True)
        fields[f"alive/{g.name}"] = ((n,), np.dtype(bool), True)
        fields[f"actions/{g.name}"] = ((n,), np.dtype(np.int64), False)
    return fields


@dataclass(frozen=True)
class GroupEpisodes:
    """One group's part of an EpisodeBatch: [T + 1, B, n_agents, ...] per step recorded, [T, ...] per step acted."""

    obs: torch.Tensor  # [T + 1, B, n, *obs_shape]
    avail: torch.Tensor  # [T + 1, B, n, n_actions] bool
    alive: torch.Tensor  # [T + 1, B, n] float: 1 where the agent is alive
    actions: torch.Tensor  # [T, B, n] int64


@dataclass(frozen=True)
class EpisodeBatch:
    """B whole episodes padded to the longest one's T steps, time-major, on the learner's device."""

    groups: dict[str, GroupEpisodes]
    state: torch.Tensor  # [T + 1, B, *state_shape]
    reward: torch.Tensor  # [T, B] the team reward
    terminated: torch.Tensor  # [T, B] float: 1 where the step ended its episode by termination
    mask: torch.Tensor  # [T, B] float: 1 where the step was taken (not padding)
    lengths: torch.Tensor  # [B] int64: steps taken in each episode


def episode_batch(fields: Mapping[str, np.ndarray], mask: np.ndarray, groups: Iterable[str],
                  device: torch.device) -> EpisodeBatch:
    """The typed batch of what an EpisodeReplayBuffer sampled: `fields` [B, T(+1), ...], step `mask` [B, T]."""

    def time_major(x: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(x, device=device).transpose(0, 1)

    return EpisodeBatch(
        groups={name: GroupEpisodes(obs=time_major(fields[f"obs/{name}"]), avail=time_major(fields[f"avail/{name}"]),
                                    alive=time_major(fields[f"alive/{name}"]).float(),
                                    actions=time_major(fields[f"actions/{name}"])) for name in groups},
        state=time_major(fields["state"]), reward=time_major(fields["reward"]),
        terminated=time_major(fields["terminated"]).float(), mask=time_major(mask).float(),
        lengths=torch.as_tensor(mask.sum(1), device=device))
