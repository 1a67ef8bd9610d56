"""Transition replay: one pre-allocated ring buffer for every off-policy learner, single- and multi-agent.

Storage is declared once as a layout: field name -> (item shape, dtype), or -> a nested layout for dict
observations (`{"obs": {"pos": ((2,), np.float32), "goal": ((), np.int64)}, ...}`). Writes take a batch of
items (the n_envs transitions of one vector step, or whole episodes) and go in with one vectorised copy per
field; sampling returns the same nesting. `state()` / `load_state()` save and restore everything, so a
resumed run continues with the buffer intact. A buffer that would not fit in memory is refused before it is
allocated.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from core.buffers.memory import Layout, allocate


def _write(store: dict[str, Any], values: Mapping[str, Any], slots: np.ndarray) -> None:
    for name, value in values.items():
        if name not in store:
            raise KeyError(f"replay buffer has no field {name!r}; fields: {', '.join(store)}")
        if isinstance(store[name], dict):
            _write(store[name], value, slots)
        else:
            store[name][slots] = value


def _read(store: dict[str, Any], idx: Any) -> dict[str, Any]:
    return {name: _read(arr, idx) if isinstance(arr, dict) else arr[idx] for name, arr in store.items()}


def _leaves(store: dict[str, Any], prefix: str = "") -> list[tuple[str, np.ndarray]]:
    out: list[tuple[str, np.ndarray]] = []
    for name, arr in store.items():
        out.extend(_leaves(arr, f"{prefix}{name}/") if isinstance(arr, dict) else [(f"{prefix}{name}", arr)])
    return out


class ReplayBuffer:
    """A ring buffer of `capacity` items (transitions or whole episodes) laid out as `layout`."""

    def __init__(self, capacity: int, layout: Layout, what: str = "replay buffer",
                 hint: str = "lower algo.buffer_size") -> None:
        if capacity < 1:
            raise ValueError(f"replay buffer capacity must be at least 1, got {capacity}")
        self.capacity = capacity
        self.data = allocate(layout, (capacity,), what, hint)
        self.size = 0
        self.pos = 0

    def add(self, items: Mapping[str, Any], n: int) -> np.ndarray:
        """Store `n` items (every field's leading axis is n); returns the slots written."""
        slots = (self.pos + np.arange(n)) % self.capacity
        if n:
            _write(self.data, items, slots)
            self.pos = int((self.pos + n) % self.capacity)
            self.size = min(self.size + n, self.capacity)
        return slots

    def sample_indices(self, batch_size: int, rng: np.random.Generator) -> np.ndarray:
        if self.size == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        return rng.integers(0, self.size, batch_size)

    def get(self, idx: np.ndarray | slice, names: list[str] | None = None) -> dict[str, Any]:
        """The items at `idx` (of every field, or of the top-level fields `names`), nested like the layout."""
        return _read(self.data if names is None else {name: self.data[name] for name in names}, idx)

    def sample(self, batch_size: int, rng: np.random.Generator) -> dict[str, Any]:
        """`batch_size` items drawn uniformly with replacement."""
        return self.get(self.sample_indices(batch_size, rng))

    def state(self) -> dict[str, np.ndarray]:
        """Every stored item plus the write position, as flat arrays (checkpoints save them as .npz)."""
        return {**{f"buffer/{key}": arr[: self.size] for key, arr in _leaves(self.data)},
                "buffer/pos": np.array(self.pos)}

    def load_state(self, arrays: Mapping[str, np.ndarray]) -> None:
        """Restore what `state()` returned (into a buffer built with the same layout and capacity)."""
        leaves = _leaves(self.data)
        sizes = {len(arrays[f"buffer/{key}"]) for key, _ in leaves}
        if len(sizes) != 1 or next(iter(sizes)) > self.capacity:
            raise ValueError("saved replay buffer does not match this buffer's layout or capacity")
        self.size = sizes.pop()
        for key, arr in leaves:
            arr[: self.size] = arrays[f"buffer/{key}"]
        self.pos = int(arrays["buffer/pos"])
