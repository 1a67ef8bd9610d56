"""PettingZoo ParallelEnv face of the simulator: the generic SMAC-API adapter over the drop-in env."""
from __future__ import annotations

from typing import Any, ClassVar

from envs.smac.compat.starcraft2_env import StarCraft2Env
from envs.smac_api import SMACAPIParallelEnv


class SMACParallelEnv(SMACAPIParallelEnv):
    """`envs.make("smac_3m")`: passes pettingzoo.test.parallel_api_test; timeouts truncate."""

    metadata: ClassVar[dict[str, Any]] = {"name": "smac_v1", "render_modes": ["rgb_array"], "is_parallelizable": True}

    def __init__(self, map_name: str = "3m", seed: int | None = None, episode_limit: int | None = None,
                 render_mode: str | None = None, **flags: Any) -> None:
        env = StarCraft2Env(map_name=map_name, seed=seed, episode_limit=episode_limit, continuing_episode=True,
                            **flags)
        super().__init__(env, render_mode, reseed=env.reseed)
        self.map_name = map_name
