"""On-policy rollout storage and generalised advantage estimation (GAE)."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import DTypeLike

from core.buffers.memory import allocate


class RolloutBuffer:
    """Fixed-length on-policy storage: one pre-allocated array per field, shaped [T, n_envs, *field_shape].

    Fields are declared once (`{name: (shape, dtype)}`); `add` copies a step's arrays into row t with one
    vectorised write per field. Storage that would not fit in memory is refused before it is allocated.
    """

    def __init__(self, n_steps: int, n_envs: int, fields: Mapping[str, tuple[tuple[int, ...], DTypeLike]],
                 hint: str = "lower algo.rollout_steps (or algo.n_steps) or train.n_envs") -> None:
        self.n_steps = n_steps
        self.n_envs = n_envs
        self.data: dict[str, np.ndarray] = allocate(fields, (n_steps, n_envs), "rollout buffer", hint)
        self.t = 0

    def add(self, **values: np.ndarray) -> None:
        """Write one step (every named field, leading axis n_envs) at the current row."""
        if self.t >= self.n_steps:
            raise IndexError("rollout buffer is full; call reset() after using it")
        for name, value in values.items():
            self.data[name][self.t] = value
        self.t += 1

    @property
    def full(self) -> bool:
        return self.t == self.n_steps

    def reset(self) -> None:
        self.t = 0

    def __getitem__(self, name: str) -> np.ndarray:
        return self.data[name]


def compute_gae(
    rewards: np.ndarray,
    values: np.ndarray,
    next_values: np.ndarray,
    continues: np.ndarray,
    gamma: float,
    lam: float | np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """GAE(lambda) over a [T, ...] rollout; returns (advantages, returns).

    next_values[t] is the value of the state reached after step t: V(s_{t+1}) within an episode, the value
    of the true final observation when the episode was truncated, 0 when it terminated.
    continues[t] (broadcast against rewards) is 0 where the episode ended at step t (terminated or truncated),
    which stops the advantage recursion from reaching across an episode boundary. lam may vary per element
    (broadcast against rewards).
    """
    deltas = rewards + gamma * next_values - values
    decay = gamma * lam * continues
    adv = np.zeros_like(deltas)
    running = np.zeros_like(deltas[0])
    for t in range(deltas.shape[0] - 1, -1, -1):
        running = deltas[t] + decay[t] * running
        adv[t] = running
    return adv, adv + values
