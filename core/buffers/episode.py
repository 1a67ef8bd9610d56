"""Replay of whole episodes (off-policy MARL with recurrent agents: IQL, VDN, QMIX), on the shared ReplayBuffer.

Episodes are padded to `max_len` steps. Fields declared with `per_state=True` (observations, states, masks)
hold max_len + 1 entries: the observation after the last step too, so targets can bootstrap from it.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from core.buffers.replay import ReplayBuffer


class EpisodeReplayBuffer(ReplayBuffer):
    """A ring buffer of `capacity` episodes. `fields`: name -> (per-step shape, dtype, per_state)."""

    def __init__(self, capacity: int, max_len: int,
                 fields: Mapping[str, tuple[tuple[int, ...], np.dtype, bool]]) -> None:
        layout = {
            name: ((max_len + int(per_state), *shape), dtype) for name, (shape, dtype, per_state) in fields.items()
        }
        super().__init__(capacity, {**layout, "lengths": ((), np.int64)}, "episode replay buffer",
                         "lower algo.buffer_size or algo.max_episode_len")
        self.max_len = max_len

    @property
    def lengths(self) -> np.ndarray:
        return self.data["lengths"]

    def add(self, episodes: Mapping[str, np.ndarray], lengths: np.ndarray) -> np.ndarray:  # type: ignore[override]
        """Store n episodes: every field shaped [n, max_len(+1), ...], `lengths` [n] steps each."""
        return super().add({**episodes, "lengths": lengths}, len(lengths))

    def sample(self, batch_size: int, rng: np.random.Generator) -> tuple[dict[str, np.ndarray], np.ndarray]:  # type: ignore[override]
        """Uniformly sampled episodes, trimmed to the longest one in the batch: (fields, step mask [B, T])."""
        return self._trimmed(self.sample_indices(batch_size, rng))

    def take_all(self) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Every stored episode (trimmed like `sample`), then empty the buffer: on-policy training."""
        batch = self._trimmed(np.arange(self.size))
        self.size = self.pos = 0
        return batch

    def _trimmed(self, idx: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        lengths = self.lengths[idx]
        t = int(lengths.max())
        batch = {name: arr[idx, : t + (arr.shape[1] - self.max_len)]
                 for name, arr in self.data.items() if name != "lengths"}
        mask = np.arange(t)[None, :] < lengths[:, None]
        return batch, mask
