"""In-process vector env over PettingZoo adapters."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from envs.pettingzoo_adapter import PettingZooAdapter
from envs.vec_env import VecEnv, VecStep, allocate, array_layout


def row_views(arrays: Mapping[str, np.ndarray], index: int) -> dict[str, np.ndarray]:
    """Writable views of env `index`'s row in every array (1-D arrays give a length-1 view)."""
    return {k: (a[index] if a.ndim > 1 else a[index:index + 1]) for k, a in arrays.items()}


class SyncVecEnv(VecEnv):
    """Steps n_envs PettingZoo envs one after another in this process."""

    def __init__(self, factories: Sequence[Callable[[], object]], name: str = "env", seed: int | None = None) -> None:
        self.adapters = [PettingZooAdapter(f(), name=name) for f in factories]
        self.spec = self.adapters[0].spec
        self.n_envs = len(self.adapters)
        self.default_seed = seed
        self.arrays = allocate(array_layout(self.spec, self.n_envs))
        for i, adapter in enumerate(self.adapters):
            adapter.bind(row_views(self.arrays, i))
        self._actions = {g.name: self.arrays[f"actions/{g.name}"] for g in self.spec.groups}
        self._step = VecStep(self.spec, self.arrays)

    def reset(self, seed: int | None = None) -> VecStep:
        seed = self.default_seed if seed is None else seed
        for i, adapter in enumerate(self.adapters):
            adapter.reset(None if seed is None else seed + i)
        return self._step

    def step(self, actions: Mapping[str, np.ndarray]) -> VecStep:
        self.group_actions(actions, self._actions)
        for adapter in self.adapters:
            adapter.step()
        return self._step

    def close(self) -> None:
        for adapter in self.adapters:
            adapter.close()
