"""One-battle wrapper around SMACBatch shared by the PettingZoo face and the drop-in StarCraft2Env face."""
from __future__ import annotations

import numpy as np

from core.errors import UserError
from envs.smac.core import RewardConfig, SMACBatch, StepOutcome
from envs.smac.features import FeatureFlags
from envs.smac.maps import get_map
from envs.smac.scenarios import SCENARIOS

REWARD_KEYS = frozenset(RewardConfig.__dataclass_fields__)
FLAG_KEYS = frozenset(FeatureFlags.__dataclass_fields__)


def make_batch(map_name: str, n_envs: int, seed: int | None, episode_limit: int | None, flags: dict) -> SMACBatch:
    """SMACBatch from SMAC-style keyword flags (plus heuristic_ai); unknown flags raise UserError naming them.
    `map_name` is a SMAC map or a generated scenario (smaclite_<race>_<n>_vs_<m>, see envs.smac.scenarios)."""
    flags = dict(flags)
    heuristic_ai = bool(flags.pop("heuristic_ai", False))
    if map_name in SCENARIOS:
        smac_map, roster, defaults = SCENARIOS[map_name].build()
        flags = {**defaults, **flags}
    else:
        smac_map, roster = get_map(map_name), None
    unknown = sorted(set(flags) - REWARD_KEYS - FLAG_KEYS)
    if unknown:
        raise UserError(f"unknown SMAC option(s) {', '.join(unknown)}; valid: "
                        f"{', '.join(sorted(REWARD_KEYS | FLAG_KEYS))}")
    return SMACBatch(smac_map, n_envs, seed,
                     FeatureFlags(**{k: v for k, v in flags.items() if k in FLAG_KEYS}),
                     RewardConfig(**{k: v for k, v in flags.items() if k in REWARD_KEYS}), episode_limit,
                     heuristic_ai, roster)


class SingleBattle:
    """One battle without auto-reset: the current obs/state/avail are cached after every reset/step."""

    def __init__(self, map_name: str, seed: int | None = None, episode_limit: int | None = None, **flags) -> None:
        self.core = make_batch(map_name, 1, seed, episode_limit, flags)
        self.n_agents, self.n_actions = self.core.n_agents, self.core.n_actions
        self.obs = self.state = self.avail = None
        self.done = True

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.core.seed(seed)
        self.core.reset(np.ones(1, bool))
        self.done = False
        self._refresh()

    def step(self, actions: np.ndarray) -> StepOutcome:
        if self.done:
            raise RuntimeError("the episode is over; call reset()")
        actions = np.asarray(actions, dtype=np.int64).reshape(1, -1)
        self.core.check_actions(actions, self.avail[None])
        out = self.core.step(actions)
        self.done = bool(out.ended[0] or out.timeout[0])
        self._refresh()
        return out

    def _refresh(self) -> None:
        obs, state, avail = self.core.observe()
        self.obs, self.state, self.avail = obs[0], state[0], avail[0]
