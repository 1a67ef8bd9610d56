"""Observation and action spaces of gymnasium envs as the single-agent learners see them.

Observations (Box, Discrete, MultiBinary, or Dict/Tuple-free nestings of them in a Dict) are stored in the
replay buffer as they come and flattened to one float32 vector per env only when a network reads them.
Continuous actions are handled in [-1, 1] inside the learners and rescaled to the env's bounds on the way out.
"""
from __future__ import annotations

from typing import Any, NoReturn

import numpy as np
from gymnasium import spaces

from core.errors import UserError


def obs_layout(space: spaces.Space) -> Any:
    """The replay-buffer layout of one observation: (shape, dtype), or a dict of them for Dict spaces."""
    if isinstance(space, spaces.Dict):
        return {key: obs_layout(sub) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Discrete):
        return ((), np.dtype(np.int64))
    if isinstance(space, (spaces.Box, spaces.MultiBinary)):
        return (tuple(space.shape), np.dtype(np.float32))
    unsupported(space)


def unsupported(space: spaces.Space) -> NoReturn:
    raise UserError(f"unsupported observation space {space}; use Box, Discrete, MultiBinary or a Dict of them")


def obs_dim(space: spaces.Space) -> int:
    """Length of the flattened float vector a network receives."""
    if isinstance(space, spaces.Dict):
        return sum(obs_dim(sub) for sub in space.spaces.values())
    if isinstance(space, spaces.Discrete):
        return int(space.n)
    if isinstance(space, (spaces.Box, spaces.MultiBinary)):
        return int(np.prod(space.shape))
    unsupported(space)


def flatten_obs(space: spaces.Space, obs: Any) -> np.ndarray:
    """A batch of observations [n, ...] (or a dict of batches) as float32 [n, obs_dim(space)]."""
    if isinstance(space, spaces.Dict):
        return np.concatenate([flatten_obs(sub, obs[key]) for key, sub in space.spaces.items()], axis=1)
    if isinstance(space, spaces.Discrete):
        return np.eye(space.n, dtype=np.float32)[np.asarray(obs) - space.start]
    obs = np.asarray(obs)
    return obs.reshape(len(obs), -1).astype(np.float32, copy=False)


def check_action_space(algo: str, space: spaces.Space, discrete: bool, continuous: bool) -> None:
    """UserError unless `space` is one the algorithm handles (Discrete and/or bounded Box)."""
    if isinstance(space, spaces.Discrete):
        if not discrete:
            raise UserError(f"{algo} needs a continuous (Box) action space, but the env's is {space}; "
                            "use dqn or ppo")
        return
    if isinstance(space, spaces.Box):
        if not continuous:
            raise UserError(f"{algo} needs a Discrete action space, but the env's is {space}; "
                            "use sac, td3, ddpg or ppo")
        if len(space.shape) != 1:
            raise UserError(f"{algo} needs a 1-D Box action space, got shape {space.shape}")
        if not (np.isfinite(space.low).all() and np.isfinite(space.high).all()) and algo != "ppo":
            raise UserError(f"{algo} needs finite action bounds to rescale its [-1, 1] actions; the env's are "
                            f"{space.low}..{space.high}")
        return
    raise UserError(f"{algo} supports Discrete or Box action spaces, not {space}")


class ActionScaler:
    """Maps the learners' [-1, 1] actions to a Box's [low, high]."""

    def __init__(self, space: spaces.Box) -> None:
        self.low = space.low.astype(np.float32)
        self.half = ((space.high - space.low) / 2).astype(np.float32)

    def to_env(self, action: np.ndarray) -> np.ndarray:
        return self.low + (np.clip(action, -1.0, 1.0) + 1.0) * self.half
