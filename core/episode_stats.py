"""What a vector env reports about the episodes that ended, and how a runner passes it on to the loop."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np


class EpisodeStats:
    """Episodes that finished during one vector step: arrays of equal length."""

    __slots__ = ("lengths", "returns", "wins")

    def __init__(self, returns: np.ndarray, lengths: np.ndarray, wins: np.ndarray) -> None:
        self.returns = returns
        self.lengths = lengths
        self.wins = wins  # float: 1.0 won, 0.0 not won, NaN where the env has no notion of winning

    def __len__(self) -> int:
        return len(self.returns)


OnStep = Callable[[int, EpisodeStats | None], None]
"""What a runner calls after each vector step: (env steps taken, the episodes that ended, if any)."""
