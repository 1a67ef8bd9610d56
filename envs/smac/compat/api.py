"""The names client code imports from smac.env and smacv2.env, on the built-in simulator."""
from __future__ import annotations

from typing import Any

from envs.smac.starcraft2_env import MultiAgentEnv, StarCraft2Env

__all__ = ["MultiAgentEnv", "SMACv2Env", "StarCraft2Env", "StarCraftCapabilityEnvWrapper"]
# what smacv2's StarCraft2Env does differently on smac's maps: its reward clips at 0 where smac takes abs(), and
# its observations remember sighted enemies (envs.smac.sighting); the smaclite_* scenarios have both already
SMACV2_ON_SMAC_MAPS = {"reward_positive_part": True, "sighted_enemies": True}


class SMACv2Env(StarCraft2Env):
    """smacv2.env.StarCraft2Env: the simulator's env with smacv2's reward and sighting memory on every map."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**SMACV2_ON_SMAC_MAPS, **kwargs})

    def get_obs_own_feats_size(self) -> int:
        """smacv2 leaves the timestep out of this count (smac counts it)."""
        return super().get_obs_own_feats_size() - int(self.core.features.flags.obs_timestep_number)


class StarCraftCapabilityEnvWrapper(MultiAgentEnv):
    """smacv2's wrapper, keyword arguments only: `env` is a StarCraft2Env playing the capability config on the
    simulator's smaclite_<race>_<n>_vs_<m> scenario (see envs.smac.scenarios.scenario_for), which draws each
    episode's teams and start positions itself; every other method and attribute is the env's."""

    def __init__(self, **kwargs: Any) -> None:
        self.distribution_config = kwargs["capability_config"]
        self.env = SMACv2Env(**{"map_name": "10gen_protoss", **kwargs})

    def __getattr__(self, name: str) -> Any:
        if name == "env":  # not set yet: the constructor failed
            raise AttributeError(name)
        return getattr(self.env, name)

    def reset(self) -> tuple[list[Any], Any]:
        return self.env.reset()

    def step(self, actions: Any) -> tuple[float, bool, dict[str, Any]]:
        return self.env.step(actions)

    def get_obs(self) -> list[Any]:
        return self.env.get_obs()

    def get_state(self) -> Any:
        return self.env.get_state()

    def get_avail_actions(self) -> list[list[int]]:
        return self.env.get_avail_actions()
