"""Replay of whole episodes (off-policy MARL with recurrent agents: IQL, VDN, QMIX).

Episodes are padded to `max_len` steps. Fields declared with `per_state=True` (observations, states, masks)
hold max_len + 1 entries: the observation after the last step too, so targets can bootstrap from it.
Writes and sampling are vectorised over episodes; storage is pre-allocated.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np


class EpisodeReplayBuffer:
    """A ring buffer of `capacity` episodes. `fields`: name -> (per-step shape, dtype, per_state)."""

    def __init__(self, capacity: int, max_len: int,
                 fields: Mapping[str, tuple[tuple[int, ...], np.dtype, bool]]) -> None:
        self.capacity, self.max_len = capacity, max_len
        self.data = {name: np.zeros((capacity, max_len + int(per_state), *shape), dtype)
                     for name, (shape, dtype, per_state) in fields.items()}
        self.lengths = np.zeros(capacity, np.int64)
        self.size = 0
        self.pos = 0

    def add(self, episodes: Mapping[str, np.ndarray], lengths: np.ndarray) -> None:
        """Store n episodes: every field shaped [n, max_len(+1), ...], `lengths` [n] steps each."""
        n = len(lengths)
        if n == 0:
            return
        slots = (self.pos + np.arange(n)) % self.capacity
        for name, value in episodes.items():
            self.data[name][slots] = value
        self.lengths[slots] = lengths
        self.pos = int((self.pos + n) % self.capacity)
        self.size = min(self.size + n, self.capacity)

    def sample(self, batch_size: int, rng: np.random.Generator) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Uniformly sampled episodes, trimmed to the longest one in the batch: (fields, step mask [B, T])."""
        idx = rng.integers(0, self.size, batch_size)
        lengths = self.lengths[idx]
        t = int(lengths.max())
        batch = {name: arr[idx, : t + (arr.shape[1] - self.max_len)] for name, arr in self.data.items()}
        mask = np.arange(t)[None, :] < lengths[:, None]
        return batch, mask

    def take_all(self) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Every stored episode (trimmed like `sample`), then empty the buffer: on-policy training."""
        lengths = self.lengths[: self.size]
        t = int(lengths.max())
        batch = {name: arr[: self.size, : t + (arr.shape[1] - self.max_len)].copy() for name, arr in self.data.items()}
        mask = np.arange(t)[None, :] < lengths[:, None]
        self.size = self.pos = 0
        return batch, mask

    def state(self) -> dict[str, np.ndarray]:
        """Everything needed to restore the buffer (for checkpoints, saved as .npz)."""
        return {**{f"buffer/{k}": v[: self.size] for k, v in self.data.items()},
                "buffer/lengths": self.lengths[: self.size], "buffer/pos": np.array(self.pos)}

    def load_state(self, arrays: Mapping[str, np.ndarray]) -> None:
        lengths = arrays["buffer/lengths"]
        self.size = len(lengths)
        self.lengths[: self.size] = lengths
        for k in self.data:
            self.data[k][: self.size] = arrays[f"buffer/{k}"]
        self.pos = int(arrays["buffer/pos"])
